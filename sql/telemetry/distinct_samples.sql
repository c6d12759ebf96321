-- Raw samples with each copy counted once: one row per (cluster, node, GPU, MIG instance, job label, metric, time),
-- whatever labels the exporters that handed it over add (two exporters, a double scrape). Copies are merged as
-- Prometheus' avg by merges series: their mean, summed as DECIMAL so that any order of the copies gives it; peak is
-- the largest copy, as max by merges a high-water mark (FB_USED).
-- Input: temp view gpu_sample_copies (models.telemetry.GPU_SAMPLES_SCHEMA). No parameters: a view's body.
-- Output: the same columns, copies and peak, the copies merged into each row.
SELECT
    cluster,
    node,
    gpu,
    gpu_instance,
    max(mig_profile) AS mig_profile,
    ts,
    metric,
    CAST(avg(CAST(value AS DECIMAL(24, 9))) AS DOUBLE) AS value,
    job_id,
    max(instance_id) AS instance_id,
    count(*) - 1 AS copies,
    max(value) AS peak
FROM gpu_sample_copies
GROUP BY cluster, node, gpu, gpu_instance, job_id, metric, ts
