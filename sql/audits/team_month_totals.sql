-- Billing months and currencies where Σ showback.team_month.total_cost differs from Σ FOCUS EffectiveCost
-- (or billed_cost from BilledCost). Parameter: $billing_month (the month's first day).
WITH focus AS (
    SELECT BillingCurrency AS currency, sum(EffectiveCost) AS effective, sum(BilledCost) AS billed
    FROM focus.costs
    WHERE billing_month(BillingPeriodStart) = $billing_month
    GROUP BY ALL
),

showback AS (
    SELECT currency, sum(total_cost) AS effective, sum(billed_cost) AS billed
    FROM showback.team_month
    WHERE billing_month = CAST($period_start AS DATE)
    GROUP BY ALL
)

SELECT coalesce(f.currency, s.currency) AS currency, f.effective, s.effective AS showback_effective, f.billed,
    s.billed AS showback_billed
FROM focus AS f
FULL JOIN showback AS s ON f.currency IS NOT DISTINCT FROM s.currency
WHERE f.effective IS DISTINCT FROM s.effective OR f.billed IS DISTINCT FROM s.billed
