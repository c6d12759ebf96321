-- The last load of one telemetry source and the rows it left, to tell whether reading its files again would change
-- anything. Parameters: $source.
SELECT
    input_fingerprint,
    jobs,
    activity_rows,
    (SELECT count(*) FROM gpu.jobs WHERE source = $source) AS jobs_now,
    (SELECT count(*) FROM gpu.activity WHERE source = $source) AS activity_rows_now,
    notes
FROM meta.telemetry_loads
WHERE source_name = $source
ORDER BY loaded_at DESC
LIMIT 1
