-- Every enumerated FOCUS column holds only allowed values, row by row (the official validator
-- passes a column as long as one row is valid). NULLs are the nullability check's concern.
WITH enumerated AS (
    SELECT x_SourceFile, x_SourceLineItemId, column_name, value
    FROM (
        UNPIVOT (
            SELECT x_SourceFile, x_SourceLineItemId, CapacityReservationStatus, ChargeCategory, ChargeClass,
                ChargeFrequency, CommitmentDiscountCategory, CommitmentDiscountStatus, PricingCategory,
                ServiceCategory, ServiceSubcategory
            FROM focus_rows
        )
        ON CapacityReservationStatus, ChargeCategory, ChargeClass, ChargeFrequency, CommitmentDiscountCategory,
            CommitmentDiscountStatus, PricingCategory, ServiceCategory, ServiceSubcategory
        INTO NAME column_name VALUE value
    )
),

allowed AS (
    SELECT column_name, value FROM ref.focus_allowed_values
)

SELECT e.column_name, 'value ' || e.value || ' is not allowed' AS problem, e.x_SourceFile, e.x_SourceLineItemId
FROM enumerated AS e
ANTI JOIN allowed AS a ON a.column_name = e.column_name AND a.value = e.value
