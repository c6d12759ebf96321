-- Statement $month: Σ FOCUS EffectiveCost and BilledCost of the month per billing currency (focus.costs), the
-- figures every team total together must add up to. billing_month() is the warehouse's macro.
SELECT
    BillingCurrency AS currency,
    count(*) AS focus_rows,
    sum(EffectiveCost) AS effective_cost,
    sum(BilledCost) AS billed_cost
FROM focus.costs
WHERE billing_month(BillingPeriodStart) = $month
GROUP BY ALL
ORDER BY currency NULLS FIRST
