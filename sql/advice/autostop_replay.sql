-- advice.autostop_replay: what auto-stopping each interactive session after N idle minutes would have saved,
-- per session job, billing month and currency (an ESTIMATE, opportunity 'notebook auto-stop').
-- Method: the session's recorded hours (gpu.usage) are replayed. An hour is idle when none of the session's held
-- GPU-seconds was active (active_seconds = 0: no sample above the split's idle threshold, so no run time under
-- 'active-time' pricing); an hour with any activity is not idle, so partly idle hours at a stretch's edges are
-- never counted (conservative). Consecutive idle hours form a stretch of their held minutes; auto-stop stops
-- the session N minutes into it and the user restarts it when next active (the restart's wait is not priced), so
-- each stretch saves (its minutes - N) x the session's GPUs, credited to the hours it falls in. Saved GPU-hours
-- are priced at the session's own billed GPU cost per held GPU-hour that month (its split run + idle
-- EffectiveCost / GPU-hours, showback.job_costs), never the rate card.
-- Parameters: advice.settings.autostop_idle_minutes (N).
WITH settings AS (
    SELECT autostop_idle_minutes AS idle_minutes FROM advice.settings
),

sessions AS (
    SELECT
        billing_month AS month,
        currency,
        team,
        cluster,
        job_id,
        "user",
        gpu_model,
        gpu_count,
        run_cost + idle_cost AS gpu_cost,
        gpu_hours
    FROM showback.job_costs
    WHERE session
),

-- GPUs the session held, in whole-GPU equivalents (a MIG slice "3g.40gb" is 3/7 of a GPU, as gpu.usage counts it)
session_gpus AS (
    SELECT
        j.cluster,
        j.job_id,
        j.gpu_count * coalesce(TRY_CAST(regexp_extract(j.mig_profile, '^([0-9]+)g\.', 1) AS DOUBLE) / 7, 1)
            AS held_gpus
    FROM gpu.jobs AS j
    SEMI JOIN sessions AS s USING (cluster, job_id)
    WHERE j.gpu_count > 0
),

-- a node-hour once (usage_once, sql/advice/macros.sql)
usage AS (
    SELECT u.*, billing_month(u.billing_period_start) AS month
    FROM usage_once() AS u
    SEMI JOIN session_gpus AS g USING (cluster, job_id)
),

-- each hour of each session over all its nodes: held GPU-seconds and whether any of them was active
session_hours AS (
    SELECT
        u.cluster,
        u.job_id,
        u.hour,
        min(u.month) AS month,
        any_value(g.held_gpus) AS held_gpus,
        sum(exact(u.allocated_seconds)) AS held_seconds,
        sum(exact(u.active_seconds)) = 0 AS idle
    FROM usage AS u
    JOIN session_gpus AS g USING (cluster, job_id)
    GROUP BY ALL
    HAVING sum(exact(u.allocated_seconds)) > 0
),

-- an idle hour starts a stretch unless the hour just before it was idle too
stretch_starts AS (
    SELECT
        *,
        idle AND NOT coalesce(
            lag(idle) OVER w AND lag(hour) OVER w = hour - INTERVAL 1 HOUR, false
        ) AS starts_stretch
    FROM session_hours
    WINDOW w AS (PARTITION BY cluster, job_id ORDER BY hour)
),

idle_hours AS (
    SELECT
        cluster,
        job_id,
        month,
        hour,
        held_gpus,
        held_seconds,
        -- the minutes the session held its GPUs in this hour (under 60 in its first and last hour)
        held_seconds / held_gpus / 60 AS minutes,
        sum(CAST(starts_stretch AS INTEGER)) OVER (PARTITION BY cluster, job_id ORDER BY hour) AS stretch
    FROM stretch_starts
    QUALIFY idle
),

stretch_minutes AS (
    SELECT
        *,
        sum(minutes) OVER (PARTITION BY cluster, job_id, stretch ORDER BY hour) AS minutes_through,
        sum(minutes) OVER (PARTITION BY cluster, job_id, stretch) AS stretch_total_minutes
    FROM idle_hours
),

-- the stopped minutes of each idle hour: those past the first N minutes of its stretch
saved_hours AS (
    SELECT
        m.*,
        greatest(m.minutes_through - s.idle_minutes, 0)
            - greatest(m.minutes_through - m.minutes - s.idle_minutes, 0) AS saved_minutes
    FROM stretch_minutes AS m
    CROSS JOIN settings AS s
),

