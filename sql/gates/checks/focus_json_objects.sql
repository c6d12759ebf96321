-- Tags, SkuPriceDetails and x_CostCategories are flat JSON objects (KeyValueFormat): no nested objects or arrays;
-- SkuPriceDetails keys are FOCUS-defined or x_-prefixed. Each distinct value is parsed once (tags repeat a lot),
-- and rows are looked up only for values that fail.
WITH distinct_values AS (
    SELECT DISTINCT 'Tags' AS column_name, Tags AS value FROM focus_rows WHERE Tags IS NOT NULL
    UNION ALL
    SELECT DISTINCT 'SkuPriceDetails', SkuPriceDetails FROM focus_rows WHERE SkuPriceDetails IS NOT NULL
    UNION ALL
    SELECT DISTINCT 'x_CostCategories', x_CostCategories FROM focus_rows WHERE x_CostCategories IS NOT NULL
),

parsed AS (
    SELECT *, json_valid(value) AND json_type(value) = 'OBJECT' AS is_object FROM distinct_values
),

problems AS (
    SELECT column_name, value, 'not a JSON object: ' || value AS problem
    FROM parsed WHERE NOT is_object
    UNION ALL
    SELECT p.column_name, p.value, 'nested value under key ' || e.key
    FROM parsed AS p, json_each(p.value) AS e
    WHERE p.is_object AND e.type IN ('OBJECT', 'ARRAY')
    UNION ALL
    SELECT p.column_name, p.value, 'key ' || e.key || ' is neither FOCUS-defined nor x_-prefixed'
    FROM parsed AS p, json_each(p.value) AS e
    WHERE p.is_object AND p.column_name = 'SkuPriceDetails' AND NOT starts_with(e.key, 'x_')
        AND e.key NOT IN ('CoreCount', 'DiskMaxIops', 'DiskSpace', 'DiskType', 'GpuCount', 'InstanceType',
            'InstanceSeries', 'MemorySize', 'NetworkMaxIops', 'NetworkMaxThroughput', 'OperatingSystem',
            'Redundancy', 'StorageClass')
)

SELECT p.column_name, p.problem, f.x_SourceFile, f.x_SourceLineItemId
FROM problems AS p
JOIN focus_rows AS f
    ON (p.column_name = 'Tags' AND f.Tags = p.value)
    OR (p.column_name = 'SkuPriceDetails' AND f.SkuPriceDetails = p.value)
    OR (p.column_name = 'x_CostCategories' AND f.x_CostCategories = p.value)
