-- The table has every FOCUS column with its spec type, and every other column is x_-prefixed.
WITH actual AS (
    SELECT column_name, data_type FROM information_schema.columns
    WHERE table_schema = 'focus' AND table_name = 'cost_rows'
),

expected AS (
    SELECT column_name, data_type FROM ref.focus_columns
)

SELECT a.column_name, 'custom column without the x_ prefix' AS problem, NULL AS x_SourceFile,
    NULL AS x_SourceLineItemId
FROM actual AS a
WHERE NOT starts_with(a.column_name, 'x_') AND a.column_name NOT IN (SELECT column_name FROM expected)
UNION ALL
SELECT e.column_name, 'FOCUS column missing or not of type ' || e.data_type, NULL, NULL
FROM expected AS e
WHERE NOT EXISTS (SELECT 1 FROM actual AS a WHERE a.column_name = e.column_name AND a.data_type = e.data_type)
