-- showback.job_costs: what each job cost per billing month and currency, and what its run group cost to
-- finish: every attempt (failed, preempted, restarted) of a run that eventually completed, over all months.

WITH jobs AS (
    SELECT j.*, coalesce(m.team, j.account, 'unallocated') AS team
    FROM gpu.jobs AS j
    LEFT JOIN alloc.job_account_teams AS m ON m.account = j.account
),

job_split AS (
    SELECT
        BillingPeriodStart,
        BillingCurrency,
        cluster,
        job_id,
        sum(EffectiveCost) FILTER (WHERE category = 'run') AS run_cost,
        sum(EffectiveCost) FILTER (WHERE category = 'idle') AS idle_cost,
        sum(EffectiveCost) FILTER (WHERE category = 'checkpoint_storage') AS checkpoint_storage_cost,
        sum(EffectiveCost) FILTER (WHERE category = 'egress') AS egress_cost,
        sum(EffectiveCost) AS total_cost,
        sum(BilledCost) AS billed_cost,
        -- DOUBLE measures are summed as DECIMAL: exact, so independent of row order (reruns give the same rows)
        CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) AS DOUBLE) AS gpu_hours,
        CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) FILTER (WHERE category = 'run') AS DOUBLE) AS active_gpu_hours
    FROM allocation.cost_split
    WHERE job_id IS NOT NULL
    GROUP BY ALL
),

costed AS (
    SELECT
        billing_month(s.BillingPeriodStart) AS billing_month,
        s.BillingCurrency AS currency,
        j.team,
        j.cluster,
        j.job_id,
        j.name,
        j.project,
        j."user",
        j.run_group,
        j.state,
        j.start_time,
        j.end_time,
        j.gpu_count,
        j.gpu_model,
        coalesce(s.run_cost, 0) AS run_cost,
        coalesce(s.idle_cost, 0) AS idle_cost,
        coalesce(s.checkpoint_storage_cost, 0) AS checkpoint_storage_cost,
        coalesce(s.egress_cost, 0) AS egress_cost,
        s.total_cost,
        s.billed_cost,
        s.gpu_hours,
        coalesce(s.active_gpu_hours, 0) AS active_gpu_hours
    FROM job_split AS s
    JOIN jobs AS j USING (cluster, job_id)
),

run_groups AS (
    SELECT
        j.cluster,
        j.team,
        j.run_group,
        count(*) AS attempts,
        bool_or(j.state = 'COMPLETED') AS completed,
        max(j.end_time) FILTER (WHERE j.state = 'COMPLETED') AS completed_at
    FROM jobs AS j
    GROUP BY ALL
),

run_group_costs AS (
    SELECT cluster, team, run_group, currency, sum(total_cost) AS run_group_cost
    FROM costed
    GROUP BY ALL
)

SELECT
    c.*,
    c.state NOT IN ('COMPLETED', 'RUNNING', 'UNKNOWN') AS failed,
    g.attempts AS run_group_attempts,
    g.completed AS run_group_completed,
    g.completed_at AS run_group_completed_at,
    rc.run_group_cost,
    CASE WHEN g.completed THEN rc.run_group_cost END AS run_group_cost_to_finish
FROM costed AS c
JOIN run_groups AS g USING (cluster, team, run_group)
JOIN run_group_costs AS rc USING (cluster, team, run_group, currency)
