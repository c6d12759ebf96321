-- showback.team_month: per billing month, team and currency, where the money went (EffectiveCost; BilledCost
-- beside it), idle by kind, GPU-hours and utilization, what failed, preempted and cancelled attempts cost while
-- they ran, interactive sessions, retained checkpoints and the cost per completed run (showback.job_costs says
-- what each means). A run counts in the month its final attempt completed, at its cost to finish (all attempts,
-- all months, frozen at completion). node_shared_gpu_cost is the GPU cost priced by node-level activity shared
-- between jobs (ambiguous attribution): a data-quality figure.

WITH split AS (
    SELECT * FROM allocation.cost_split
),

categories AS (
    SELECT
        billing_month(BillingPeriodStart) AS billing_month,
        team,
        BillingCurrency AS currency,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'run'), 0) AS run_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'idle'), 0) AS idle_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'idle' AND idle_kind = 'allocated'), 0)
            AS idle_allocated_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'idle' AND idle_kind = 'underutilized'), 0)
            AS idle_underutilized_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'idle' AND idle_kind = 'unallocated'), 0)
            AS idle_unallocated_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'idle' AND idle_kind = 'unused_commitment'), 0)
            AS idle_unused_commitment_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'checkpoint_storage'), 0) AS checkpoint_storage_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'egress'), 0) AS egress_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category = 'other'), 0) AS other_cost,
        sum(EffectiveCost) AS total_cost,
        sum(BilledCost) AS billed_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE allocation_basis = 'node-shared'), 0) AS node_shared_gpu_cost,
        -- DOUBLE measures are summed as DECIMAL: exact, so independent of row order (reruns give the same rows)
        CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) AS DOUBLE) AS gpu_hours,
        CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) FILTER (WHERE category = 'run') AS DOUBLE) AS active_gpu_hours
    FROM split
    GROUP BY ALL
),

jobs AS (
    SELECT * FROM showback.job_costs
),

utilization AS (
    SELECT
        CAST(u.billing_period_start AS DATE) AS billing_month,
        coalesce(m.team, j.account, 'unallocated') AS team,
        CAST(sum(CAST(u.mean_utilization * u.allocated_seconds AS DECIMAL(38, 10))) AS DOUBLE)
            / nullif(CAST(sum(CAST(u.allocated_seconds AS DECIMAL(38, 10))) AS DOUBLE), 0) AS mean_gpu_utilization
    FROM gpu.usage AS u
    JOIN gpu.jobs AS j USING (cluster, job_id)
    LEFT JOIN alloc.job_account_teams AS m ON m.account = j.account
    WHERE u.mean_utilization IS NOT NULL
    GROUP BY ALL
),

attempts AS (
    SELECT
        billing_month,
        team,
        currency,
        coalesce(sum(attempt_cost) FILTER (WHERE outcome = 'failed' AND NOT session), 0) AS failed_run_cost,
        coalesce(sum(attempt_cost) FILTER (WHERE outcome = 'preempted' AND NOT session), 0) AS preempted_run_cost,
        coalesce(sum(attempt_cost) FILTER (WHERE outcome = 'cancelled' AND NOT session), 0) AS cancelled_run_cost,
        coalesce(sum(estimated_lost_work_cost), 0) AS estimated_lost_work_cost,
        coalesce(sum(total_cost) FILTER (WHERE session), 0) AS session_cost,
        count(DISTINCT job_id) FILTER (WHERE session) AS sessions,
        sum(retained_checkpoint_cost) AS retained_checkpoint_cost
    FROM jobs
    GROUP BY ALL
),

completed AS (
    SELECT
        CAST(date_trunc('month', run_group_completed_at) AS DATE) AS billing_month,
        team,
        currency,
        count(*) AS completed_runs,
        sum(run_group_cost) AS completed_run_cost
    FROM (SELECT DISTINCT cluster, team, run_group, currency, run_group_completed_at,
                 run_group_cost_to_finish AS run_group_cost FROM jobs
          WHERE run_group_completed)
    GROUP BY ALL
)

SELECT
    c.billing_month,
    c.team,
    c.currency,
    c.run_cost,
    c.idle_cost,
    c.idle_allocated_cost,
    c.idle_underutilized_cost,
    c.idle_unallocated_cost,
    c.idle_unused_commitment_cost,
    c.checkpoint_storage_cost,
    c.egress_cost,
    c.other_cost,
    c.total_cost,
    c.billed_cost,
    c.gpu_hours,
    coalesce(c.active_gpu_hours, 0) AS active_gpu_hours,
    u.mean_gpu_utilization,
    coalesce(f.failed_run_cost, 0) AS failed_run_cost,
    coalesce(f.preempted_run_cost, 0) AS preempted_run_cost,
    coalesce(f.cancelled_run_cost, 0) AS cancelled_run_cost,
    coalesce(f.estimated_lost_work_cost, 0) AS estimated_lost_work_cost,
    coalesce(f.retained_checkpoint_cost, 0) AS retained_checkpoint_cost,
    coalesce(f.session_cost, 0) AS session_cost,
    coalesce(f.sessions, 0) AS sessions,
    c.node_shared_gpu_cost,
    coalesce(d.completed_runs, 0) AS completed_runs,
    CAST(d.completed_run_cost / d.completed_runs AS DECIMAL(38, 10)) AS cost_per_completed_run
FROM categories AS c
LEFT JOIN utilization AS u USING (billing_month, team)
LEFT JOIN attempts AS f USING (billing_month, team, currency)
LEFT JOIN completed AS d USING (billing_month, team, currency)
