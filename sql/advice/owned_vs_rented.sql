-- advice.owned_vs_rented: the fleet's rented GPU time per billing month, GPU model and currency against owning
-- the GPUs it needed (an ESTIMATE, opportunity 'owned GPUs', company-wide: team NULL).
-- Method: rented = the split's run and idle pieces (allocation.cost_split, billed EffectiveCost and GPU-hours) of
-- charges on catalog GPU instance types (focus.costs x_InstanceType -> ref.gpu_instances, as showback.job_costs
-- reads the model). Capacity = the GPUs owning would need: the most GPU-hours billed in any one hour, rounded up
-- to whole GPUs (a charge's GPU-hours spread evenly over its hours: exact for hourly charges, an average for
-- daily ones). Owned cost per GPU-hour = capex / (depreciation years x 8760) + watts x PUE / 1000 x price per
-- kWh (nominal watts: DCGM energy is not collected yet) + colocation per GPU-month / hours in the month; owned
-- monthly cost = capacity x hours in the month at that cost (its components, each rounded, add up to it).
-- Sustained utilization = rented GPU-hours / (capacity x hours in the month); owning pays above break-even =
-- owned / rented cost per GPU-hour. estimated_saving = rented cost - owned monthly cost (negative: renting is
-- cheaper; the row is kept). Parameters: advice.owned_hardware (per GPU model and currency; NULL saving where
-- none is configured).
WITH catalog_pieces AS (
    SELECT
        s.billing_month AS month,
        s.BillingCurrency AS currency,
        g.gpu_model,
        s.charge_key,
        s.ProviderName,
        s.ChargePeriodStart,
        s.ChargePeriodEnd,
        s.EffectiveCost,
        s.cluster,
        s.job_id,
        CAST(s.gpu_hours AS DECIMAL(38, 10)) AS gpu_hours
    FROM allocation.cost_split AS s
    JOIN focus.costs AS c ON c.x_DeliveryId = s.x_DeliveryId AND c.x_SourceLineItemId = s.x_SourceLineItemId
    JOIN ref.gpu_instances AS g ON g.provider = c.ProviderName AND g.instance_type = c.x_InstanceType
    WHERE s.category IN ('run', 'idle')
),

-- the runs (and sessions) whose jobs held GPUs of the model in the month: the work owning would have carried
runs_on_model AS (
    SELECT p.month, p.currency, p.gpu_model, list(DISTINCT j.run_group ORDER BY j.run_group) AS run_groups
    FROM catalog_pieces AS p
    JOIN (SELECT DISTINCT cluster, job_id, run_group FROM showback.job_costs) AS j USING (cluster, job_id)
    GROUP BY ALL
),

-- one row per charge: its pieces' money and GPU-hours (DECIMAL sums: exact, independent of row order)
charges AS (
    SELECT
        month,
        currency,
        gpu_model,
        charge_key,
        ProviderName,
        ChargePeriodStart,
        ChargePeriodEnd,
        sum(EffectiveCost) AS cost,
        sum(gpu_hours) AS gpu_hours,
        charge_period_hour_count(ChargePeriodStart, ChargePeriodEnd) AS hours
    FROM catalog_pieces
    GROUP BY ALL
),

-- GPU-hours billed in each hour: a charge's spread evenly over the hours of its period
hourly AS (
    SELECT
        month,
        currency,
        gpu_model,
        CAST(round(gpu_hours * CAST(1 / hours AS DECIMAL(38, 18)), 10) AS DECIMAL(38, 10)) AS gpu_hours,
        unnest(charge_period_hours(ChargePeriodStart, ChargePeriodEnd)) AS hour
    FROM charges
),

peaks AS (
    SELECT month, currency, gpu_model, max(gpu_hours) AS peak_gpus
    FROM (SELECT month, currency, gpu_model, hour, sum(gpu_hours) AS gpu_hours FROM hourly GROUP BY ALL)
    GROUP BY ALL
),

rented AS (
    SELECT
        month,
        currency,
        gpu_model,
        sum(gpu_hours) AS rented_gpu_hours,
        sum(cost) AS rented_cost,
        string_agg(DISTINCT ProviderName, ', ' ORDER BY ProviderName) AS providers,
        -- hours in the UTC month: the hours owned GPUs are paid for
        (epoch(month + INTERVAL 1 MONTH) - epoch(month)) / 3600 AS hours_in_month
    FROM charges
    GROUP BY ALL
),

fleet AS (
    SELECT
        r.*,
        p.peak_gpus,
        -- whole GPUs; the millionth tolerates the rounding of spread GPU-hours (8.0000000001 is 8 GPUs)
        CAST(ceil(p.peak_gpus - 0.000001) AS INTEGER) AS capacity,
        CAST(round(r.rented_cost * CAST(1 / nullif(r.rented_gpu_hours, 0) AS DECIMAL(38, 18)), 10)
            AS DECIMAL(38, 10)) AS rented_cost_per_gpu_hour
    FROM rented AS r
    JOIN peaks AS p USING (month, currency, gpu_model)
),

