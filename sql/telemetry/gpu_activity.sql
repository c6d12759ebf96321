-- GPU activity: raw samples -> one row per (cluster, node, GPU, MIG instance, UTC hour, job label).
-- Input: temp view gpu_samples (models.telemetry.GPU_SAMPLES_SCHEMA), one row per GPU, time and metric, activity
-- already a 0..1 ratio, FB_USED in MiB; ts may also be a naive TIMESTAMP in UTC (only its epoch is used).
-- Parameters: $idle_threshold (ratio), $interval_seconds (time one sample stands for), $pricing_metrics (activity
-- metrics that may price run time, preferred first), $source; $sm_metric, $tensor_metric, $dram_metric,
-- $fb_metric: the DCGM field names kept beside the pricing metric.
-- Connectors hand over each sample once (no overlapping query chunks); an hour never exceeds 3600 s per GPU.
-- Input columns copies and peak: copies merged into the sample and the largest of them (distinct_samples.sql), 0
-- and value when the caller merged none.
-- crowded is true for a GPU-hour whose pricing samples fall in fewer interval slots than there are samples: copies of
-- a sample (two exporters, a double scrape) or samples closer than the interval; the caller then merges copies.

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
        -- each metric that may price gets its own statistics, keyed by its place in the preference (an integer
        -- holds less than a field name); the GPU-hour's other fields share the NULL group and only their means
        -- and maxima are read: half the groups, and the memory, of a group per field
        list_position($pricing_metrics, metric) AS preference,
        max(mig_profile) AS mig_profile,
        max(instance_id) AS instance_id,
        count(*) AS samples,
        count(*) FILTER (WHERE value > $idle_threshold) AS active_samples,
        -- sums as DECIMAL: exact, so the same whatever order the samples are read in
        CAST(sum(CAST(least(value, 1) AS DECIMAL(18, 9))) AS DOUBLE) AS busy_samples,
        CAST(coalesce(sum(CAST(least(value, 1) AS DECIMAL(18, 9))) FILTER (WHERE value > $idle_threshold), 0)
            AS DOUBLE) AS active_busy_samples,
        -- the p95 of the metrics that may price (the other fields' values are never held), its values held as
        -- SMALLINT ten-thousandths of the ratio: a quarter of the memory of DOUBLEs, and a p95 to 0.0001
        quantile_cont(CAST(round(least(value, 1) * 10000) AS SMALLINT), 0.95)
            FILTER (WHERE list_position($pricing_metrics, metric) IS NOT NULL) / 10000 AS p95_value,
        CAST(avg(CAST(value AS DECIMAL(24, 9))) FILTER (WHERE metric = $sm_metric) AS DOUBLE) AS sm_active,
        CAST(avg(CAST(value AS DECIMAL(24, 9))) FILTER (WHERE metric = $tensor_metric) AS DOUBLE) AS tensor_active,
        CAST(avg(CAST(value AS DECIMAL(24, 9))) FILTER (WHERE metric = $dram_metric) AS DOUBLE) AS dram_active,
        max(peak) FILTER (WHERE metric = $fb_metric) AS fb_used_mib,
        sum(copies) AS copies,
        -- a pricing metric's group holds that metric alone: a slot of the interval taken twice is a copy, or
        -- samples closer than the interval. The hour's slots as bits of a BIGINT (a DISTINCT count costs 5x the
        -- memory), 62 of them: with more (intervals under 58.07 s) slots share bits and GPU-hours read as crowded.
        count(*) > bit_count(bit_or(
            CAST(1 AS BIGINT) << (epoch_us(ts) % 3600000000 // CAST($interval_seconds * 1000000 AS BIGINT) % 62)
        )) AS crowded
    FROM gpu_samples
    GROUP BY cluster, node, gpu, 4, hour_number, 6, 7
)

-- one row per GPU-hour with a metric that may price: the statistics of its pricing metric (the first of the
-- preference with samples; arg_min skips the NULL group), and the other fields for the record (right-sizing,
-- memory high-water marks). One aggregation over the groups above, no join: nothing is held twice.
SELECT
    cluster,
    node,
    gpu,
    nullif(gpu_instance, '') AS gpu_instance,
    max(mig_profile) AS mig_profile,
    to_timestamp(hour_number * 3600) AS hour,
    nullif(job_id, '') AS job_id,
    max(instance_id) AS instance_id,
    $pricing_metrics[min(preference)] AS metric,
    least(arg_min(samples, preference) * $interval_seconds, 3600)::DOUBLE AS sampled_seconds,
    least(arg_min(active_samples, preference) * $interval_seconds, 3600)::DOUBLE AS active_seconds,
    least(arg_min(busy_samples, preference) * $interval_seconds, 3600)::DOUBLE AS busy_seconds,
    least(arg_min(active_busy_samples, preference) * $interval_seconds, 3600)::DOUBLE AS active_busy_seconds,
    -- activity is a ratio 0..1 (checked on input), so its mean is the busy share of the samples
    arg_min(busy_samples / samples, preference) AS mean_utilization,
    arg_min(p95_value, preference) AS p95_utilization,
    max(sm_active) AS sm_active,
    max(tensor_active) AS tensor_active,
    max(dram_active) AS dram_active,
    max(fb_used_mib) AS fb_used_mib,
    arg_min(samples, preference) AS samples,
    sum(copies) AS duplicate_samples,
    coalesce(bool_or(crowded) FILTER (WHERE preference IS NOT NULL), false) AS crowded,
    $source AS source
FROM per_metric
GROUP BY cluster, node, gpu, gpu_instance, hour_number, job_id
HAVING count(preference) > 0
