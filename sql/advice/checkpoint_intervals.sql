-- advice.checkpoint_intervals: an ESTIMATE, per completed run group and currency that was interrupted, failed or
-- wrote checkpoints, of what checkpointing at the Young/Daly interval instead of its own would have saved.
-- * Observed interval: the mean gap between consecutive checkpoint writes within each attempt (objects under its
--   jobs' checkpoint_uri written while the attempt ran; write time = last_modified, else the first inventory
--   listing the object, as showback.job_costs). Without two writes in one attempt its mean attempt length stands
--   in (a failure then loses all work since the attempt started). checkpoint_writes counts distinct objects.
-- * MTBF = attempt hours (summed over its attempts) / (interruptions + failures); NULL when it had none.
-- * Young/Daly optimum tau* = sqrt(2 x checkpoint write time x MTBF).
-- * Model cost of an interval tau, priced at the run's own GPU cost per GPU-hour:
--   C(tau) = (T / tau) x w x GPUs x rate (checkpoint writes) + n x (tau / 2) x GPUs x rate (work lost per
--   failure), T attempt hours, w write time, n interruptions + failures. estimated_saving = C(observed) - C(tau*).
-- * Measured lost work (showback.job_costs estimated_lost_work_cost and GPU-hours of its attempts) is shown beside.
-- Parameters: advice.settings.checkpoint_write_minutes.
WITH settings AS (
    SELECT checkpoint_write_minutes FROM advice.settings
),

profiles AS (
    SELECT * FROM advice.run_profiles
),

-- one row per attempt of a completed run (job_costs has one per billing month and currency)
attempts AS (
    SELECT DISTINCT
        c.cluster, c.team, c.run_group, c.currency, c.job_id, c.start_time,
        coalesce(c.end_time, c.run_group_completed_at) AS end_time, j.checkpoint_uri
    FROM showback.job_costs AS c
    JOIN gpu.jobs AS j USING (cluster, job_id)
    WHERE c.run_group_completed
),

-- lost work measured by the split: cost per billing month (summed), GPU-hours per attempt (repeated per month)
lost_work AS (
    SELECT
        cluster,
        team,
        run_group,
        currency,
        sum(lost_cost) AS lost_work_cost,
        CAST(sum(exact(lost_gpu_hours)) AS DOUBLE) AS lost_gpu_hours
    FROM (
        SELECT
            cluster, team, run_group, currency, job_id,
            sum(estimated_lost_work_cost) AS lost_cost,
            max(estimated_lost_gpu_hours) AS lost_gpu_hours
        FROM showback.job_costs
        WHERE run_group_completed
        GROUP BY ALL
    )
    GROUP BY ALL
),

-- an object's write time: its last_modified, else the first inventory that lists it
object_writes AS (
    SELECT uri, min(coalesce(last_modified, as_of)) AS written_at
    FROM gpu.checkpoint_bytes
    WHERE bytes > 0
    GROUP BY ALL
),

-- writes within each attempt: their count and the time from the first to the last (gaps = writes - 1)
attempt_writes AS (
    SELECT
        a.cluster,
        a.team,
        a.run_group,
        a.currency,
        a.job_id,
        count(w.uri) AS writes,
        coalesce(epoch(max(w.written_at)) - epoch(min(w.written_at)), 0) AS write_span_seconds
    FROM attempts AS a
    LEFT JOIN object_writes AS w
        ON starts_with(w.uri, a.checkpoint_uri) AND w.written_at >= a.start_time AND w.written_at <= a.end_time
    GROUP BY ALL
),

-- distinct objects written during its attempts (array tasks sharing a prefix see the same objects)
run_writes AS (
    SELECT a.cluster, a.team, a.run_group, a.currency, count(DISTINCT w.uri) AS checkpoint_writes
    FROM attempts AS a
    LEFT JOIN object_writes AS w
        ON starts_with(w.uri, a.checkpoint_uri) AND w.written_at >= a.start_time AND w.written_at <= a.end_time
    GROUP BY ALL
),

per_run AS (
    SELECT
        a.cluster,
        a.team,
        a.run_group,
        a.currency,
        count(*) AS attempts,
        CAST(sum(exact(epoch(a.end_time) - epoch(a.start_time))) / 3600 AS DOUBLE) AS attempt_hours,
        any_value(d.checkpoint_writes) AS checkpoint_writes,
        -- mean gap: time between first and last write over the gaps, within attempts only (never across a restart)
        CAST(sum(exact(w.write_span_seconds)) / 60 / nullif(sum(greatest(w.writes - 1, 0)), 0) AS DOUBLE)
            AS observed_interval_minutes
    FROM attempts AS a
    JOIN attempt_writes AS w USING (cluster, team, run_group, currency, job_id)
    JOIN run_writes AS d USING (cluster, team, run_group, currency)
    GROUP BY ALL
),

