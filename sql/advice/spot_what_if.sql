-- advice.spot_what_if: an ESTIMATE, per completed run group and currency, of what running it on spot capacity
-- would have saved, net of the work spot interruptions would have cost; for runs already on spot, what spot saved.
-- * A run mostly not on spot (spot GPU cost below half its GPU cost): gross saving = its GPU cost - its GPU-hours
--   x the spot price of the rate card for its GPU model at its provider in its currency (newest as_of): a run
--   already paying less (a commitment) gains nothing. The card's on-demand price gives the spot ratio shown.
--   Expected interruptions = its own interruptions + failures (its history). Each loses half a checkpoint interval
--   plus the restart time on all its GPUs: (interval / 2 + restart_minutes) / 60 x GPUs GPU-hours, priced at the
--   spot price; the interval is advice.checkpoint_intervals' (observed, else its mean attempt length).
--   estimated_saving = gross saving - expected lost cost; negative means spot does not pay for this run.
-- * A run already on spot: spot_saved = ListCost - EffectiveCost of its spot (PricingCategory Dynamic) GPU
--   pieces; estimated_saving is NULL.
-- Parameters: advice.settings.restart_minutes, advice.rate_card. Needs advice.checkpoint_intervals built first.
WITH settings AS (
    SELECT restart_minutes FROM advice.settings
),

profiles AS (
    SELECT * FROM advice.run_profiles
),

intervals AS (
    SELECT cluster, team, run_group, currency, interval_minutes, interval_observed
    FROM advice.checkpoint_intervals
),

-- the mean attempt length stands in for runs advice.checkpoint_intervals leaves out (never interrupted)
attempt_lengths AS (
    SELECT cluster, team, run_group, currency, CAST(avg(exact(epoch(end_time) - epoch(start_time))) / 60 AS DOUBLE) AS mean_attempt_minutes
    FROM (
        SELECT DISTINCT
            cluster, team, run_group, currency, job_id, start_time,
            coalesce(end_time, run_group_completed_at) AS end_time
        FROM showback.job_costs
        WHERE run_group_completed
    )
    GROUP BY ALL
),

-- one price per provider, model, category and currency: the newest the card holds
prices AS (
    SELECT
        provider,
        gpu_model,
        pricing_category,
        currency,
        arg_max(price_per_gpu_hour, as_of) AS price,
        max(as_of) AS as_of,
        arg_max(source, as_of) AS source,
        arg_max(example, as_of) AS example
    FROM advice.rate_card
    WHERE pricing_category IN ('on-demand', 'spot')
    GROUP BY ALL
),

runs AS (
    SELECT
        p.*,
        coalesce(p.spot_gpu_cost > 0 AND 2 * p.spot_gpu_cost >= p.gpu_cost, false) AS on_spot,
        od.price AS on_demand_price,
        sp.price AS spot_price,
        od.as_of AS on_demand_as_of,
        sp.as_of AS spot_as_of,
        od.source AS on_demand_source,
        sp.source AS spot_source,
        coalesce(od.example, false) OR coalesce(sp.example, false) AS example_prices,
        coalesce(i.interval_minutes, a.mean_attempt_minutes) AS interval_minutes,
        coalesce(i.interval_observed, false) AS interval_observed,
        p.interruptions + p.failures AS expected_interruptions,
        s.restart_minutes
    FROM profiles AS p
    CROSS JOIN settings AS s
    LEFT JOIN prices AS od
        ON od.provider = p.provider AND od.gpu_model = p.gpu_model AND od.currency = p.currency
        AND od.pricing_category = 'on-demand'
    LEFT JOIN prices AS sp
        ON sp.provider = p.provider AND sp.gpu_model = p.gpu_model AND sp.currency = p.currency
        AND sp.pricing_category = 'spot'
    LEFT JOIN intervals AS i
        ON i.cluster = p.cluster AND i.team = p.team AND i.run_group = p.run_group AND i.currency = p.currency
    LEFT JOIN attempt_lengths AS a
        ON a.cluster = p.cluster AND a.team = p.team AND a.run_group = p.run_group AND a.currency = p.currency
),

-- the what-if for runs not on spot: only when the card has both prices
what_if AS (
    SELECT
        *,
        spot_price / nullif(on_demand_price, 0) AS spot_price_ratio,
        (interval_minutes / 2 + restart_minutes) / 60 * gpu_count AS lost_gpu_hours_per_interruption
    FROM runs
),

