-- gpu.usage for one billing month: GPU-seconds each job held, and how they were used, per (cluster, node, hour).
-- Parameters: $billing_period_start; $period_start, $period_end: the hours its charges cover (UTC); $pricing
-- ('activity' or 'active-time', models.allocation.PRICING_MODES).
-- Allocation comes from the jobs: GPUs spread evenly over their nodes, a MIG slice weighted by its compute
-- share (1g = 1/7 of the GPU). Activity comes from gpu.activity, attributed in this order (attribution column):
--   * job-label: samples labelled with the job (Kubernetes pod, dcgm-exporter hpc_job) are the job's own;
--   * gpu-index: unlabelled samples of the GPUs the job held (gpu_ids from the scheduler or a prolog map);
--   * node-shared: unlabelled samples of the node's other GPUs give the node-hour's activity, shared by the jobs
--     left in proportion to what they held, never above what they held (GPUs no job holds are usually the idle
--     ones): ambiguous, so it is flagged and reported as a data-quality figure;
--   * allocation-only: a job with no samples at all counts as fully used (schedulers without utilization are
--     priced by allocation, as OpenCost prices them).
-- Measured ratios (over sampled time) apply to the held time. run_seconds = held x activity ('activity') or the
-- held time above the idle threshold ('active-time'); underutilized_seconds = active time below saturation
-- ('activity' only); the rest of the held time is inactive.
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
        coalesce(j.scheduler_job_id, j.job_id) AS scheduler_job_id,
        j.nodes,
        j.gpu_count,
        j.gpu_ids,
        -- a MIG slice's share of its GPU: "3g.40gb" is 3 of the 7 compute slices of an A100 or H100
        coalesce(TRY_CAST(regexp_extract(j.mig_profile, '^([0-9]+)g\.', 1) AS DOUBLE) / 7, 1) AS gpu_share,
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
    SELECT
        cluster,
        job_id,
        scheduler_job_id,
        node,
        gpu_count * gpu_share / len(nodes) AS gpus_per_node,
        -- the GPU indices held on this node, when the scheduler says which
        list_transform(
            list_filter(coalesce(gpu_ids, []), lambda g: starts_with(g, node || ':')),
            lambda g: g[len(node) + 2:]
        ) AS node_gpus,
        start_time,
        end_time
    FROM (SELECT *, unnest(nodes) AS node FROM jobs)
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
        scheduler_job_id,
        node_gpus,
        gpus_per_node
        * (epoch(least(end_time, hour + INTERVAL 1 HOUR)) - epoch(greatest(start_time, hour))) AS allocated_seconds
    FROM job_hours
),

-- jobs whose own samples cover the node-hour
with_labels AS (
    SELECT DISTINCT a.cluster, a.node, a.hour, a.job_id
    FROM allocated AS a
    JOIN activity AS u ON u.cluster = a.cluster AND u.node = a.node AND u.hour = a.hour
        AND u.job_id = a.scheduler_job_id AND u.sampled_seconds > 0
),

-- GPUs some job without its own samples holds by index: their samples are that job's, not the node's to share
claimed AS (
    SELECT DISTINCT a.cluster, a.node, a.hour, a.job_id, unnest(a.node_gpus) AS gpu
    FROM allocated AS a
    ANTI JOIN with_labels AS w USING (cluster, node, hour, job_id)
),

-- each activity row with what it measures: a scheduler job id (job-label), a job by index (gpu-index), or the
-- node-hour's pool of unclaimed GPUs (node-shared, target NULL)
attributed AS (
    SELECT u.*, 'job-label' AS attribution, u.job_id AS target
    FROM activity AS u
    WHERE u.job_id IS NOT NULL
    UNION ALL BY NAME
    SELECT u.*, 'gpu-index' AS attribution, c.job_id AS target
    FROM activity AS u
    JOIN claimed AS c USING (cluster, node, hour, gpu)
    WHERE u.job_id IS NULL
    UNION ALL BY NAME
    SELECT u.*, 'node-shared' AS attribution, NULL AS target
    FROM activity AS u
    ANTI JOIN claimed AS c USING (cluster, node, hour, gpu)
    WHERE u.job_id IS NULL
),

-- usage measures as sums, so that ratios are taken over sampled time
measures AS (
    SELECT
        cluster,
        node,
        hour,
        attribution,
        target,
        count(DISTINCT gpu) * 3600 AS pool_seconds,
        sum(sampled_seconds) AS sampled,
        sum(active_seconds) AS active,
        sum(coalesce(busy_seconds, active_seconds)) AS busy,
        sum(coalesce(active_busy_seconds, active_seconds)) AS active_busy,
        -- activity means over exact DECIMAL sums: a rebuild gives the same means, whatever the row order
        sum(CAST(mean_utilization * sampled_seconds AS DECIMAL(38, 10)))
            / nullif(sum(CAST(sampled_seconds AS DECIMAL(38, 10))), 0) AS mean_utilization,
        max(p95_utilization) AS p95_utilization,
        sum(CAST(sm_active * sampled_seconds AS DECIMAL(38, 10)))
            / nullif(sum(CAST(sampled_seconds AS DECIMAL(38, 10))) FILTER (WHERE sm_active IS NOT NULL), 0)
            AS sm_active,
        sum(CAST(tensor_active * sampled_seconds AS DECIMAL(38, 10)))
            / nullif(sum(CAST(sampled_seconds AS DECIMAL(38, 10))) FILTER (WHERE tensor_active IS NOT NULL), 0)
            AS tensor_active,
        sum(CAST(dram_active * sampled_seconds AS DECIMAL(38, 10)))
            / nullif(sum(CAST(sampled_seconds AS DECIMAL(38, 10))) FILTER (WHERE dram_active IS NOT NULL), 0)
            AS dram_active,
        max(fb_used_mib) AS fb_used_mib,
        min(metric) AS metric
    FROM attributed
    GROUP BY ALL
    HAVING sum(sampled_seconds) > 0
),

