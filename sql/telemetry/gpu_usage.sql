-- gpu.usage for one billing month: GPU-seconds each job held and used per (cluster, node, hour).
-- Parameters: $billing_period_start; $period_start, $period_end: the hours its charges cover (UTC).
-- Allocation comes from the jobs (GPUs spread evenly over their nodes); activity from gpu.activity:
--   * samples labelled with the job (Kubernetes pod, dcgm-exporter hpc_job) are the job's own;
--   * unlabelled samples give the node-hour's active GPU-seconds (scaled up for gaps in sampling), shared
--     by the jobs without labelled samples in proportion to what they held, never above what they held
--     (GPUs no job holds are usually the idle ones);
--   * a job with no samples at all counts as active for its whole allocation (metric 'allocation-only'),
--     as schedulers that report no utilization are priced by allocation.
-- A running job's allocation ends at the cluster's last telemetry hour, so reruns give the same rows.

WITH activity AS (
    SELECT * FROM gpu.activity WHERE hour >= $period_start AND hour < $period_end
),

horizons AS (
    SELECT cluster, max(hour) + INTERVAL 1 HOUR AS horizon FROM gpu.activity GROUP BY cluster
),

jobs AS (
    SELECT
        j.cluster,
        j.job_id,
        j.nodes,
        j.gpu_count,
        j.start_time,
        least(coalesce(j.end_time, h.horizon, $period_end), $period_end) AS end_time
    FROM gpu.jobs AS j
    LEFT JOIN horizons AS h USING (cluster)
    WHERE j.start_time < $period_end
      AND coalesce(j.end_time, $period_end) > $period_start
      AND len(j.nodes) > 0
      AND j.gpu_count > 0
),

job_nodes AS (
    SELECT cluster, job_id, unnest(nodes) AS node, gpu_count / len(nodes) AS gpus_per_node, start_time, end_time
    FROM jobs
    WHERE end_time > start_time
),

-- a second unnest in its own CTE: two in one SELECT would be zipped, not crossed
job_hours AS (
    SELECT
        *,
        unnest(range(date_trunc('hour', greatest(start_time, $period_start)), end_time, INTERVAL 1 HOUR)) AS hour
    FROM job_nodes
),

allocated AS (
    SELECT
        cluster,
        node,
        hour,
        job_id,
        sum(
            gpus_per_node
            * (epoch(least(end_time, hour + INTERVAL 1 HOUR)) - epoch(greatest(start_time, hour)))
        ) AS allocated_seconds
    FROM job_hours
    GROUP BY ALL
),

labelled AS (
    SELECT
        cluster,
        node,
        hour,
        job_id,
        sum(active_seconds) AS active_seconds,
        sum(sampled_seconds) AS sampled_seconds,
        sum(mean_utilization * sampled_seconds) AS utilization_seconds,
        min(metric) AS metric
    FROM activity
    WHERE job_id IS NOT NULL
    GROUP BY ALL
),

unlabelled AS (
    SELECT
        cluster,
        node,
        hour,
        sum(active_seconds) * count(DISTINCT gpu) * 3600 / nullif(sum(sampled_seconds), 0) AS active_gpu_seconds,
        sum(mean_utilization * sampled_seconds) / nullif(sum(sampled_seconds), 0) AS mean_utilization,
        min(metric) AS metric
    FROM activity
    WHERE job_id IS NULL
    GROUP BY ALL
),

-- GPU-seconds held on each node-hour by jobs that have no samples of their own
unlabelled_held AS (
    SELECT a.cluster, a.node, a.hour, sum(a.allocated_seconds) AS allocated_seconds
    FROM allocated AS a
    LEFT JOIN labelled AS l USING (cluster, node, hour, job_id)
    WHERE l.job_id IS NULL
    GROUP BY ALL
),

-- a node's instance by its samples' label; hours without samples keep the one last seen
instances AS (
    SELECT cluster, node, hour, max(instance_id) AS instance_id
    FROM gpu.activity
    WHERE instance_id IS NOT NULL AND hour < $period_end
    GROUP BY ALL
)

SELECT
    CAST($billing_period_start AS TIMESTAMPTZ) AS billing_period_start,
    a.cluster,
    a.node,
    a.hour,
    a.job_id,
    coalesce(i.instance_id, n.resource_id) AS resource_id,
    a.allocated_seconds,
    least(
        a.allocated_seconds,
        CASE
            WHEN l.job_id IS NOT NULL THEN l.active_seconds
            WHEN u.active_gpu_seconds IS NOT NULL
                THEN a.allocated_seconds * least(1, u.active_gpu_seconds / nullif(h.allocated_seconds, 0))
            ELSE a.allocated_seconds
        END
    ) AS active_seconds,
    CASE
        WHEN l.job_id IS NOT NULL THEN l.utilization_seconds / nullif(l.sampled_seconds, 0)
        ELSE u.mean_utilization
    END AS mean_utilization,
    coalesce(l.metric, u.metric, 'allocation-only') AS metric
FROM allocated AS a
LEFT JOIN labelled AS l USING (cluster, node, hour, job_id)
LEFT JOIN unlabelled AS u USING (cluster, node, hour)
LEFT JOIN unlabelled_held AS h USING (cluster, node, hour)
ASOF LEFT JOIN instances AS i ON i.cluster = a.cluster AND i.node = a.node AND a.hour >= i.hour
LEFT JOIN alloc.nodes AS n USING (cluster, node)
