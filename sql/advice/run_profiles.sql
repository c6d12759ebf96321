-- advice.run_profiles: every completed run (run group, not a session) per currency, with what the advice
-- methods need: its GPU model, provider and GPU count (of the final attempt), held and active GPU-hours, GPU
-- cost and cost to finish, spot charges and their list price, committed-capacity charges, its interruptions and
-- failures, and its activity (SM, tensor, DRAM: means weighted by held time; the highest hourly tensor activity)
-- and framebuffer high-water mark (DCGM FB_USED, the most any of its GPUs held in any hour). Billed figures are
-- read from allocation.cost_split / showback.job_costs, never changed. No parameters.
WITH attempts AS (
    SELECT DISTINCT
        cluster, job_id, team, run_group, outcome, start_time, gpu_count, gpu_model, run_group_attempts,
        run_group_completed_at, run_group_cost_to_finish, currency
    FROM showback.job_costs
    WHERE run_group_completed
),

final_attempts AS (
    SELECT
        cluster,
        team,
        run_group,
        currency,
        arg_max(gpu_model, (start_time, job_id)) AS gpu_model,
        arg_max(gpu_count, (start_time, job_id)) AS gpu_count,
        count(DISTINCT job_id) FILTER (WHERE outcome = 'preempted') AS interruptions,
        count(DISTINCT job_id) FILTER (WHERE outcome = 'failed') AS failures,
        any_value(run_group_attempts) AS attempts,
        any_value(run_group_completed_at) AS completed_at,
        any_value(run_group_cost_to_finish) AS cost_to_finish
    FROM attempts
    GROUP BY ALL
),

pieces AS (
    SELECT
        a.cluster,
        a.team,
        a.run_group,
        s.BillingCurrency AS currency,
        s.ProviderName,
        s.category,
        s.EffectiveCost,
        s.gpu_hours,
        c.PricingCategory,
        -- the piece's share of the charge's list price (the split's ratio of the charge)
        CAST(c.ListCost * CAST(s.allocated_ratio AS DECIMAL(38, 18)) AS DECIMAL(38, 10)) AS list_cost
    FROM allocation.cost_split AS s
    JOIN attempts AS a ON a.cluster = s.cluster AND a.job_id = s.job_id AND a.currency = s.BillingCurrency
    LEFT JOIN focus.costs AS c ON c.x_DeliveryId = s.x_DeliveryId AND c.x_SourceLineItemId = s.x_SourceLineItemId
    WHERE s.ChargePeriodStart < a.run_group_completed_at
),

money AS (
    SELECT
        cluster,
        team,
        run_group,
        currency,
        arg_max(ProviderName, (EffectiveCost, ProviderName)) FILTER (WHERE category IN ('run', 'idle')) AS provider,
        coalesce(sum(EffectiveCost) FILTER (WHERE category IN ('run', 'idle')), 0) AS gpu_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category IN ('run', 'idle') AND PricingCategory = 'Dynamic'), 0)
            AS spot_gpu_cost,
        coalesce(sum(list_cost) FILTER (WHERE category IN ('run', 'idle') AND PricingCategory = 'Dynamic'), 0)
            AS spot_gpu_list_cost,
        coalesce(sum(EffectiveCost) FILTER (WHERE category IN ('run', 'idle') AND PricingCategory = 'Committed'), 0)
            AS committed_gpu_cost,
        CAST(coalesce(sum(exact(gpu_hours)), 0) AS DOUBLE) AS gpu_hours
    FROM pieces
    GROUP BY ALL
),

activity AS (
    SELECT
        a.cluster,
        a.team,
        a.run_group,
        -- exact sums (sql/advice/macros.sql): the same activity gives the same profile on every rerun; activity
        -- to 6 decimals, beyond what DCGM measures
        round(CAST(sum(exact(u.active_seconds)) / 3600 AS DOUBLE), 6) AS active_gpu_hours,
        round(
            sum(exact(u.sm_active * u.allocated_seconds))
            / nullif(sum(exact(u.allocated_seconds)) FILTER (WHERE u.sm_active IS NOT NULL), 0), 6
        ) AS sm_active,
        round(
            sum(exact(u.tensor_active * u.allocated_seconds))
            / nullif(sum(exact(u.allocated_seconds)) FILTER (WHERE u.tensor_active IS NOT NULL), 0), 6
        ) AS tensor_active,
        round(
            sum(exact(u.dram_active * u.allocated_seconds))
            / nullif(sum(exact(u.allocated_seconds)) FILTER (WHERE u.dram_active IS NOT NULL), 0), 6
        ) AS dram_active,
        round(max(u.tensor_active), 6) AS peak_tensor_active,
        max(u.fb_used_mib) / 1024 AS fb_high_water_gib
    FROM (SELECT DISTINCT cluster, job_id, team, run_group FROM attempts) AS a
    -- an hour covered by two billing months' usage counts once
    JOIN usage_once() AS u USING (cluster, job_id)
    GROUP BY ALL
)

SELECT
    CAST(date_trunc('month', f.completed_at) AS DATE) AS completed_month,
    f.team,
    f.cluster,
    f.run_group,
    f.currency,
    f.attempts,
    f.interruptions,
    f.failures,
    f.completed_at,
    m.provider,
    f.gpu_model,
    f.gpu_count,
    m.gpu_hours,
    a.active_gpu_hours,
    m.gpu_cost,
    f.cost_to_finish,
    m.spot_gpu_cost,
    m.spot_gpu_list_cost,
    m.committed_gpu_cost,
    a.sm_active,
    a.tensor_active,
    a.dram_active,
    a.peak_tensor_active,
    a.fb_high_water_gib
FROM final_attempts AS f
LEFT JOIN money AS m USING (cluster, team, run_group, currency)
LEFT JOIN activity AS a USING (cluster, team, run_group)
ORDER BY completed_month, f.team, f.cluster, f.run_group, f.currency
