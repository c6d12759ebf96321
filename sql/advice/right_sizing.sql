-- advice.right_sizing: what each completed run would have cost to finish on another GPU model (or on the
-- cheapest provider of its own model), an ESTIMATE per (run, target GPU model priced on the rate card).
-- Method, per run profile with a catalog GPU model and a framebuffer high-water mark, and per target model
-- with an on-demand price in the run's currency:
-- * fit: the high-water mark within the target's memory less advice.settings.memory_headroom ('fits'); else,
--   for a run already spread over several GPUs (its framework shards), the GPUs its total high-water needs
--   within one target node ('needs sharding'); else 'does not fit' (no saving).
-- * bound: memory-bound when mean DRAM activity >= memory_bound_dram_activity and above tensor activity, else
--   compute-bound ('(assumed)' without activity); the speed ratio is the target's memory bandwidth, or its dense
--   16-bit TFLOPS, over the run's own.
-- * GPU-hours: the busy (active) GPU-hours divided by the speed ratio plus the held-but-idle GPU-hours as they
--   were; the work is assumed to divide evenly over any number of GPUs (no extra communication).
-- * cost: those GPU-hours at the cheapest on-demand price of the target, plus the run's non-GPU costs to
--   finish (checkpoints, egress) as billed; saving = billed cost to finish - estimated cost to finish.
-- * fp8_unused: the run's own GPU is a Hopper or Blackwell with FP8 and no hour reached fp8_tensor_activity.
-- best marks each run's largest positive saving (ties: target name). Parameters: none (advice.settings,
-- advice.gpu_levers and advice.rate_card hold the knobs).

WITH settings AS (
    SELECT memory_headroom, memory_bound_dram_activity, fp8_tensor_activity FROM advice.settings
),

profiles AS (
    SELECT * FROM advice.run_profiles WHERE fb_high_water_gib IS NOT NULL
),

levers AS (
    SELECT * FROM advice.gpu_levers
),

-- the cheapest on-demand price of each model per currency (ties: provider name), with where it comes from
prices AS (
    SELECT
        gpu_model,
        currency,
        arg_min(provider, (price_per_gpu_hour, provider)) AS provider,
        min(price_per_gpu_hour) AS price_per_gpu_hour,
        arg_min(as_of, (price_per_gpu_hour, provider)) AS as_of,
        arg_min(source, (price_per_gpu_hour, provider)) AS source,
        arg_min(example, (price_per_gpu_hour, provider)) AS example
    FROM advice.rate_card
    WHERE pricing_category = 'on-demand'
    GROUP BY ALL
),

-- each run's own GPU and what its telemetry says about it (a run on mixed models, e.g. H100+H200, has no lever)
runs AS (
    SELECT
        p.*,
        l.gpu_memory_gib AS source_memory_gib,
        l.memory_bandwidth_tbps AS source_bandwidth_tbps,
        l.dense_tflops AS source_tflops,
        l.architecture AS source_architecture,
        run_bound(p.dram_active, p.tensor_active, s.memory_bound_dram_activity) AS bound,
        CASE
            WHEN NOT (l.architecture IN ('Hopper', 'Blackwell') AND l.fp8) THEN false
            ELSE p.peak_tensor_active < s.fp8_tensor_activity
        END AS fp8_unused,
        busy_gpu_hours(p.active_gpu_hours, p.gpu_hours) AS busy_gpu_hours
    FROM profiles AS p
    JOIN levers AS l ON l.gpu_model = p.gpu_model
    CROSS JOIN settings AS s
),

-- every target model priced in the run's currency, the run's own model included (a cheaper provider of it)
candidates AS (
    SELECT
        r.*,
        t.gpu_model AS target_gpu_model,
        t.gpu_memory_gib AS target_memory_gib,
        t.max_gpus_per_node AS target_max_gpus_per_node,
        t.gpu_memory_gib * (1 - s.memory_headroom) AS usable_gib,
        speed_ratio(r.bound, t.memory_bandwidth_tbps, r.source_bandwidth_tbps, t.dense_tflops, r.source_tflops)
            AS speed_ratio,
        CASE WHEN r.bound = 'memory-bound'
            THEN printf('memory bandwidth %g / %g TB/s', t.memory_bandwidth_tbps, r.source_bandwidth_tbps)
            ELSE printf('dense 16-bit %g / %g TFLOPS', t.dense_tflops, r.source_tflops) END AS speed_basis,
        pr.provider AS target_provider,
        pr.price_per_gpu_hour AS target_price_per_gpu_hour,
        pr.as_of AS rate_as_of,
        pr.source AS rate_source,
        pr.example AS rate_example
    FROM runs AS r
    JOIN prices AS pr ON pr.currency = r.currency
    JOIN levers AS t ON t.gpu_model = pr.gpu_model
    CROSS JOIN settings AS s
),

-- does the high-water mark fit one target GPU, or (already sharded) a node of them
fitted AS (
    SELECT
        *,
        gpu_fit(fb_high_water_gib, usable_gib, gpu_count, target_max_gpus_per_node) AS fit,
        gpus_needed(fb_high_water_gib, usable_gib, gpu_count, target_max_gpus_per_node) AS gpus_needed,
        scaled_gpu_hours(busy_gpu_hours, gpu_hours, speed_ratio) AS estimated_gpu_hours
    FROM candidates
),

