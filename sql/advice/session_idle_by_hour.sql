-- advice.session_idle_by_hour: what interactive sessions (showback.job_costs.session: notebooks, shells) held
-- and left idle, per billing month, currency, team, user, ISO weekday and UTC hour of day: the evidence behind
-- notebook auto-stop (advice.autostop_replay), not an estimate. Method: the sessions' own split pieces
-- (allocation.cost_split run and idle, billed money), each spread evenly over the hours of its charge, as
-- showback.idle_by_hour_of_week does (exact for hourly charges, an even spread for daily ones); apportioned
-- amounts are rounded per piece and hour. No parameters.
WITH sessions AS (
    SELECT DISTINCT cluster, job_id, team, "user"
    FROM showback.job_costs
    WHERE session
),

pieces AS (
    SELECT
        s.billing_month,
        s.BillingCurrency AS currency,
        j.team,
        j."user",
        j.job_id,
        s.category,
        s.idle_kind,
        s.EffectiveCost,
        s.gpu_hours,
        s.ChargePeriodStart,
        s.ChargePeriodEnd,
        charge_period_hour_count(s.ChargePeriodStart, s.ChargePeriodEnd) AS hours
    FROM allocation.cost_split AS s
    JOIN sessions AS j USING (cluster, job_id)
    WHERE s.category IN ('run', 'idle')
),

-- one row per piece and hour of its charge: a piece's money and GPU-hours spread evenly over them
hourly AS (
    SELECT
        billing_month,
        currency,
        team,
        "user",
        job_id,
        category,
        idle_kind,
        CAST(round(EffectiveCost * CAST(1 / hours AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10)) AS cost,
        CAST(gpu_hours / hours AS DECIMAL(38, 10)) AS gpu_hours,
        unnest(charge_period_hours(ChargePeriodStart, ChargePeriodEnd)) AS hour
    FROM pieces
),

by_hour_of_week AS (
    SELECT
        billing_month AS month,
        currency,
        team,
        "user",
        isodow(hour) AS iso_weekday,
        dayname(hour) AS weekday,
        hour(hour) AS hour_of_day,
        count(DISTINCT job_id) AS sessions,
        -- DECIMAL sums: exact, so independent of row order
        sum(gpu_hours) AS held_gpu_hours,
        coalesce(sum(gpu_hours) FILTER (WHERE category = 'idle'), 0) AS idle_gpu_hours,
        coalesce(sum(gpu_hours) FILTER (WHERE category = 'idle' AND idle_kind = 'allocated'), 0)
            AS idle_allocated_gpu_hours,
        sum(cost) AS gpu_cost,
        coalesce(sum(cost) FILTER (WHERE category = 'idle'), 0) AS idle_cost,
        list(DISTINCT job_id ORDER BY job_id) AS session_job_ids
    FROM hourly
    GROUP BY ALL
)

SELECT
    month,
    team,
    "user",
    currency,
    iso_weekday,
    weekday,
    hour_of_day,
    sessions,
    CAST(held_gpu_hours AS DOUBLE) AS held_gpu_hours,
    CAST(idle_gpu_hours AS DOUBLE) AS idle_gpu_hours,
    CAST(idle_allocated_gpu_hours AS DOUBLE) AS idle_allocated_gpu_hours,
    CAST(idle_gpu_hours AS DOUBLE) / nullif(CAST(held_gpu_hours AS DOUBLE), 0) AS idle_share,
    CAST(gpu_cost AS DECIMAL(38, 10)) AS gpu_cost,
    CAST(idle_cost AS DECIMAL(38, 10)) AS idle_cost,
    session_job_ids
FROM by_hour_of_week
ORDER BY month, team, "user", currency, iso_weekday, hour_of_day
