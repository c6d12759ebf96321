-- showback.idle_by_hour_of_week: idle GPU-hours and idle cost per team, weekday and UTC hour of day, where
-- the weekend notebooks show up. An idle piece is spread evenly over the hours of its charge: exact for
-- hourly charges, an even spread for daily ones. Apportioned costs are rounded; the totals live in team_month.

WITH idle AS (
    SELECT
        BillingPeriodStart,
        BillingCurrency,
        team,
        idle_kind,
        ChargePeriodStart,
        ChargePeriodEnd,
        EffectiveCost,
        gpu_hours,
        charge_period_hour_count(ChargePeriodStart, ChargePeriodEnd) AS hours
    FROM allocation.cost_split
    WHERE category = 'idle'
),

hourly AS (
    SELECT
        BillingPeriodStart,
        BillingCurrency,
        team,
        idle_kind,
        -- rounded per piece and summed as DECIMAL: exact sums, independent of row order
        CAST(EffectiveCost / hours AS DECIMAL(38, 10)) AS cost,
        CAST(gpu_hours / hours AS DECIMAL(38, 10)) AS gpu_hours,
        unnest(charge_period_hours(ChargePeriodStart, ChargePeriodEnd)) AS hour
    FROM idle
)

SELECT
    billing_month(BillingPeriodStart) AS billing_month,
    team,
    BillingCurrency AS currency,
    isodow(hour) AS iso_weekday,
    dayname(hour) AS weekday,
    hour(hour) AS hour_of_day,
    CAST(sum(gpu_hours) AS DOUBLE) AS idle_gpu_hours,
    CAST(sum(gpu_hours) FILTER (WHERE idle_kind = 'allocated') AS DOUBLE) AS idle_allocated_gpu_hours,
    CAST(sum(cost) AS DECIMAL(38, 10)) AS idle_cost
FROM hourly
GROUP BY ALL
