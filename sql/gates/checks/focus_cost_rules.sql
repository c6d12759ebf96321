-- Cost relationships the spec states: a Credit's EffectiveCost equals its BilledCost; a commitment
-- purchase is amortized (EffectiveCost 0); billed money never sits on an unused-commitment row.
SELECT 'EffectiveCost' AS column_name, 'Credit with EffectiveCost <> BilledCost' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE ChargeCategory = 'Credit' AND EffectiveCost <> BilledCost
UNION ALL
SELECT 'EffectiveCost', 'commitment Purchase with non-zero EffectiveCost', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE ChargeCategory = 'Purchase' AND CommitmentDiscountId IS NOT NULL AND EffectiveCost <> 0
UNION ALL
SELECT 'BilledCost', 'Unused commitment row with non-zero BilledCost', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE CommitmentDiscountStatus = 'Unused' AND BilledCost <> 0
