-- The billing months with published charges and the providers (source format families) charging in each:
-- a month closes once every one of them is past its finalization window. Columns: billing month (YYYY-MM),
-- provider; ordered. No parameters.
WITH slices AS (
    SELECT billing_period_start AS BillingPeriodStart, delivery_id
    FROM meta.slices
),

deliveries AS (
    SELECT delivery_id, split_part(source_format, '-', 1) AS provider
    FROM meta.deliveries
),

periods AS (
    SELECT DISTINCT s.BillingPeriodStart, d.provider
    FROM slices AS s
    JOIN deliveries AS d USING (delivery_id)
)

SELECT DISTINCT strftime(billing_month(BillingPeriodStart), '%Y-%m'), provider
FROM periods
ORDER BY ALL
