-- advice.right_sizing_backtest: how far the right-sizing ESTIMATE is from what happened, on recipes that
-- completed on two GPU models. A recipe is a team's job name (the name of a run's final attempt); for every
-- ordered pair of its completed runs on different catalog GPU models in one currency (source on X, actual on
-- Y), the source's profile is carried to Y by advice.right_sizing's method (busy GPU-hours over the speed
-- ratio by memory bandwidth or dense 16-bit TFLOPS, held-idle GPU-hours kept, non-GPU costs to finish kept)
-- and priced at the actual run's own effective GPU rate (its GPU cost / GPU-hours), so that the error measures
-- the method, not the rate card. Runs of one recipe differ in length too: that spread is part of the error.
-- Parameters: none (advice.settings: memory_headroom, memory_bound_dram_activity).

WITH settings AS (
    SELECT memory_headroom, memory_bound_dram_activity FROM advice.settings
),

profiles AS (
    SELECT * FROM advice.run_profiles WHERE gpu_hours > 0
),

levers AS (
    SELECT * FROM advice.gpu_levers
),

-- the recipe of each run: its final attempt's job name
recipes AS (
    SELECT cluster, team, run_group, arg_max(name, (start_time, job_id)) AS recipe
    FROM showback.job_costs
    WHERE run_group_completed
    GROUP BY ALL
),

-- each run with its recipe, its GPU's levers and whether it was memory- or compute-bound (as right_sizing says)
runs AS (
    SELECT
        p.*,
        r.recipe,
        l.memory_bandwidth_tbps,
        l.dense_tflops,
        run_bound(p.dram_active, p.tensor_active, s.memory_bound_dram_activity) AS bound,
        busy_gpu_hours(p.active_gpu_hours, p.gpu_hours) AS busy_gpu_hours
    FROM profiles AS p
    JOIN recipes AS r USING (cluster, team, run_group)
    JOIN levers AS l ON l.gpu_model = p.gpu_model
    CROSS JOIN settings AS s
),

-- ordered pairs of one recipe's runs on different GPU models, in one currency
pairs AS (
    SELECT
        s.team,
        s.recipe,
        s.currency,
        s.cluster AS source_cluster,
        s.run_group AS source_run_group,
        s.gpu_model AS source_gpu_model,
        s.gpu_count AS source_gpu_count,
        s.bound,
        s.fb_high_water_gib AS source_fb_high_water_gib,
        s.gpu_hours AS source_gpu_hours,
        s.busy_gpu_hours AS source_busy_gpu_hours,
        s.cost_to_finish - s.gpu_cost AS source_non_gpu_cost,
        speed_ratio(s.bound, a.memory_bandwidth_tbps, s.memory_bandwidth_tbps, a.dense_tflops, s.dense_tflops)
            AS speed_ratio,
        t.gpu_memory_gib * (1 - st.memory_headroom) AS target_usable_gib,
        t.max_gpus_per_node AS target_max_gpus_per_node,
        a.completed_month,
        a.cluster AS actual_cluster,
        a.run_group AS actual_run_group,
        a.gpu_model AS actual_gpu_model,
        a.gpu_count AS actual_gpu_count,
        a.gpu_hours AS actual_gpu_hours,
        a.cost_to_finish AS actual_cost_to_finish,
        -- the actual run's own effective price of a GPU-hour
        CAST(round(a.gpu_cost / CAST(a.gpu_hours AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10)) AS actual_gpu_rate
    FROM runs AS s
    JOIN runs AS a ON a.team = s.team AND a.recipe = s.recipe AND a.currency = s.currency AND a.gpu_model <> s.gpu_model
    JOIN levers AS t ON t.gpu_model = a.gpu_model
    CROSS JOIN settings AS st
),

estimated AS (
    SELECT
        *,
        gpu_fit(source_fb_high_water_gib, target_usable_gib, source_gpu_count, target_max_gpus_per_node) AS fit,
        scaled_gpu_hours(source_busy_gpu_hours, source_gpu_hours, speed_ratio) AS estimated_gpu_hours
    FROM pairs
),

costed AS (
    SELECT
        *,
        CAST(
            round(CAST(estimated_gpu_hours AS DECIMAL(38, 18)) * actual_gpu_rate, 10) + source_non_gpu_cost
            AS DECIMAL(38, 10)
        ) AS estimated_cost_to_finish
    FROM estimated
)

SELECT
    completed_month,
    team,
    recipe,
    currency,
    source_cluster,
    source_run_group,
    source_gpu_model,
    source_gpu_count,
    actual_cluster,
    actual_run_group,
    actual_gpu_model,
    actual_gpu_count,
    bound,
    fit,
    speed_ratio,
    estimated_gpu_hours,
    actual_gpu_hours,
    (estimated_gpu_hours - actual_gpu_hours) / actual_gpu_hours AS gpu_hours_error_share,
    actual_gpu_rate,
    estimated_cost_to_finish,
    actual_cost_to_finish,
    CAST(estimated_cost_to_finish - actual_cost_to_finish AS DECIMAL(38, 10)) AS cost_error,
    CAST(estimated_cost_to_finish - actual_cost_to_finish AS DOUBLE) / nullif(CAST(actual_cost_to_finish AS DOUBLE), 0)
        AS cost_error_share,
    printf(
        'ESTIMATE from %s on %d x %s (%s): %.1f GPU-hours (%.1f busy) x speed %.2f -> %.1f GPU-hours on %s, priced '
        || 'at the actual run''s %.4f %s per GPU-hour; actual %.1f GPU-hours on %d x %s',
        source_run_group, source_gpu_count, source_gpu_model, bound, source_gpu_hours, source_busy_gpu_hours,
        speed_ratio, estimated_gpu_hours, actual_gpu_model, actual_gpu_rate, currency, actual_gpu_hours,
        actual_gpu_count, actual_gpu_model
    ) AS evidence
FROM costed
ORDER BY team, recipe, currency, source_gpu_model, source_run_group, actual_gpu_model, actual_run_group
