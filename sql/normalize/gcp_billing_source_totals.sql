-- Source-side totals of one GCP billing export delivery, straight from its records: per billing account,
-- invoice month (its US/Pacific start, in UTC) and currency, billed = sum(cost) + sum(credits.amount), the
-- invoice (credits are negative). GCP bills commitments as they accrue, so the amortized total is the same
-- sum (docs/decisions/0007). The loader compares both with sum(BilledCost) / sum(EffectiveCost) exactly.
WITH records AS (
    SELECT
        billing_account_id,
        timezone('America/Los_Angeles', strptime(invoice_month, '%Y%m')) AS billing_period_start,
        currency,
        cost + coalesce(list_sum(list_transform(credits, c -> c.amount)), 0) AS net_cost
    FROM gcp_bq_src
)

SELECT
    billing_account_id,
    billing_period_start,
    currency,
    count(*) AS source_rows,
    sum(net_cost) AS billed_cost,
    sum(net_cost) AS effective_cost
FROM records
GROUP BY ALL
