-- Periods are half-open [start, end) and non-empty; a charge starts inside or after its billing period start,
-- unless it corrects a previously invoiced period (ChargeClass 'Correction', e.g. GCP adjustments billed later).
SELECT 'ChargePeriodEnd' AS column_name, 'ChargePeriodEnd is not after ChargePeriodStart' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE ChargePeriodEnd <= ChargePeriodStart
UNION ALL
SELECT 'BillingPeriodEnd', 'BillingPeriodEnd is not after BillingPeriodStart', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE BillingPeriodEnd <= BillingPeriodStart
UNION ALL
SELECT 'ChargePeriodStart', 'ChargePeriodStart is before BillingPeriodStart', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE ChargePeriodStart < BillingPeriodStart AND ChargeClass IS DISTINCT FROM 'Correction'