-- owned cost of the month's capacity, by component: each DOUBLE factor as DECIMAL before it multiplies money
owned AS (
    SELECT
        f.month,
        f.currency,
        f.gpu_model,
        o.capex_per_gpu,
        o.depreciation_years,
        o.watts_per_gpu,
        o.pue,
        o.price_per_kwh,
        o.colocation_per_gpu_month,
        o.example,
        f.capacity * f.hours_in_month AS owned_gpu_hours,
        round(o.capex_per_gpu * CAST(1 / (o.depreciation_years * 8760) AS DECIMAL(38, 18)), 10)
            AS depreciation_per_gpu_hour,
        round(o.price_per_kwh * CAST(o.watts_per_gpu * o.pue / 1000 AS DECIMAL(38, 18)), 10) AS power_per_gpu_hour,
        round(o.colocation_per_gpu_month * CAST(1 / f.hours_in_month AS DECIMAL(38, 18)), 10)
            AS colocation_per_gpu_hour,
        round(
            o.capex_per_gpu
            * CAST(f.capacity * f.hours_in_month / (o.depreciation_years * 8760) AS DECIMAL(38, 18)),
            10
        ) AS depreciation_cost,
        round(
            o.price_per_kwh * CAST(f.capacity * f.hours_in_month * o.watts_per_gpu * o.pue / 1000 AS DECIMAL(38, 18)),
            10
        ) AS power_cost,
        o.colocation_per_gpu_month * f.capacity AS colocation_cost
    FROM fleet AS f
    JOIN advice.owned_hardware AS o ON o.gpu_model = f.gpu_model AND o.currency = f.currency
),

compared AS (
    SELECT
        f.*,
        o.* EXCLUDE (month, currency, gpu_model),
        f.rented_gpu_hours / nullif(f.capacity * f.hours_in_month, 0) AS utilization,
        CAST(o.depreciation_per_gpu_hour + o.power_per_gpu_hour + o.colocation_per_gpu_hour AS DECIMAL(38, 10))
            AS owned_cost_per_gpu_hour,
        CAST(o.depreciation_cost + o.power_cost + o.colocation_cost AS DECIMAL(38, 10)) AS owned_monthly_cost
    FROM fleet AS f
    LEFT JOIN owned AS o USING (month, currency, gpu_model)
),

judged AS (
    SELECT
        *,
        CAST(owned_cost_per_gpu_hour AS DOUBLE) / nullif(CAST(rented_cost_per_gpu_hour AS DOUBLE), 0)
            AS break_even_utilization,
        CASE WHEN rented_gpu_hours > 0 THEN CAST(rented_cost - owned_monthly_cost AS DECIMAL(38, 10)) END
            AS estimated_saving
    FROM compared
)

SELECT
    month,
    CAST(NULL AS VARCHAR) AS team,
    currency,
    gpu_model,
    providers,
    CAST(rented_gpu_hours AS DOUBLE) AS rented_gpu_hours,
    CAST(rented_cost AS DECIMAL(38, 10)) AS rented_cost,
    rented_cost_per_gpu_hour,
    CAST(peak_gpus AS DOUBLE) AS peak_gpus,
    capacity,
    hours_in_month,
    CAST(utilization AS DOUBLE) AS utilization,
    owned_cost_per_gpu_hour,
    depreciation_per_gpu_hour,
    power_per_gpu_hour,
    colocation_per_gpu_hour,
    break_even_utilization,
    owned_gpu_hours,
    CAST(depreciation_cost AS DECIMAL(38, 10)) AS depreciation_cost,
    CAST(power_cost AS DECIMAL(38, 10)) AS power_cost,
    CAST(colocation_cost AS DECIMAL(38, 10)) AS colocation_cost,
    owned_monthly_cost,
    CASE
        WHEN owned_monthly_cost IS NULL THEN format('no owned cost configured for {} in {}', gpu_model, currency)
        WHEN estimated_saving IS NULL THEN 'no rented GPU-hours billed: not comparable'
        WHEN estimated_saving > 0 THEN format(
            'owning pays: utilization {}% > break-even {}%',
            CAST(round(utilization * 100) AS INTEGER), CAST(round(break_even_utilization * 100) AS INTEGER)
        )
        ELSE format(
            'renting pays: utilization {}% <= break-even {}%',
            CAST(round(utilization * 100) AS INTEGER), CAST(round(break_even_utilization * 100) AS INTEGER)
        )
    END AS verdict,
    'owned GPUs' AS opportunity,
    estimated_saving,
    CASE WHEN example THEN 'EXAMPLE owned-hardware costs: ' ELSE '' END
    || 'Rented GPU time of the month against owning its peak (the most GPUs billed in any hour, daily charges '
    || 'spread evenly) every hour of the month at straight-line depreciation + nominal power (watts x PUE x price '
    || 'per kWh; DCGM energy is not collected yet) + colocation.' AS method,
    format(
        'rented {} GPU-h of {} for {} {} ({} per GPU-h) from {}; peak {} GPUs in one hour, utilization {}% of {} x {} '
        || 'h',
        round(rented_gpu_hours, 2), gpu_model, round(rented_cost, 2), currency, round(rented_cost_per_gpu_hour, 4),
        providers, round(peak_gpus, 2), round(utilization * 100, 1), capacity, hours_in_month
    ) || CASE
        WHEN owned_monthly_cost IS NULL
            THEN format('; no owned cost configured for {} in {}', gpu_model, currency)
        ELSE format(
            '; owned {} per GPU-h (depreciation {}, power {}, colocation {}): {} for the month, break-even {}%',
            round(owned_cost_per_gpu_hour, 4), round(depreciation_per_gpu_hour, 4), round(power_per_gpu_hour, 4),
            round(colocation_per_gpu_hour, 4), round(owned_monthly_cost, 2), round(break_even_utilization * 100, 1)
        )
    END AS evidence,
    coalesce(r.run_groups, CAST([] AS VARCHAR[])) AS run_groups
FROM judged
LEFT JOIN runs_on_model AS r USING (month, currency, gpu_model)
ORDER BY month, currency, gpu_model