replayed AS (
    SELECT
        cluster,
        job_id,
        month,
        any_value(held_gpus) AS held_gpus,
        CAST(sum(held_seconds) / 3600 AS DOUBLE) AS idle_gpu_hours,
        -- stretches in this month, in whole or in part
        count(DISTINCT stretch) AS idle_stretches,
        max(stretch_total_minutes) / 60 AS longest_stretch_hours,
        CAST(sum(exact(saved_minutes * held_gpus)) / 60 AS DOUBLE) AS saved_gpu_hours
    FROM saved_hours
    GROUP BY ALL
),

-- a session billed in two currencies in one month has its saved hours shared by its GPU-hours in each
job_month_hours AS (
    SELECT cluster, job_id, month, sum(exact(gpu_hours)) AS gpu_hours FROM sessions GROUP BY ALL
),

priced AS (
    SELECT
        s.*,
        g.held_gpus,
        coalesce(r.idle_gpu_hours, 0) * s.gpu_hours / nullif(t.gpu_hours, 0) AS idle_gpu_hours,
        coalesce(r.idle_stretches, 0) AS idle_stretches,
        coalesce(r.longest_stretch_hours, 0) AS longest_stretch_hours,
        coalesce(r.saved_gpu_hours, 0) * s.gpu_hours / nullif(t.gpu_hours, 0) AS saved_gpu_hours,
        CAST(round(s.gpu_cost * CAST(1 / nullif(s.gpu_hours, 0) AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10))
            AS gpu_cost_per_gpu_hour,
    FROM sessions AS s
    JOIN job_month_hours AS t USING (cluster, job_id, month)
    LEFT JOIN session_gpus AS g USING (cluster, job_id)
    LEFT JOIN replayed AS r USING (cluster, job_id, month)
)

SELECT
    p.month,
    p.team,
    p.currency,
    p.cluster,
    p.job_id,
    p."user",
    p.gpu_model,
    p.gpu_count AS gpus,
    p.gpu_hours AS held_gpu_hours,
    p.idle_gpu_hours,
    p.idle_stretches,
    p.longest_stretch_hours,
    p.saved_gpu_hours,
    p.gpu_cost,
    p.gpu_cost_per_gpu_hour,
    'notebook auto-stop' AS opportunity,
    -- saved GPU-hours at the session's own rate, never more than its GPU cost (NULL without billed GPU-hours:
    -- least() would skip a NULL)
    CASE WHEN p.gpu_cost_per_gpu_hour IS NOT NULL THEN CAST(least(
        round(CAST(p.saved_gpu_hours AS DECIMAL(38, 18)) * p.gpu_cost_per_gpu_hour, 10), greatest(p.gpu_cost, 0)
    ) AS DECIMAL(38, 10)) END AS estimated_saving,
    format(
        'Replay of the session''s hourly GPU activity under auto-stop after {} idle minutes: each stretch of fully '
        || 'idle hours (no GPU-second above the idle threshold) saves its minutes past the first {} x its GPUs, '
        || 'priced at the session''s own billed GPU cost per held GPU-hour; partly idle hours are not counted.',
        s.idle_minutes, s.idle_minutes
    ) AS method,
    CASE
        WHEN p.gpu_hours IS NULL OR p.gpu_hours = 0 THEN 'no billed GPU-hours this month: saving not estimable'
        WHEN p.held_gpus IS NULL THEN 'no GPUs recorded for the session: nothing to replay'
        ELSE format(
            'held {} GPU-h of {} x {} at {} {} per GPU-h; {} fully idle GPU-h in {} idle stretch(es), longest {} h; '
            || 'auto-stop after {} min saves {} GPU-h',
            round(p.gpu_hours, 2), p.gpu_count, coalesce(p.gpu_model, 'unknown GPU'),
            round(p.gpu_cost_per_gpu_hour, 4), p.currency, round(p.idle_gpu_hours, 2), p.idle_stretches,
            round(p.longest_stretch_hours, 2), s.idle_minutes, round(p.saved_gpu_hours, 2)
        )
    END AS evidence,
    [p.job_id] AS run_groups
FROM priced AS p
CROSS JOIN settings AS s
ORDER BY p.month, p.team, p.currency, p.cluster, p.job_id
