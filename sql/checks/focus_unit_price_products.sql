-- ListCost = ListUnitPrice x PricingQuantity and ContractedCost = ContractedUnitPrice x PricingQuantity
-- where both factors are known and the row is not a correction (relative tolerance for rounded sources).
WITH priced AS (
    SELECT * FROM focus_rows
    WHERE ChargeClass IS NULL AND ChargeCategory IN ('Usage', 'Purchase') AND PricingQuantity IS NOT NULL
)

SELECT 'ListCost' AS column_name,
    'ListCost ' || ListCost || ' <> ListUnitPrice x PricingQuantity = ' || ListUnitPrice * PricingQuantity AS problem,
    x_SourceFile, x_SourceLineItemId
FROM priced
WHERE ListUnitPrice IS NOT NULL
    AND abs(ListUnitPrice * PricingQuantity - ListCost) > greatest(0.000001, abs(ListCost) * 0.000001)
UNION ALL
SELECT 'ContractedCost',
    'ContractedCost ' || ContractedCost || ' <> ContractedUnitPrice x PricingQuantity = '
        || ContractedUnitPrice * PricingQuantity,
    x_SourceFile, x_SourceLineItemId
FROM priced
WHERE ContractedUnitPrice IS NOT NULL
    AND abs(ContractedUnitPrice * PricingQuantity - ContractedCost) > greatest(0.000001, abs(ContractedCost) * 0.000001)