costed AS (
    SELECT
        *,
        CAST(round(CAST(estimated_gpu_hours AS DECIMAL(38, 18)) * target_price_per_gpu_hour, 10) AS DECIMAL(38, 10))
            AS estimated_gpu_cost
    FROM fitted
),

estimated AS (
    SELECT
        *,
        -- the non-GPU parts of the cost to finish (checkpoints, egress, other) as billed
        CAST(estimated_gpu_cost + (cost_to_finish - gpu_cost) AS DECIMAL(38, 10)) AS estimated_cost_to_finish
    FROM costed
),

described AS (
    SELECT
        e.*,
        CASE WHEN e.fit <> 'does not fit' THEN CAST(e.cost_to_finish - e.estimated_cost_to_finish AS DECIMAL(38, 10))
            END AS estimated_saving,
        CASE WHEN e.target_gpu_model = e.gpu_model THEN 'cheaper provider' ELSE 'right-size' END AS opportunity,
        printf(
            'ESTIMATE: busy GPU-hours scaled by %s (%s), held-idle GPU-hours kept, priced at %s %s on-demand %s %s '
            || 'per GPU-hour (%s); non-GPU costs to finish kept as billed',
            CASE WHEN e.bound = 'memory-bound' THEN 'memory bandwidth' ELSE 'dense 16-bit TFLOPS' END,
            e.bound,
            e.target_provider,
            e.target_gpu_model,
            regexp_replace(CAST(e.target_price_per_gpu_hour AS VARCHAR), '\.?0+$', ''),
            e.currency,
            CASE WHEN e.rate_example THEN printf('EXAMPLE rate card of %s', strftime(e.rate_as_of, '%Y-%m-%d'))
                ELSE printf('rate card of %s, %s', strftime(e.rate_as_of, '%Y-%m-%d'), e.rate_source) END
        ) AS method,
        concat_ws(
            '; ',
            printf(
                'high-water %.1f GiB per GPU of %.1f GiB usable on %s (%g GiB less %g %% headroom): %s%s',
                e.fb_high_water_gib,
                e.usable_gib,
                e.target_gpu_model,
                e.target_memory_gib,
                s.memory_headroom * 100,
                e.fit,
                CASE WHEN e.fit = 'needs sharding' THEN printf(' over %d GPUs', e.gpus_needed) ELSE '' END
            ),
            printf(
                '%.1f GPU-hours on %d x %s (%.1f busy)', e.gpu_hours, e.gpu_count, e.gpu_model, e.busy_gpu_hours
            ),
            CASE
                WHEN e.bound = 'compute-bound (assumed)' THEN 'no DRAM or tensor activity: compute-bound assumed'
                WHEN e.bound = 'memory-bound'
                    THEN printf('DRAM %.2f > tensor %.2f: memory-bound', e.dram_active, e.tensor_active)
                ELSE printf('DRAM %.2f, tensor %.2f: compute-bound', e.dram_active, e.tensor_active)
            END,
            printf('speed x%.2f (%s): %.1f GPU-hours', e.speed_ratio, e.speed_basis, e.estimated_gpu_hours),
            CASE WHEN e.fp8_unused THEN printf(
                'FP8 unused: peak tensor activity %.2f < %.2f on %s', e.peak_tensor_active, s.fp8_tensor_activity,
                e.source_architecture
            ) END,
            -- committed capacity is paid whether the run uses it or not: moving saves only at renewal
            CASE WHEN e.committed_gpu_cost > 0 THEN printf(
                '%.0f%% of its GPU cost was committed capacity (reserved, savings plan, CUD): realizable at renewal',
                100 * e.committed_gpu_cost / nullif(e.gpu_cost, 0)
            ) END
        ) AS evidence
    FROM estimated AS e
    CROSS JOIN settings AS s
)

SELECT
    completed_month AS month,
    team,
    currency,
    opportunity,
    estimated_saving,
    method,
    evidence,
    [run_group] AS run_groups,
    cluster,
    run_group,
    provider,
    gpu_model,
    gpu_count,
    fb_high_water_gib,
    bound,
    fp8_unused,
    target_gpu_model,
    target_provider,
    target_price_per_gpu_hour,
    rate_as_of,
    rate_source,
    rate_example,
    usable_gib,
    fit,
    gpus_needed,
    speed_ratio,
    gpu_hours,
    busy_gpu_hours,
    estimated_gpu_hours,
    gpu_cost,
    cost_to_finish,
    estimated_gpu_cost,
    estimated_cost_to_finish,
    coalesce(
        estimated_saving > 0 AND row_number() OVER (
            PARTITION BY cluster, team, run_group, currency
            ORDER BY estimated_saving DESC NULLS LAST, target_gpu_model
        ) = 1,
        false
    ) AS best
FROM described
ORDER BY month, team, cluster, run_group, currency, target_gpu_model
