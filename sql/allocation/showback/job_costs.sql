-- showback.job_costs: what each job (attempt) cost per billing month and currency, what its outcome was, and
-- what its run cost to finish.
-- * A run group is what the scheduler says (gpu.jobs.run_group), else the job's name when [runs] group_by_name,
--   else the job's requeue chain (its scheduler job id): never a name by default.
-- * Interactive sessions (partition, QOS or name patterns of [runs]) are sessions, not runs.
-- * A run is completed when its final attempt (the last to start) completed. Its cost to finish is every
--   attempt's cost charged before it completed, over all months, so it is frozen at completion; what its jobs
--   are charged after the final attempt ended (retained checkpoints) is retained_checkpoint_cost.
-- * An attempt's own cost is what was charged while it ran (charge period starting before its end).
-- * Lost work (an ESTIMATE): for a failed, preempted or cancelled attempt, its GPU cost x the share of its held
--   time after the last checkpoint it wrote (newest object under its checkpoint_uri written within the attempt;
--   an object's write time is its last_modified, else the first listing that shows it); all of it when it
--   wrote none.
-- * GPU model: the scheduler's, else the models of the catalog instance types (ref.gpu_instances) its GPU time
--   was charged on, in name order joined by '+' (a job spanning H100 and H200 nodes is H100+H200).

WITH settings AS (
    SELECT group_by_name = 'true' AS group_by_name FROM alloc.settings
),

jobs AS (
    SELECT
        j.*,
        coalesce(m.team, j.account, 'unallocated') AS team,
        coalesce(o.outcome, 'unknown') AS outcome,
        EXISTS (
            SELECT 1 FROM alloc.session_patterns AS p
            WHERE (p.field = 'partition' AND j.partition GLOB p.pattern)
               OR (p.field = 'qos' AND j.qos GLOB p.pattern)
               OR (p.field = 'name' AND j.name GLOB p.pattern)
        ) AS session
    FROM gpu.jobs AS j
    LEFT JOIN alloc.job_account_teams AS m ON m.account = j.account
    LEFT JOIN alloc.job_outcomes AS o ON o.state = j.state
),

grouped AS (
    SELECT
        j.* EXCLUDE (run_group),
        coalesce(j.run_group, CASE WHEN s.group_by_name THEN j.name END, coalesce(j.scheduler_job_id, j.job_id))
            AS run_group
    FROM jobs AS j
    CROSS JOIN settings AS s
),

-- the final attempt of each run group: the last to start
run_groups AS (
    SELECT
        cluster,
        team,
        run_group,
        count(*) AS attempts,
        arg_max(state, (start_time, job_id)) = 'COMPLETED' AS completed,
        arg_max(end_time, (start_time, job_id)) AS finished_at,
        bool_and(session) AS session
    FROM grouped
    GROUP BY ALL
),

pieces AS (
    SELECT
        s.*,
        g.run_group,
        g.team AS job_team,
        g.end_time AS attempt_end,
        r.finished_at,
        r.completed
    FROM allocation.cost_split AS s
    JOIN grouped AS g USING (cluster, job_id)
    JOIN run_groups AS r ON r.cluster = g.cluster AND r.team = g.team AND r.run_group = g.run_group
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
        sum(EffectiveCost) FILTER (WHERE attempt_end IS NULL OR ChargePeriodStart < attempt_end) AS attempt_cost,
        sum(EffectiveCost) FILTER (
            WHERE category IN ('run', 'idle') AND (attempt_end IS NULL OR ChargePeriodStart < attempt_end)
        ) AS attempt_gpu_cost,
        sum(EffectiveCost) FILTER (WHERE ChargePeriodStart >= finished_at) AS retained_checkpoint_cost,
        sum(EffectiveCost) FILTER (WHERE completed AND ChargePeriodStart < finished_at) AS cost_to_finish,
        -- DOUBLE measures are summed as DECIMAL: exact, so independent of row order (reruns give the same rows)
        CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) AS DOUBLE) AS gpu_hours,
        CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) FILTER (WHERE category = 'run') AS DOUBLE) AS active_gpu_hours
    FROM pieces
    GROUP BY ALL
),

