-- Report lines about one month's split that a reader of its figures should know. Parameters: $period_start (the
-- month's UTC start, keying gpu.usage), $billing_month (its first day).
-- Oversubscription: node-hours whose jobs held more GPUs than the node has (the instance type's GPUs, else the
-- GPUs its samples show). The split prices such an hour's capacity by what was held, so no one is charged twice,
-- but the schedule or the telemetry is wrong and it is reported, not absorbed.
WITH held AS (
    SELECT cluster, node, hour, resource_id, sum(allocated_seconds) / 3600 AS held_gpus
    FROM gpu.usage
    WHERE billing_period_start = $period_start
    GROUP BY ALL
),

billed_gpus AS (
    SELECT c.ResourceId AS resource_id, max(g.gpu_count) AS gpus
    FROM focus.costs AS c
    JOIN ref.gpu_instances AS g ON g.provider = c.ProviderName AND g.instance_type = c.x_InstanceType
    WHERE billing_month(c.BillingPeriodStart) = $billing_month AND c.ResourceId IS NOT NULL
    GROUP BY ALL
),

sampled_gpus AS (
    SELECT cluster, node, hour, count(DISTINCT gpu) AS gpus
    FROM gpu.activity
    WHERE hour >= $period_start AND gpu_instance IS NULL
    GROUP BY ALL
),

oversubscribed AS (
    SELECT h.*, coalesce(b.gpus, s.gpus) AS gpus
    FROM held AS h
    LEFT JOIN billed_gpus AS b USING (resource_id)
    LEFT JOIN sampled_gpus AS s USING (cluster, node, hour)
    -- a millisecond of rounding is no oversubscription
    WHERE h.held_gpus > coalesce(b.gpus, s.gpus) + 0.001
),

gpu_cost AS (
    SELECT
        BillingCurrency AS currency,
        sum(EffectiveCost) FILTER (WHERE allocation_basis = 'node-shared') AS node_shared,
        sum(EffectiveCost) AS priced
    FROM allocation.cost_split
    WHERE billing_month(BillingPeriodStart) = $billing_month AND category IN ('run', 'idle') AND job_id IS NOT NULL
    GROUP BY ALL
),

notes AS (
    SELECT 0 AS kind, NULL AS currency, format(
        '{} node-hour(s) held more GPUs than the node has (e.g. {} at {}: {} GPUs held of {}); check the schedule',
        count(*), arg_min(cluster || '/' || node, hour), strftime(min(hour), '%Y-%m-%d %H:%M'),
        round(arg_min(held_gpus, hour), 2), arg_min(gpus, hour)
    ) AS note
    FROM oversubscribed
    HAVING count(*) > 0
    UNION ALL
    SELECT 1, currency, format(
        '{}% of the {} GPU cost of jobs was priced by node-level activity shared between jobs (no job label or '
        || 'GPU index told which GPU was whose)',
        round(100 * node_shared / priced, 1), currency
    )
    FROM gpu_cost
    WHERE node_shared > 0
)

-- one order, so that reruns report the same notes
SELECT note FROM notes ORDER BY kind, currency
