-- Slices where the FOCUS rows of a delivery do not sum exactly to the source's totals.
-- Parameter: $id (delivery id). Returns nothing when every cent is accounted for.
WITH focus_totals AS (
    SELECT
        BillingAccountId AS billing_account_id,
        BillingPeriodStart AS billing_period_start,
        BillingCurrency AS currency,
        sum(BilledCost) AS billed_cost,
        sum(EffectiveCost) AS effective_cost
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id
    GROUP BY ALL
),

-- one row per part of the delivery its files were staged in
source_totals AS (
    SELECT
        billing_account_id,
        billing_period_start,
        currency,
        sum(billed_cost) AS billed_cost,
        sum(effective_cost) AS effective_cost
    FROM meta.source_totals
    WHERE delivery_id = $id
    GROUP BY ALL
)

SELECT
    coalesce(s.billing_account_id, f.billing_account_id) AS billing_account_id,
    strftime(coalesce(s.billing_period_start, f.billing_period_start), '%Y-%m') AS billing_period,
    coalesce(s.currency, f.currency) AS currency,
    s.billed_cost AS source_billed_cost,
    s.effective_cost AS source_effective_cost,
    f.billed_cost AS focus_billed_cost,
    f.effective_cost AS focus_effective_cost
FROM source_totals AS s
FULL OUTER JOIN focus_totals AS f
    ON f.billing_account_id = s.billing_account_id
    AND f.billing_period_start = s.billing_period_start
    AND f.currency = s.currency
-- exact: both sides are DECIMAL sums, so any difference at all is lost or invented money
WHERE s.billed_cost IS DISTINCT FROM f.billed_cost
    OR s.effective_cost IS DISTINCT FROM f.effective_cost
    OR s.billed_cost IS NULL
    OR f.billed_cost IS NULL
