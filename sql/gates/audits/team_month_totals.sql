-- Billing months and currencies where Σ showback.team_month.total_cost differs from Σ FOCUS EffectiveCost
-- (or billed_cost from BilledCost). Parameter: $billing_month (the month's first day; NULL: every month, as the
-- publish step checks the analyst file's copy).
WITH focus AS (
    SELECT billing_month(BillingPeriodStart) AS billing_month, BillingCurrency AS currency,
        sum(EffectiveCost) AS effective, sum(BilledCost) AS billed
    FROM focus.costs
    WHERE $billing_month IS NULL OR billing_month(BillingPeriodStart) = $billing_month
    GROUP BY ALL
),

showback AS (
    SELECT billing_month, currency, sum(total_cost) AS effective, sum(billed_cost) AS billed
    FROM showback.team_month
    WHERE $billing_month IS NULL OR billing_month = $billing_month
    GROUP BY ALL
)

SELECT coalesce(f.billing_month, s.billing_month) AS billing_month, coalesce(f.currency, s.currency) AS currency,
    f.effective, s.effective AS showback_effective, f.billed, s.billed AS showback_billed
FROM focus AS f
FULL JOIN showback AS s ON f.billing_month = s.billing_month AND f.currency IS NOT DISTINCT FROM s.currency
WHERE f.effective IS DISTINCT FROM s.effective OR f.billed IS DISTINCT FROM s.billed
