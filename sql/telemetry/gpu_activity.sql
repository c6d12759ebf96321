-- GPU activity: raw utilization samples -> one row per (cluster, node, GPU, UTC hour, job label).
-- Input: temp view gpu_samples (models.telemetry.GPU_SAMPLES_SCHEMA), utilization already a 0..1 ratio;
-- ts may also be a naive TIMESTAMP in UTC (only its epoch is used).
-- Parameters: $idle_threshold (ratio), $interval_seconds (time one sample stands for), $source.
-- Connectors hand over each sample once (no overlapping query chunks); an hour never exceeds 3600 s per GPU.

WITH hourly AS (
    SELECT
        cluster,
        node,
        gpu,
        -- whole hours since the epoch: integer math, several times faster than date_trunc on TIMESTAMPTZ
        epoch_us(ts) // 3600000000 AS hour_number,
        job_id,
        max(instance_id) AS instance_id,
        metric,
        count(*) AS samples,
        count(*) FILTER (WHERE utilization > $idle_threshold) AS active_samples,
        avg(utilization) AS mean_utilization
    FROM gpu_samples
    GROUP BY cluster, node, gpu, hour_number, job_id, metric
)

SELECT
    cluster,
    node,
    gpu,
    to_timestamp(hour_number * 3600) AS hour,
    job_id,
    instance_id,
    metric,
    least(samples * $interval_seconds, 3600)::DOUBLE AS sampled_seconds,
    least(active_samples * $interval_seconds, 3600)::DOUBLE AS active_seconds,
    mean_utilization,
    samples,
    $source AS source
FROM hourly
