-- Restatements of a closed (or issued) month that move a slice's billed or effective total, in any currency,
-- by more than $share of what is published: small restatements go through, large ones wait for a person. The
-- first delivery of a slice is no restatement. Input: temp table delivery_slices (the slices the delivery
-- replaces). Parameters: $id (staged delivery), $share (e.g. 0.05).
WITH replaced AS (
    SELECT d.ProviderName, d.BillingAccountId, d.BillingPeriodStart, d.billing_month
    FROM delivery_slices AS d
    SEMI JOIN meta.months AS m ON m.billing_month = d.billing_month AND m.state IN ('closed', 'issued')
    SEMI JOIN meta.slices AS o
        ON o.provider_name = d.ProviderName
        AND o.billing_account_id = d.BillingAccountId
        AND o.billing_period_start = d.BillingPeriodStart
),

published AS (
    SELECT
        c.ProviderName, c.BillingAccountId, c.BillingPeriodStart, c.BillingCurrency,
        sum(c.BilledCost) AS billed_cost,
        sum(c.EffectiveCost) AS effective_cost
    FROM focus.costs AS c
    SEMI JOIN replaced AS r USING (ProviderName, BillingAccountId, BillingPeriodStart)
    GROUP BY ALL
),

staged AS (
    SELECT
        ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency,
        sum(BilledCost) AS billed_cost,
        sum(EffectiveCost) AS effective_cost
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id
    GROUP BY ALL
),

currencies AS (
    SELECT ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency FROM published
    UNION
    SELECT ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency FROM staged
),

compared AS (
    SELECT
        r.ProviderName,
        r.BillingAccountId,
        r.billing_month,
        c.BillingCurrency AS currency,
        coalesce(p.billed_cost, 0) AS billed_before,
        coalesce(s.billed_cost, 0) AS billed_after,
        coalesce(p.effective_cost, 0) AS effective_before,
        coalesce(s.effective_cost, 0) AS effective_after
    FROM replaced AS r
    JOIN currencies AS c USING (ProviderName, BillingAccountId, BillingPeriodStart)
    LEFT JOIN published AS p USING (ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency)
    LEFT JOIN staged AS s USING (ProviderName, BillingAccountId, BillingPeriodStart, BillingCurrency)
)

SELECT
    ProviderName,
    BillingAccountId,
    strftime(billing_month, '%Y-%m') AS billing_period,
    'restates a closed month by more than ' || CAST(round($share * 100, 2) AS VARCHAR) || '%: '
        || currency || ' billed ' || billed_before || ' -> ' || billed_after
        || ', effective ' || effective_before || ' -> ' || effective_after AS detail
FROM compared
WHERE abs(billed_after - billed_before) > $share * abs(billed_before)
    OR abs(effective_after - effective_before) > $share * abs(effective_before)
ORDER BY ALL