intervals AS (
    SELECT
        p.*,
        r.attempt_hours,
        r.checkpoint_writes,
        r.observed_interval_minutes,
        coalesce(r.observed_interval_minutes, r.attempt_hours * 60 / r.attempts) AS interval_minutes,
        p.interruptions + p.failures AS breaks,
        r.attempt_hours / nullif(p.interruptions + p.failures, 0) AS mtbf_hours,
        s.checkpoint_write_minutes,
        sqrt(2 * s.checkpoint_write_minutes * r.attempt_hours * 60 / nullif(p.interruptions + p.failures, 0))
            AS optimal_interval_minutes,
        l.lost_work_cost,
        l.lost_gpu_hours
    FROM profiles AS p
    JOIN per_run AS r USING (cluster, team, run_group, currency)
    CROSS JOIN settings AS s
    LEFT JOIN lost_work AS l USING (cluster, team, run_group, currency)
    WHERE p.interruptions + p.failures > 0 OR r.checkpoint_writes > 0
),

-- the model's GPU-hours at the observed and the optimal interval (all in hours)
model AS (
    SELECT
        *,
        (attempt_hours / (interval_minutes / 60)) * (checkpoint_write_minutes / 60) * gpu_count
            + breaks * (interval_minutes / 60 / 2) * gpu_count AS observed_model_gpu_hours,
        (attempt_hours / (optimal_interval_minutes / 60)) * (checkpoint_write_minutes / 60) * gpu_count
            + breaks * (optimal_interval_minutes / 60 / 2) * gpu_count AS optimal_model_gpu_hours
    FROM intervals
),

-- priced at the run's own GPU cost per GPU-hour: money scaled by a DOUBLE share cast to DECIMAL first
priced AS (
    SELECT
        *,
        CAST(round(gpu_cost * CAST(1 / nullif(gpu_hours, 0) AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10))
            AS gpu_cost_per_gpu_hour,
        CAST(
            round(gpu_cost * CAST(observed_model_gpu_hours / nullif(gpu_hours, 0) AS DECIMAL(38, 18)), 10)
            AS DECIMAL(38, 10)
        ) AS model_cost_observed,
        CAST(
            round(gpu_cost * CAST(optimal_model_gpu_hours / nullif(gpu_hours, 0) AS DECIMAL(38, 18)), 10)
            AS DECIMAL(38, 10)
        ) AS model_cost_optimal
    FROM model
)

SELECT
    completed_month AS month,
    team,
    cluster,
    run_group,
    currency,
    provider,
    gpu_model,
    gpu_count,
    attempts,
    interruptions,
    failures,
    checkpoint_writes,
    observed_interval_minutes,
    interval_minutes,
    observed_interval_minutes IS NOT NULL AS interval_observed,
    attempt_hours,
    mtbf_hours,
    checkpoint_write_minutes,
    optimal_interval_minutes,
    gpu_hours,
    gpu_cost,
    gpu_cost_per_gpu_hour,
    coalesce(lost_work_cost, 0) AS measured_lost_work_cost,
    coalesce(lost_gpu_hours, 0) AS measured_lost_gpu_hours,
    model_cost_observed,
    model_cost_optimal,
    'checkpoint interval' AS opportunity,
    CASE
        WHEN optimal_interval_minutes > 0 AND interval_minutes > 0 THEN model_cost_observed - model_cost_optimal
    END AS estimated_saving,
    printf(
        'Young/Daly model on its own attempts: C(tau) = (T / tau) x %.1f min write x GPUs x its GPU cost per GPU-hour'
        || ' + (interruptions + failures) x tau / 2 x GPUs x that rate; saving = C(observed) - C(sqrt(2 x write time'
        || ' x MTBF)); checkpoint_write_minutes is a setting, not measured',
        checkpoint_write_minutes
    ) AS method,
    CASE
        WHEN observed_interval_minutes IS NOT NULL
            THEN printf('checkpoint every %.1f min observed (%d writes)', observed_interval_minutes, checkpoint_writes)
        ELSE printf(
            'no two checkpoint writes in one attempt (%d writes): interval taken as its mean attempt length %.1f min,'
            || ' all work since the attempt started is lost',
            checkpoint_writes, interval_minutes
        )
    END
    || printf('; %.1f attempt hours over %d attempts', attempt_hours, attempts)
    || CASE
        WHEN breaks > 0 THEN printf(
            ', %d interruptions + %d failures -> MTBF %.1f h; optimum %.1f min', interruptions, failures, mtbf_hours,
            optimal_interval_minutes
        )
        ELSE ', no interruption or failure: MTBF unknown, no saving estimated'
    END
    || printf(
        '; %d GPUs at %s %s per GPU-hour; model cost %s at the observed, %s at the optimal interval;'
        || ' measured lost work %s %s (%.1f GPU-hours)',
        gpu_count, coalesce(printf('%.4f', gpu_cost_per_gpu_hour), 'n/a'), currency,
        coalesce(printf('%.2f', model_cost_observed), 'n/a'), coalesce(printf('%.2f', model_cost_optimal), 'n/a'),
        printf('%.2f', coalesce(lost_work_cost, 0)), currency, coalesce(lost_gpu_hours, 0)
    ) AS evidence,
    [run_group] AS run_groups
FROM priced
ORDER BY month, team, cluster, run_group, currency
