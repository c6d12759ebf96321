-- FOCUS 1.3 AllocatedMethodDetails: a JSON object whose Elements is a non-empty array of objects, each with a
-- numeric AllocatedRatio, a UsageUnit wherever it has a UsageQuantity, and no other key but x_ ones.
WITH details AS (
    SELECT x_SourceFile, x_SourceLineItemId, AllocatedMethodDetails AS details
    FROM focus_1_3_rows
    WHERE AllocatedMethodDetails IS NOT NULL
),

elements AS (
    SELECT x_SourceFile, x_SourceLineItemId, unnest(CAST(json_extract(details, '$.Elements') AS JSON[])) AS element
    FROM details
    WHERE json_valid(details) AND json_type(details, '$.Elements') = 'ARRAY'
)

SELECT 'AllocatedMethodDetails' AS column_name, 'no JSON object with a non-empty Elements array' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM details
WHERE NOT json_valid(details) OR json_type(details) <> 'OBJECT'
    OR coalesce(json_type(details, '$.Elements'), '') <> 'ARRAY' OR json_array_length(details, '$.Elements') = 0
    OR EXISTS (SELECT 1 FROM unnest(json_keys(details)) AS k(key) WHERE key <> 'Elements' AND NOT starts_with(key, 'x_'))
UNION ALL
SELECT 'AllocatedMethodDetails', 'an element without a numeric AllocatedRatio, a UsageQuantity without UsageUnit,'
    || ' or a key that is neither FOCUS''s nor x_', x_SourceFile, x_SourceLineItemId
FROM elements
WHERE json_type(element) <> 'OBJECT'
    OR coalesce(json_type(element, '$.AllocatedRatio'), '') NOT IN ('DOUBLE', 'UBIGINT', 'BIGINT')
    OR (json_exists(element, '$.UsageQuantity') AND NOT json_exists(element, '$.UsageUnit'))
    OR EXISTS (
        SELECT 1 FROM unnest(json_keys(element)) AS k(key)
        WHERE key NOT IN ('AllocatedRatio', 'UsageUnit', 'UsageQuantity') AND NOT starts_with(key, 'x_')
    )