priced AS (
    SELECT
        *,
        CASE
            WHEN NOT on_spot AND spot_price_ratio IS NOT NULL THEN CAST(
                round(gpu_cost - spot_price * CAST(gpu_hours AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10)
            )
        END AS gross_saving,
        CASE
            WHEN NOT on_spot AND spot_price_ratio IS NOT NULL THEN CAST(
                round(
                    spot_price
                    * CAST(expected_interruptions * coalesce(lost_gpu_hours_per_interruption, 0) AS DECIMAL(38, 18)),
                    10
                ) AS DECIMAL(38, 10)
            )
        END AS expected_lost_cost,
        CAST(spot_gpu_list_cost - spot_gpu_cost AS DECIMAL(38, 10)) AS spot_saved,
        CASE
            WHEN example_prices
                THEN 'EXAMPLE rate card of ' || strftime(greatest(on_demand_as_of, spot_as_of), '%Y-%m-%d')
            WHEN on_demand_as_of = spot_as_of AND on_demand_source = spot_source
                THEN printf('rate card of %s (%s)', strftime(spot_as_of, '%Y-%m-%d'), spot_source)
            ELSE printf(
                'rate card: spot of %s (%s), on-demand of %s (%s)', strftime(spot_as_of, '%Y-%m-%d'), spot_source,
                strftime(on_demand_as_of, '%Y-%m-%d'), on_demand_source
            )
        END AS prices_named
    FROM what_if
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
    gpu_hours,
    gpu_cost,
    spot_gpu_cost,
    spot_gpu_list_cost,
    CASE WHEN on_spot THEN spot_saved END AS spot_saved,
    on_demand_price,
    spot_price,
    spot_price_ratio,
    on_demand_as_of,
    spot_as_of,
    gross_saving,
    expected_interruptions,
    interval_minutes,
    interval_observed,
    restart_minutes,
    lost_gpu_hours_per_interruption,
    expected_lost_cost,
    CASE WHEN on_spot THEN 'spot (already used)' ELSE 'spot' END AS opportunity,
    CASE WHEN NOT on_spot THEN gross_saving - expected_lost_cost END AS estimated_saving,
    CASE
        WHEN on_spot THEN 'measured, not estimated: ListCost - EffectiveCost of its GPU charges priced as spot'
            || ' (FOCUS PricingCategory Dynamic)'
        WHEN spot_price_ratio IS NULL THEN 'spot what-if: not estimable without a spot and an on-demand price'
            || ' for its GPU model at its provider in its currency in the rate card'
        ELSE printf(
            'spot what-if: GPU cost - GPU-hours x spot price, minus expected interruptions (its own'
            || ' interruptions + failures) x (checkpoint interval / 2 + %.1f min restart) x GPUs x spot price; %s',
            restart_minutes, prices_named
        )
    END AS method,
    CASE
        WHEN on_spot THEN printf(
            'spot GPU cost %.2f of %.2f %s; its list cost %.2f: spot saved %.2f', spot_gpu_cost, gpu_cost, currency,
            spot_gpu_list_cost, spot_saved
        )
        WHEN spot_price IS NULL
            THEN printf(
                'no spot price for %s at %s in the rate card (in %s)', coalesce(gpu_model, 'an unknown GPU model'),
                coalesce(provider, 'an unknown provider'), currency
            )
        WHEN on_demand_price IS NULL
            THEN printf(
                'no on-demand price for %s at %s in the rate card (in %s)', coalesce(gpu_model, 'an unknown GPU model'),
                coalesce(provider, 'an unknown provider'), currency
            )
        ELSE printf(
            'GPU cost %.2f %s over %.1f GPU-hours (%.2f on spot); on-demand %.4f, spot %.4f per GPU-hour (ratio %.3f)'
            || ' -> gross %.2f; %d interruptions + failures, each losing (%.1f min / 2 + %.1f min) x %d GPUs'
            || ' = %.2f GPU-hours%s -> %.2f lost',
            gpu_cost, currency, gpu_hours, spot_gpu_cost, on_demand_price, spot_price, spot_price_ratio, gross_saving,
            expected_interruptions, interval_minutes, restart_minutes, gpu_count, lost_gpu_hours_per_interruption,
            CASE
                WHEN interval_observed THEN ' (observed checkpoint interval)'
                ELSE ' (no checkpoint interval observed: mean attempt length)'
            END,
            expected_lost_cost
        )
    END AS evidence,
    [run_group] AS run_groups
FROM priced
ORDER BY month, team, cluster, run_group, currency
