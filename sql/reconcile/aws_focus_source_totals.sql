-- Source-side totals of one AWS FOCUS delivery: its own BilledCost and EffectiveCost columns.
SELECT
    BillingAccountId AS billing_account_id,
    BillingPeriodStart AS billing_period_start,
    BillingCurrency AS currency,
    count(*) AS source_rows,
    sum(BilledCost) AS billed_cost,
    sum(EffectiveCost) AS effective_cost
FROM aws_focus_src
GROUP BY ALL
