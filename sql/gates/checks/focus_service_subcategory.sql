-- ServiceSubcategory must belong to the row's ServiceCategory.
SELECT
    'ServiceSubcategory' AS column_name,
    ServiceSubcategory || ' is not a subcategory of ' || ServiceCategory AS problem,
    x_SourceFile,
    x_SourceLineItemId
FROM focus_rows AS f
WHERE NOT EXISTS (
    SELECT 1 FROM ref.focus_service_subcategories AS s
    WHERE s.service_category = f.ServiceCategory AND s.service_subcategory = f.ServiceSubcategory
)
