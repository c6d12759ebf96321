-- Tags, SkuPriceDetails and x_CostCategories are flat JSON objects (KeyValueFormat): no nested objects or arrays;
-- SkuPriceDetails keys are FOCUS-defined or x_-prefixed.
WITH json_columns AS (
    SELECT x_SourceFile, x_SourceLineItemId, column_name, value
    FROM (
        UNPIVOT (SELECT x_SourceFile, x_SourceLineItemId, Tags, SkuPriceDetails, x_CostCategories FROM focus_rows)
        ON Tags, SkuPriceDetails, x_CostCategories
        INTO NAME column_name VALUE value
    )
),

parsed AS (
    SELECT *, json_valid(value) AND json_type(value) = 'OBJECT' AS is_object FROM json_columns
)

SELECT column_name, 'not a JSON object: ' || value AS problem, x_SourceFile, x_SourceLineItemId
FROM parsed WHERE NOT is_object
UNION ALL
SELECT p.column_name, 'nested value under key ' || e.key AS problem, p.x_SourceFile, p.x_SourceLineItemId
FROM parsed AS p, json_each(p.value) AS e
WHERE p.is_object AND e.type IN ('OBJECT', 'ARRAY')
UNION ALL
SELECT p.column_name, 'key ' || e.key || ' is neither FOCUS-defined nor x_-prefixed' AS problem,
    p.x_SourceFile, p.x_SourceLineItemId
FROM parsed AS p, json_each(p.value) AS e
WHERE p.is_object AND p.column_name = 'SkuPriceDetails' AND NOT starts_with(e.key, 'x_')
    AND e.key NOT IN ('CoreCount', 'DiskMaxIops', 'DiskSpace', 'DiskType', 'GpuCount', 'InstanceType',
        'InstanceSeries', 'MemorySize', 'NetworkMaxIops', 'NetworkMaxThroughput', 'OperatingSystem',
        'Redundancy', 'StorageClass')
