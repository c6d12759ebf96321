-- ListCost = ListUnitPrice x PricingQuantity and ContractedCost = ContractedUnitPrice x PricingQuantity
-- where both factors are known and the row is not a correction. Relative tolerance 1e-6 for sources that
-- round costs; compared in DOUBLE because DECIMAL(38,10) x DECIMAL(38,10) needs 128-bit products per row.
WITH priced AS (
    SELECT * FROM focus_rows
    WHERE ChargeClass IS NULL AND ChargeCategory IN ('Usage', 'Purchase') AND PricingQuantity IS NOT NULL
)

SELECT 'ListCost' AS column_name,
    'ListCost ' || ListCost || ' <> ListUnitPrice x PricingQuantity = ' || ListUnitPrice * PricingQuantity AS problem,
    x_SourceFile, x_SourceLineItemId
FROM priced
WHERE ListUnitPrice IS NOT NULL
    AND abs(ListUnitPrice::DOUBLE * PricingQuantity::DOUBLE - ListCost::DOUBLE)
        > greatest(0.000001, abs(ListCost::DOUBLE) * 0.000001)
UNION ALL
SELECT 'ContractedCost',
    'ContractedCost ' || ContractedCost || ' <> ContractedUnitPrice x PricingQuantity = '
        || ContractedUnitPrice * PricingQuantity,
    x_SourceFile, x_SourceLineItemId
FROM priced
WHERE ContractedUnitPrice IS NOT NULL
    AND abs(ContractedUnitPrice::DOUBLE * PricingQuantity::DOUBLE - ContractedCost::DOUBLE)
        > greatest(0.000001, abs(ContractedCost::DOUBLE) * 0.000001)
