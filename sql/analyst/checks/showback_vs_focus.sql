-- Currencies where the published copy's showback total differs from its FOCUS EffectiveCost (or BilledCost):
-- the copy must carry every cent the warehouse's audits reconciled. Runs inside the analyst file.
WITH focus AS (
    SELECT BillingCurrency AS currency, sum(EffectiveCost) AS effective, sum(BilledCost) AS billed
    FROM focus.costs
    GROUP BY ALL
),

showback AS (
    SELECT currency, sum(total_cost) AS effective, sum(billed_cost) AS billed
    FROM showback.team_month
    GROUP BY ALL
)

SELECT coalesce(f.currency, s.currency) AS currency, f.effective, s.effective AS showback_effective, f.billed,
    s.billed AS showback_billed
FROM focus AS f
FULL JOIN showback AS s ON f.currency IS NOT DISTINCT FROM s.currency
WHERE f.effective IS DISTINCT FROM s.effective OR f.billed IS DISTINCT FROM s.billed
