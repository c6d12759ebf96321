-- Slices the staged delivery would empty although they hold charges now: an empty export is more often a
-- broken one than a month whose charges all vanished. (An empty first delivery of a slice goes through.)
-- Input: temp table delivery_slices (the slices the delivery replaces). Parameter: $id (staged delivery).
WITH replaced AS (
    SELECT ProviderName, BillingAccountId, BillingPeriodStart, billing_month FROM delivery_slices
),

published AS (
    SELECT c.ProviderName, c.BillingAccountId, c.BillingPeriodStart, count(*) AS line_items
    FROM focus.costs AS c
    SEMI JOIN replaced AS r USING (ProviderName, BillingAccountId, BillingPeriodStart)
    WHERE c.BilledCost <> 0 OR c.EffectiveCost <> 0
    GROUP BY ALL
),

staged AS (
    SELECT ProviderName, BillingAccountId, BillingPeriodStart, count(*) AS line_items
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id
    GROUP BY ALL
)

SELECT
    r.ProviderName,
    r.BillingAccountId,
    strftime(r.billing_month, '%Y-%m') AS billing_period,
    'would empty the slice: ' || p.line_items || ' charged row(s) now, none in this delivery' AS detail
FROM replaced AS r
JOIN published AS p USING (ProviderName, BillingAccountId, BillingPeriodStart)
LEFT JOIN staged AS s USING (ProviderName, BillingAccountId, BillingPeriodStart)
WHERE s.line_items IS NULL
ORDER BY ALL
