-- The billing months with published charges and the providers (of their source formats) charging in each:
-- a month closes once every one of them is past its finalization window. Columns: billing month (YYYY-MM),
-- provider; ordered. No parameters.
WITH slices AS (
    SELECT billing_period_start AS BillingPeriodStart, delivery_id
    FROM meta.slices
),

deliveries AS (
    SELECT delivery_id, source_format
    FROM meta.deliveries
),

formats AS (
    SELECT source_format, provider
    FROM ref.source_formats
),

periods AS (
    SELECT DISTINCT s.BillingPeriodStart, f.provider
    FROM slices AS s
    JOIN deliveries AS d USING (delivery_id)
    JOIN formats AS f USING (source_format)
)

SELECT DISTINCT strftime(billing_month(BillingPeriodStart), '%Y-%m'), provider
FROM periods
ORDER BY ALL
