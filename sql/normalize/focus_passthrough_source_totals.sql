-- Source-side totals of one FOCUS delivery (formats focus, aws-focus, azure-focus): its own BilledCost and
-- EffectiveCost columns, read through the same typed view the model reads.
SELECT
    BillingAccountId AS billing_account_id,
    BillingPeriodStart AS billing_period_start,
    BillingCurrency AS currency,
    count(*) AS source_rows,
    sum(BilledCost) AS billed_cost,
    sum(EffectiveCost) AS effective_cost
FROM focus_passthrough_src
GROUP BY ALL
