-- A digest of each published delivery's FOCUS rows and source totals: row counts and the sum of the rows' hashes
-- (order-free; a duplicated row counts twice). Equal digests mean equal inputs to the delivery gate. No parameters.
WITH published AS (
    SELECT DISTINCT delivery_id FROM meta.slices
),

row_digests AS (
    SELECT
        r.x_DeliveryId AS delivery_id,
        count(*) AS row_count,
        sum(hash(r)::HUGEINT) AS hash_sum
    FROM focus.cost_rows AS r
    WHERE r.x_DeliveryId IN (SELECT delivery_id FROM published)
    GROUP BY ALL
),

total_digests AS (
    SELECT
        t.delivery_id,
        count(*) AS row_count,
        sum(hash(t)::HUGEINT) AS hash_sum
    FROM meta.source_totals AS t
    WHERE t.delivery_id IN (SELECT delivery_id FROM published)
    GROUP BY ALL
)

SELECT
    p.delivery_id,
    concat_ws(':', coalesce(r.row_count, 0), coalesce(r.hash_sum, 0), coalesce(t.row_count, 0), coalesce(t.hash_sum, 0))
        AS digest
FROM published AS p
LEFT JOIN row_digests AS r ON r.delivery_id = p.delivery_id
LEFT JOIN total_digests AS t ON t.delivery_id = p.delivery_id
ORDER BY p.delivery_id