-- each job-node-hour's measure: its own samples, else its GPUs', else the node pool's
chosen AS (
    SELECT a.*, coalesce(l.attribution, i.attribution, p.attribution, 'allocation-only') AS attribution
    FROM allocated AS a
    LEFT JOIN measures AS l ON l.cluster = a.cluster AND l.node = a.node AND l.hour = a.hour
        AND l.attribution = 'job-label' AND l.target = a.scheduler_job_id
    LEFT JOIN measures AS i ON i.cluster = a.cluster AND i.node = a.node AND i.hour = a.hour
        AND i.attribution = 'gpu-index' AND i.target = a.job_id
    LEFT JOIN measures AS p ON p.cluster = a.cluster AND p.node = a.node AND p.hour = a.hour
        AND p.attribution = 'node-shared'
),

-- GPU-seconds held on each node-hour by the jobs the node pool is shared by
shared_held AS (
    SELECT cluster, node, hour, sum(allocated_seconds) AS allocated_seconds
    FROM chosen
    WHERE attribution = 'node-shared'
    GROUP BY ALL
),

-- every job-node-hour with the fractions of its held time that were busy, active and active-busy
measured AS (
    SELECT
        c.cluster,
        c.node,
        c.hour,
        c.job_id,
        c.allocated_seconds,
        c.attribution,
        -- the node pool's GPU-seconds are shared over the held time (scaled up for sampling gaps), at most all
        CASE WHEN c.attribution = 'node-shared' THEN m.pool_seconds / nullif(h.allocated_seconds, 0) ELSE 1 END
            AS scale,
        coalesce(m.busy / m.sampled, 1) AS busy_fraction,
        coalesce(m.active / m.sampled, 1) AS active_fraction,
        coalesce(m.active_busy / m.sampled, 1) AS active_busy_fraction,
        m.mean_utilization,
        m.p95_utilization,
        m.sm_active,
        m.tensor_active,
        m.dram_active,
        m.fb_used_mib,
        coalesce(m.metric, 'allocation-only') AS metric
    FROM chosen AS c
    LEFT JOIN measures AS m ON m.cluster = c.cluster AND m.node = c.node AND m.hour = c.hour
        AND m.attribution = c.attribution
        AND m.target IS NOT DISTINCT FROM CASE c.attribution
            WHEN 'job-label' THEN c.scheduler_job_id WHEN 'gpu-index' THEN c.job_id END
    -- equality keys only (a condition on c alone would make this a nested-loop join); scale reads h for
    -- node-shared rows only
    LEFT JOIN shared_held AS h ON h.cluster = c.cluster AND h.node = c.node AND h.hour = c.hour
),

-- a job's rows of one node-hour summed (a requeued job can hold the same node twice in an hour)
per_job AS (
    SELECT
        cluster,
        node,
        hour,
        job_id,
        sum(allocated_seconds) AS allocated_seconds,
        sum(allocated_seconds * least(1, active_fraction * scale)) AS active_seconds,
        sum(allocated_seconds * least(1, busy_fraction * scale)) AS busy_seconds,
        sum(allocated_seconds * least(1, active_busy_fraction * scale, active_fraction * scale)) AS active_busy_seconds,
        max(attribution) AS attribution,
        max(mean_utilization) AS mean_utilization,
        max(p95_utilization) AS p95_utilization,
        max(sm_active) AS sm_active,
        max(tensor_active) AS tensor_active,
        max(dram_active) AS dram_active,
        max(fb_used_mib) AS fb_used_mib,
        min(metric) AS metric
    FROM measured
    GROUP BY ALL
),

-- a node's instance by its samples' label; hours without samples keep the one last seen
instances AS (
    SELECT cluster, node, hour, max(instance_id) AS instance_id
    FROM gpu.activity
    WHERE instance_id IS NOT NULL AND hour < $period_end
    GROUP BY ALL
),

priced AS (
    SELECT
        *,
        CASE WHEN $pricing = 'active-time' THEN active_seconds ELSE busy_seconds END AS run_seconds,
        CASE WHEN $pricing = 'active-time' THEN 0 ELSE active_seconds - active_busy_seconds END AS below_saturation
    FROM per_job
)

SELECT
    CAST($billing_period_start AS TIMESTAMPTZ) AS billing_period_start,
    u.cluster,
    u.node,
    u.hour,
    u.job_id,
    coalesce(i.instance_id, n.resource_id) AS resource_id,
    u.allocated_seconds,
    u.active_seconds,
    u.busy_seconds,
    least(u.allocated_seconds, u.run_seconds) AS run_seconds,
    greatest(0, least(u.allocated_seconds - least(u.allocated_seconds, u.run_seconds), u.below_saturation))
        AS underutilized_seconds,
    u.mean_utilization,
    u.p95_utilization,
    u.sm_active,
    u.tensor_active,
    u.dram_active,
    u.fb_used_mib,
    u.metric,
    u.attribution
FROM priced AS u
ASOF LEFT JOIN instances AS i ON i.cluster = u.cluster AND i.node = u.node AND u.hour >= i.hour
LEFT JOIN alloc.nodes AS n ON n.cluster = u.cluster AND n.node = u.node
