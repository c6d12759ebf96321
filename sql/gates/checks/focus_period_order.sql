-- Periods are half-open [start, end) and non-empty, billing periods a month long; a charge starts inside its
-- billing period, or within the month before it (usage monetized late: GCP, OCI), unless it corrects a
-- previously invoiced period (ChargeClass 'Correction', e.g. GCP adjustments billed later). Usage further out
-- is held for review (sql/gates/holds/usage_outside_period.sql).
SELECT 'ChargePeriodEnd' AS column_name, 'ChargePeriodEnd is not after ChargePeriodStart' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE ChargePeriodEnd <= ChargePeriodStart
UNION ALL
SELECT 'BillingPeriodEnd', 'BillingPeriodEnd is not after BillingPeriodStart', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE BillingPeriodEnd <= BillingPeriodStart
UNION ALL
-- a billing period is a month (from a local midnight): slices, months and statements are monthly
SELECT 'BillingPeriodEnd', 'the billing period is not one month long', x_SourceFile, x_SourceLineItemId
FROM focus_rows
WHERE BillingPeriodEnd > BillingPeriodStart
    AND date_diff('day', BillingPeriodStart, BillingPeriodEnd) NOT BETWEEN 28 AND 31
UNION ALL
SELECT
    'ChargePeriodStart', 'ChargePeriodStart is more than a month before BillingPeriodStart', x_SourceFile,
    x_SourceLineItemId
FROM focus_rows
WHERE ChargePeriodStart < BillingPeriodStart - INTERVAL 1 MONTH AND ChargeClass IS DISTINCT FROM 'Correction'
UNION ALL
-- a billing period starts at midnight of a month's 1st in a time zone from UTC-12 to UTC+14 (the rule of
-- sql/normalize/billing_month.sql): another start is of no month
SELECT
    'BillingPeriodStart', 'BillingPeriodStart is not midnight of a month''s 1st in any time zone (UTC-12 to UTC+14)',
    x_SourceFile, x_SourceLineItemId
FROM focus_rows
WHERE NOT starts_billing_month(BillingPeriodStart)
