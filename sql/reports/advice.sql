-- The advice stage's ESTIMATED savings of month $month (advice.opportunities), as the statement and `gpuledger
-- advise` show them: every opportunity, ranked within its team and currency (rank 1 = largest), and whether the
-- report lists it (its rank within the configured top, advice.settings). Team NULL: company-wide. Estimates
-- overlap (the same run right-sized and moved to spot), so nothing here is ever added up.
SELECT
    o.team,
    o.currency,
    o.rank,
    o.opportunity,
    o.estimated_saving,
    o.method,
    o.evidence,
    o.run_groups,
    o.rank <= s.top AS listed
FROM advice.opportunities AS o
CROSS JOIN (SELECT max(top) AS top FROM advice.settings) AS s
WHERE o.month = $month
ORDER BY o.team NULLS FIRST, o.currency, o.rank
