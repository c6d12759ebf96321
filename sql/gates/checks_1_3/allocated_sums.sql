-- FOCUS 1.3 split cost allocation: the allocated rows of an origin charge (the stored FOCUS row they share
-- x_DeliveryId and x_SourceLineItemId with) sum to its BilledCost, EffectiveCost, ListCost and ContractedCost exactly,
-- their AllocatedRatio to 1, and keep its dimensions and unit prices.
WITH origins AS (
    SELECT * FROM focus.costs
),

allocated AS (
    SELECT
        x_DeliveryId,
        x_SourceLineItemId,
        any_value(x_SourceFile) AS x_SourceFile,
        sum(BilledCost) AS billed,
        sum(EffectiveCost) AS effective,
        sum(ListCost) AS list,
        sum(ContractedCost) AS contracted,
        sum(list_sum(CAST(json_extract(AllocatedMethodDetails, '$.Elements[*].AllocatedRatio') AS DOUBLE[])))
            AS ratio,
        count(DISTINCT (
            ChargeCategory, ChargeClass, ResourceId, ServiceName, BillingAccountId, SubAccountId, ChargePeriodStart,
            ChargePeriodEnd, ListUnitPrice, ContractedUnitPrice, SkuPriceId, Tags
        )) AS dimension_sets,
        any_value((
            ChargeCategory, ChargeClass, ResourceId, ServiceName, BillingAccountId, SubAccountId, ChargePeriodStart,
            ChargePeriodEnd, ListUnitPrice, ContractedUnitPrice, SkuPriceId, Tags
        )) AS dimensions
    FROM focus_1_3_rows
    WHERE AllocatedMethodId IS NOT NULL
    GROUP BY x_DeliveryId, x_SourceLineItemId
)

SELECT 'BilledCost' AS column_name,
    'allocated rows sum to ' || a.billed || ', ' || a.effective || ', ' || a.list || ', ' || a.contracted
    || ' (Billed, Effective, List, Contracted), the origin charge is ' || o.BilledCost || ', ' || o.EffectiveCost
    || ', ' || o.ListCost || ', ' || o.ContractedCost AS problem,
    a.x_SourceFile, a.x_SourceLineItemId
FROM allocated AS a
JOIN origins AS o USING (x_DeliveryId, x_SourceLineItemId)
WHERE a.billed <> o.BilledCost OR a.effective <> o.EffectiveCost OR a.list <> o.ListCost
    OR a.contracted <> o.ContractedCost
UNION ALL
SELECT 'AllocatedMethodDetails', 'AllocatedRatio of the allocated rows sums to ' || ratio || ', not 1',
    x_SourceFile, x_SourceLineItemId
FROM allocated
WHERE ratio IS NULL OR abs(ratio - 1) > 1e-9
UNION ALL
SELECT 'ResourceId', 'allocated rows differ from their origin charge in a dimension or unit price',
    a.x_SourceFile, a.x_SourceLineItemId
FROM allocated AS a
JOIN origins AS o USING (x_DeliveryId, x_SourceLineItemId)
WHERE a.dimension_sets > 1 OR a.dimensions IS DISTINCT FROM (
    o.ChargeCategory, o.ChargeClass, o.ResourceId, o.ServiceName, o.BillingAccountId, o.SubAccountId,
    o.ChargePeriodStart, o.ChargePeriodEnd, o.ListUnitPrice, o.ContractedUnitPrice, o.SkuPriceId, o.Tags
)
UNION ALL
SELECT 'AllocatedMethodId', 'an origin charge without allocated rows', o.x_SourceFile, o.x_SourceLineItemId
FROM origins AS o
WHERE EXISTS (SELECT 1 FROM focus_1_3_rows WHERE AllocatedMethodId IS NOT NULL)
    AND NOT EXISTS (
        SELECT 1 FROM allocated AS a WHERE a.x_DeliveryId = o.x_DeliveryId AND a.x_SourceLineItemId = o.x_SourceLineItemId
    )
