-- The billed figures the advice stage must never move: row counts and money per table and currency of the
-- FOCUS rows, the split, showback and chargeback. advise() compares them before and after its models and
-- rolls back on any difference. No parameters.
SELECT 'focus.costs' AS "table", BillingCurrency AS currency, count(*) AS rows,
    sum(BilledCost) AS billed, sum(EffectiveCost) AS effective
FROM focus.costs GROUP BY ALL
UNION ALL
SELECT 'allocation.cost_split', BillingCurrency, count(*), sum(BilledCost), sum(EffectiveCost)
FROM allocation.cost_split GROUP BY ALL
UNION ALL
SELECT 'showback.job_costs', currency, count(*), sum(billed_cost), sum(total_cost)
FROM showback.job_costs GROUP BY ALL
UNION ALL
SELECT 'showback.team_month', currency, count(*), NULL, sum(total_cost)
FROM showback.team_month GROUP BY ALL
UNION ALL
SELECT 'chargeback.statement_lines', currency, count(*), sum(billed_cost), sum(total_cost)
FROM chargeback.statement_lines GROUP BY ALL
ORDER BY ALL
