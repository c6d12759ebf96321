-- Usage charged in a billing period it lies far outside of: late usage from the month before is normal (late
-- monetization) and corrections may reach back any number of months, but a usage row dated more than a month
-- away from its billing period means a mislabelled or corrupted export.
-- Input: temp table delivery_slices (the slices the delivery replaces). Parameter: $id (staged delivery).
WITH staged AS (
    SELECT * FROM focus.cost_rows WHERE x_DeliveryId = $id AND ChargeClass IS NULL
),

far_outside AS (
    SELECT * FROM staged
    WHERE ChargePeriodEnd <= BillingPeriodStart - INTERVAL 1 MONTH
        OR ChargePeriodStart >= BillingPeriodEnd + INTERVAL 1 MONTH
)

SELECT
    f.ProviderName,
    f.BillingAccountId,
    strftime(d.billing_month, '%Y-%m') AS billing_period,
    count(*) || ' row(s) charge usage from ' || strftime(min(f.ChargePeriodStart), '%Y-%m-%d') || ' to '
        || strftime(max(f.ChargePeriodEnd), '%Y-%m-%d') || ', more than a month outside the billing period'
        || ' (e.g. line item ' || min(f.x_SourceLineItemId) || ' of ' || min(f.x_SourceFile) || ')' AS detail
FROM far_outside AS f
JOIN delivery_slices AS d USING (ProviderName, BillingAccountId, BillingPeriodStart)
GROUP BY ALL
ORDER BY ALL
