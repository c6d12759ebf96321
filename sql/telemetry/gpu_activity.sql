-- GPU activity: raw samples -> one row per (cluster, node, GPU, MIG instance, UTC hour, job label).
-- Input: temp view gpu_samples (models.telemetry.GPU_SAMPLES_SCHEMA), one row per GPU, time and metric, activity
-- already a 0..1 ratio, FB_USED in MiB; ts may also be a naive TIMESTAMP in UTC (only its epoch is used).
-- Parameters: $idle_threshold (ratio), $interval_seconds (time one sample stands for), $pricing_metrics (activity
-- metrics that may price run time, preferred first), $source; $sm_metric, $tensor_metric, $dram_metric,
-- $fb_metric: the DCGM field names kept beside the pricing metric.
-- Connectors hand over each sample once (no overlapping query chunks); an hour never exceeds 3600 s per GPU.

WITH per_metric AS (
    SELECT
        cluster,
        node,
        gpu,
        -- '' for the unlabelled and whole-GPU keys: NULLs would not match in the joins below
        coalesce(gpu_instance, '') AS gpu_instance,
        -- whole hours since the epoch: integer math, several times faster than date_trunc on TIMESTAMPTZ
        epoch_us(ts) // 3600000000 AS hour_number,
        coalesce(job_id, '') AS job_id,
        metric,
        max(mig_profile) AS mig_profile,
        max(instance_id) AS instance_id,
        count(*) AS samples,
        count(*) FILTER (WHERE value > $idle_threshold) AS active_samples,
        -- sums as DECIMAL: exact, so the same whatever order the samples are read in
        CAST(sum(CAST(least(value, 1) AS DECIMAL(18, 9))) AS DOUBLE) AS busy_samples,
        CAST(coalesce(sum(CAST(least(value, 1) AS DECIMAL(18, 9))) FILTER (WHERE value > $idle_threshold), 0)
            AS DOUBLE) AS active_busy_samples,
        CAST(sum(CAST(value AS DECIMAL(24, 9))) / count(*) AS DOUBLE) AS mean_value,
        -- the p95 is read of the pricing metric only: holding every value of the other fields would cost memory
        quantile_cont(value, 0.95) FILTER (WHERE list_position($pricing_metrics, metric) IS NOT NULL) AS p95_value,
        max(value) AS max_value
    FROM gpu_samples
    GROUP BY cluster, node, gpu, 4, hour_number, 6, metric
),

-- the GPU-hour's pricing metric: the first of the preference that has samples in it
pricing AS (
    SELECT
        cluster,
        node,
        gpu,
        gpu_instance,
        hour_number,
        job_id,
        arg_min(metric, list_position($pricing_metrics, metric)) AS metric
    FROM per_metric
    WHERE list_position($pricing_metrics, metric) IS NOT NULL
    GROUP BY ALL
),

-- the other fields of the same GPU-hour, for the record (right-sizing, memory high-water marks)
profile AS (
    SELECT
        cluster,
        node,
        gpu,
        gpu_instance,
        hour_number,
        job_id,
        max(mig_profile) AS mig_profile,
        max(instance_id) AS instance_id,
        max(mean_value) FILTER (WHERE metric = $sm_metric) AS sm_active,
        max(mean_value) FILTER (WHERE metric = $tensor_metric) AS tensor_active,
        max(mean_value) FILTER (WHERE metric = $dram_metric) AS dram_active,
        max(max_value) FILTER (WHERE metric = $fb_metric) AS fb_used_mib
    FROM per_metric
    GROUP BY ALL
)

SELECT
    p.cluster,
    p.node,
    p.gpu,
    nullif(p.gpu_instance, '') AS gpu_instance,
    f.mig_profile,
    to_timestamp(p.hour_number * 3600) AS hour,
    nullif(p.job_id, '') AS job_id,
    f.instance_id,
    p.metric,
    least(m.samples * $interval_seconds, 3600)::DOUBLE AS sampled_seconds,
    least(m.active_samples * $interval_seconds, 3600)::DOUBLE AS active_seconds,
    least(m.busy_samples * $interval_seconds, 3600)::DOUBLE AS busy_seconds,
    least(m.active_busy_samples * $interval_seconds, 3600)::DOUBLE AS active_busy_seconds,
    m.mean_value AS mean_utilization,
    m.p95_value AS p95_utilization,
    f.sm_active,
    f.tensor_active,
    f.dram_active,
    f.fb_used_mib,
    m.samples,
    $source AS source
FROM pricing AS p
JOIN per_metric AS m USING (cluster, node, gpu, gpu_instance, hour_number, job_id, metric)
JOIN profile AS f USING (cluster, node, gpu, gpu_instance, hour_number, job_id)
