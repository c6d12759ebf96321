-- Every completed run (run group, not a session) per currency: what it cost to finish (all attempts, all
-- months, charged before it completed) split into run, idle, the attempts that failed, were preempted or were
-- cancelled, checkpoint storage and egress; retained checkpoints after completion and the ESTIMATED lost work
-- beside it. The parts are rounded to cents that add up to cost_to_finish (largest remainder); the exact
-- amounts are in allocation.cost_split and showback.job_costs (run_group_cost_to_finish).
WITH attempts AS (
    SELECT DISTINCT cluster, job_id, team, run_group, outcome, run_group_attempts, run_group_completed_at
    FROM showback.job_costs
    WHERE run_group_completed
),

pieces AS (
    SELECT
        a.cluster,
        a.team,
        a.run_group,
        s.BillingCurrency AS currency,
        a.run_group_attempts AS attempts,
        a.run_group_completed_at AS completed_at,
        s.ChargePeriodStart < a.run_group_completed_at AS before_completion,
        -- GPU time of an attempt that did not complete is counted by its outcome, not as run or idle
        CASE
            WHEN s.category IN ('run', 'idle') AND a.outcome IN ('failed', 'preempted', 'cancelled') THEN a.outcome
            ELSE s.category
        END AS part,
        s.EffectiveCost,
        CAST(s.gpu_hours AS DECIMAL(38, 10)) AS gpu_hours
    FROM allocation.cost_split AS s
    JOIN attempts AS a USING (cluster, job_id)
),

runs AS (
    SELECT
        cluster,
        team,
        run_group,
        currency,
        attempts,
        completed_at,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'run'), 0) AS run_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'idle'), 0) AS idle_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'failed'), 0) AS failed_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'preempted'), 0) AS preempted_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'cancelled'), 0) AS cancelled_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'checkpoint_storage'), 0)
            AS checkpoint_storage_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE before_completion AND part = 'egress'), 0) AS egress_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE NOT before_completion), 0) AS retained_checkpoint_cost,
        coalesce(sum(gpu_hours) FILTER (WHERE before_completion), 0) AS gpu_hours
    FROM pieces
    GROUP BY ALL
),

lost AS (
    SELECT
        cluster,
        team,
        run_group,
        currency,
        sum(estimated_lost_work_cost) AS estimated_lost_work_cost,
        sum(estimated_lost_gpu_hours) AS estimated_lost_gpu_hours
    FROM showback.job_costs
    WHERE run_group_completed
    GROUP BY ALL
),

rounded AS (
    SELECT
        *,
        cents_that_foot([
            run_cost, idle_cost, failed_cost, preempted_cost, cancelled_cost, checkpoint_storage_cost, egress_cost
        ]) AS parts
    FROM runs
)

SELECT
    -- the month team_month counts the run in (completed_runs, cost_per_completed_run)
    CAST(date_trunc('month', r.completed_at) AS DATE) AS completed_month,
    r.team,
    r.cluster,
    r.run_group,
    r.currency,
    r.attempts,
    r.completed_at,
    CAST(list_sum(r.parts) AS DECIMAL(18, 2)) AS cost_to_finish,
    r.parts[1] AS run_cost,
    r.parts[2] AS idle_cost,
    r.parts[3] AS failed_attempts_cost,
    r.parts[4] AS preempted_attempts_cost,
    r.parts[5] AS cancelled_attempts_cost,
    r.parts[6] AS checkpoint_storage_cost,
    r.parts[7] AS egress_cost,
    cents(r.retained_checkpoint_cost) AS retained_checkpoint_cost,
    tenths(r.gpu_hours) AS gpu_hours,
    cents(l.estimated_lost_work_cost) AS estimated_lost_work_cost,
    tenths(l.estimated_lost_gpu_hours) AS estimated_lost_gpu_hours
FROM rounded AS r
LEFT JOIN lost AS l USING (cluster, team, run_group, currency)
ORDER BY completed_month, r.team, r.cluster, r.run_group, r.currency
