-- One ServiceCategory per ServiceName, as FOCUS requires. Where the staged rows of delivery $id give a service
-- several categories (AWS's own FOCUS data files EBS volumes under "Amazon Elastic Compute Cloud" as Storage;
-- a Marketplace product sold under two product codes), every row of the service takes the first of them in
-- FOCUS's order of categories, Other last; a subcategory outside that category becomes "Other (<category>)".
-- The rows are flagged ServiceCategoryUnified and keep the values they had in x_SourceValues.
UPDATE focus.cost_rows AS f
SET
    ServiceCategory = chosen.category,
    ServiceSubcategory = CASE
        WHEN EXISTS (
            SELECT 1 FROM ref.focus_service_subcategories AS s
            WHERE s.service_category = chosen.category AND s.service_subcategory = f.ServiceSubcategory
        ) THEN f.ServiceSubcategory
        ELSE 'Other (' || chosen.category || ')'
    END,
    x_SourceChanges = source_changes(list_append(string_split(f.x_SourceChanges, ','), 'ServiceCategoryUnified')),
    x_SourceValues = CAST(json_merge_patch(
        coalesce(f.x_SourceValues, '{}'),
        json_object('ServiceCategory', f.ServiceCategory, 'ServiceSubcategory', f.ServiceSubcategory)
    ) AS VARCHAR)
FROM (
    SELECT c.ServiceName, arg_min(c.ServiceCategory, (c.ServiceCategory = 'Other', r.position)) AS category
    FROM (
        SELECT DISTINCT ServiceName, ServiceCategory FROM focus.cost_rows WHERE x_DeliveryId = $id
    ) AS c
    JOIN ref.focus_service_categories AS r ON r.service_category = c.ServiceCategory
    GROUP BY c.ServiceName
    HAVING count(*) > 1
) AS chosen
WHERE f.x_DeliveryId = $id AND f.ServiceName = chosen.ServiceName AND f.ServiceCategory <> chosen.category
