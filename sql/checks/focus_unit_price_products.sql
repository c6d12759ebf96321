-- ListCost = ListUnitPrice x PricingQuantity and ContractedCost = ContractedUnitPrice x PricingQuantity
-- where both factors are known and the row is not a correction. Relative tolerance 1e-6 for sources that
-- round costs; compared in DOUBLE because DECIMAL(38,10) x DECIMAL(38,10) needs 128-bit products per row.
WITH priced AS (
    SELECT
        x_SourceFile,
        x_SourceLineItemId,
        ListCost,
        ContractedCost,
        ListUnitPrice * PricingQuantity AS list_product,
        ContractedUnitPrice * PricingQuantity AS contracted_product,
        abs(ListUnitPrice::DOUBLE * PricingQuantity::DOUBLE - ListCost::DOUBLE)
            > greatest(0.000001, abs(ListCost::DOUBLE) * 0.000001) AS list_off,
        abs(ContractedUnitPrice::DOUBLE * PricingQuantity::DOUBLE - ContractedCost::DOUBLE)
            > greatest(0.000001, abs(ContractedCost::DOUBLE) * 0.000001) AS contracted_off
    FROM focus_rows
    WHERE ChargeClass IS NULL AND ChargeCategory IN ('Usage', 'Purchase') AND PricingQuantity IS NOT NULL
)

SELECT
    CASE WHEN list_off THEN 'ListCost' ELSE 'ContractedCost' END AS column_name,
    CASE
        WHEN list_off THEN 'ListCost ' || ListCost || ' <> ListUnitPrice x PricingQuantity = ' || list_product
        ELSE 'ContractedCost ' || ContractedCost || ' <> ContractedUnitPrice x PricingQuantity = ' || contracted_product
    END AS problem,
    x_SourceFile,
    x_SourceLineItemId
FROM priced
WHERE list_off OR contracted_off
