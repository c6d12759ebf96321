-- ListCost = ListUnitPrice x PricingQuantity and ContractedCost = ContractedUnitPrice x PricingQuantity
-- where both factors are known and the row is not a correction, within the tolerance of the macro
-- price_contradicts_cost (sql/normalize/macros.sql).
WITH priced AS (
    SELECT
        x_SourceFile,
        x_SourceLineItemId,
        ListCost,
        ContractedCost,
        ListUnitPrice * PricingQuantity AS list_product,
        ContractedUnitPrice * PricingQuantity AS contracted_product,
        price_contradicts_cost(ListUnitPrice, PricingQuantity, ListCost) AS list_off,
        price_contradicts_cost(ContractedUnitPrice, PricingQuantity, ContractedCost) AS contracted_off
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
