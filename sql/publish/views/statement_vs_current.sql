-- Issued chargeback statements beside today's figures: a restatement of an issued month shows as an
-- adjustment here (and in chargeback.adjustments), never as an edit of the statement finance signed.
WITH latest AS (
    SELECT billing_month, max(version) AS version
    FROM chargeback.statements
    GROUP BY ALL
),

issued AS (
    SELECT l.*
    FROM chargeback.statement_lines AS l
    JOIN latest USING (billing_month, version)
),

current AS (
    SELECT t.billing_month, t.team, t.currency, t.total_cost
    FROM showback.team_month AS t
    WHERE t.billing_month IN (SELECT billing_month FROM latest)
)

SELECT
    coalesce(i.billing_month, c.billing_month) AS billing_month,
    coalesce(i.team, c.team) AS team,
    coalesce(i.currency, c.currency) AS currency,
    i.version AS statement_version,
    coalesce(i.total_cost, 0) AS issued_total,
    coalesce(c.total_cost, 0) AS current_total,
    coalesce(c.total_cost, 0) - coalesce(i.total_cost, 0) AS adjustment
FROM issued AS i
FULL JOIN current AS c
    ON c.billing_month = i.billing_month AND c.team = i.team AND c.currency IS NOT DISTINCT FROM i.currency
ORDER BY ALL
