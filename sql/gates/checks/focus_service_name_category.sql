-- Each ServiceName maps to exactly one ServiceCategory.
SELECT
    'ServiceCategory' AS column_name,
    'ServiceName ' || ServiceName || ' maps to several categories: '
        || string_agg(DISTINCT ServiceCategory, ', ' ORDER BY ServiceCategory) AS problem,
    min(x_SourceFile) AS x_SourceFile,
    min(x_SourceLineItemId) AS x_SourceLineItemId
FROM focus_rows
GROUP BY ServiceName
HAVING count(DISTINCT ServiceCategory) > 1