-- the GPU models of the instances each job's GPU time was charged on (the instance type of each charge)
catalog_models AS (
    SELECT s.cluster, s.job_id, string_agg(DISTINCT g.gpu_model, '+' ORDER BY g.gpu_model) AS gpu_model
    FROM allocation.cost_split AS s
    JOIN focus.costs AS c ON c.x_DeliveryId = s.x_DeliveryId AND c.x_SourceLineItemId = s.x_SourceLineItemId
    JOIN ref.gpu_instances AS g ON g.provider = c.ProviderName AND g.instance_type = c.x_InstanceType
    WHERE s.category IN ('run', 'idle') AND s.job_id IS NOT NULL
    GROUP BY ALL
),

-- the newest checkpoint each attempt wrote under its checkpoint_uri while it ran
checkpoint_writes AS (
    SELECT uri, min(coalesce(last_modified, as_of)) AS written_at
    FROM gpu.checkpoint_bytes
    WHERE bytes > 0
    GROUP BY ALL
),

last_checkpoints AS (
    SELECT j.cluster, j.job_id, max(w.written_at) AS last_checkpoint
    FROM grouped AS j
    JOIN checkpoint_writes AS w
        ON starts_with(w.uri, j.checkpoint_uri) AND w.written_at >= j.start_time AND w.written_at <= j.end_time
    GROUP BY ALL
),

lost AS (
    SELECT
        j.cluster,
        j.job_id,
        c.last_checkpoint,
        (epoch(j.end_time) - epoch(greatest(coalesce(c.last_checkpoint, j.start_time), j.start_time)))
            / nullif(epoch(j.end_time) - epoch(j.start_time), 0) AS lost_share
    FROM grouped AS j
    LEFT JOIN last_checkpoints AS c USING (cluster, job_id)
    WHERE j.outcome IN ('failed', 'preempted', 'cancelled') AND NOT j.session AND j.end_time IS NOT NULL
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
        j.outcome,
        j.session,
        j.start_time,
        j.end_time,
        j.gpu_count,
        coalesce(j.gpu_model, m.gpu_model) AS gpu_model,
        coalesce(s.run_cost, 0) AS run_cost,
        coalesce(s.idle_cost, 0) AS idle_cost,
        coalesce(s.checkpoint_storage_cost, 0) AS checkpoint_storage_cost,
        coalesce(s.egress_cost, 0) AS egress_cost,
        s.total_cost,
        s.billed_cost,
        coalesce(s.attempt_cost, 0) AS attempt_cost,
        coalesce(s.retained_checkpoint_cost, 0) AS retained_checkpoint_cost,
        coalesce(s.cost_to_finish, 0) AS cost_to_finish_part,
        l.last_checkpoint,
        CAST(round(coalesce(s.attempt_gpu_cost, 0) * CAST(l.lost_share AS DECIMAL(38, 10)), 10) AS DECIMAL(38, 10))
            AS estimated_lost_work_cost,
        l.lost_share * j.gpu_count * (epoch(j.end_time) - epoch(j.start_time)) / 3600 AS estimated_lost_gpu_hours,
        s.gpu_hours,
        coalesce(s.active_gpu_hours, 0) AS active_gpu_hours
    FROM job_split AS s
    JOIN grouped AS j USING (cluster, job_id)
    LEFT JOIN lost AS l USING (cluster, job_id)
    LEFT JOIN catalog_models AS m USING (cluster, job_id)
),

run_group_costs AS (
    SELECT cluster, team, run_group, currency,
        sum(total_cost) AS run_group_cost,
        sum(cost_to_finish_part) AS run_group_cost_to_finish
    FROM costed
    GROUP BY ALL
)

SELECT
    c.* EXCLUDE (cost_to_finish_part),
    c.outcome = 'failed' AS failed,
    g.attempts AS run_group_attempts,
    g.completed AND NOT g.session AS run_group_completed,
    CASE WHEN g.completed AND NOT g.session THEN g.finished_at END AS run_group_completed_at,
    rc.run_group_cost,
    CASE WHEN g.completed AND NOT g.session THEN rc.run_group_cost_to_finish END AS run_group_cost_to_finish
FROM costed AS c
JOIN run_groups AS g USING (cluster, team, run_group)
JOIN run_group_costs AS rc USING (cluster, team, run_group, currency)
