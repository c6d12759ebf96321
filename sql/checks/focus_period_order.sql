-- Periods are half-open [start, end) and non-empty; a charge starts inside its billing period, or within the
-- month before it (usage monetized late: GCP, OCI), unless it corrects a previously invoiced period (ChargeClass
-- 'Correction', e.g. GCP adjustments billed later). Usage further out is held for review (sql/gates).
SELECT 'ChargePeriodEnd' AS column_name, 'ChargePeriodEnd is not after ChargePeriodStart' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE ChargePeriodEnd <= ChargePeriodStart
UNION ALL
SELECT 'BillingPeriodEnd', 'BillingPeriodEnd is not after BillingPeriodStart', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE BillingPeriodEnd <= BillingPeriodStart
UNION ALL
SELECT 'ChargePeriodStart', 'ChargePeriodStart is more than a month before BillingPeriodStart', x_SourceFile, x_SourceLineItemId
FROM focus_rows
WHERE ChargePeriodStart < BillingPeriodStart - INTERVAL 1 MONTH AND ChargeClass IS DISTINCT FROM 'Correction'
