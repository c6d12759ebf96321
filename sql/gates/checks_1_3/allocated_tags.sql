-- FOCUS 1.3 AllocatedTags: a flat JSON object (KeyValueFormat) that repeats no key of the row's Tags.
WITH tagged AS (
    SELECT x_SourceFile, x_SourceLineItemId, AllocatedTags, Tags
    FROM focus_1_3_rows
    WHERE AllocatedTags IS NOT NULL
)

SELECT 'AllocatedTags' AS column_name, 'not a flat JSON object' AS problem, x_SourceFile, x_SourceLineItemId
FROM tagged
WHERE NOT json_valid(AllocatedTags) OR json_type(AllocatedTags) <> 'OBJECT'
    OR EXISTS (SELECT 1 FROM json_each(AllocatedTags) AS e WHERE e.type IN ('OBJECT', 'ARRAY'))
UNION ALL
SELECT 'AllocatedTags', 'repeats the key ' || key || ' of Tags', x_SourceFile, x_SourceLineItemId
FROM (
    SELECT x_SourceFile, x_SourceLineItemId, unnest(json_keys(AllocatedTags)) AS key, Tags
    FROM tagged
    WHERE json_valid(AllocatedTags) AND json_type(AllocatedTags) = 'OBJECT' AND json_valid(Tags)
)
WHERE json_exists(Tags, '$."' || replace(key, '"', '\"') || '"')
