-- The descriptive values one delivery's reader repaired, per change (x_SourceChanges), and the source rows it
-- skipped on purpose (temp table source_skipped, e.g. GCP records an earlier extract already delivered).
-- Parameter: $id (the delivery).
INSERT INTO meta.delivery_repairs
WITH changes AS (
    SELECT unnest(string_split(x_SourceChanges, ',')) AS change
    FROM focus.cost_rows
    WHERE x_DeliveryId = $id AND x_SourceChanges IS NOT NULL
)

SELECT $id AS delivery_id, change, count(*) AS rows
FROM changes
GROUP BY change
UNION ALL
SELECT $id AS delivery_id, change, rows
FROM source_skipped
