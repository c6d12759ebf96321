-- showback.user_month: per billing month, team, user and currency, what each user's jobs cost (EffectiveCost;
-- BilledCost beside it) by category, their GPU-hours, and their interactive sessions. Costs of no job (other,
-- unallocated idle, unused commitments, charges without telemetry) have no user and stay in team_month.

WITH jobs AS (
    SELECT * FROM showback.job_costs
)

SELECT
    billing_month,
    team,
    coalesce("user", 'unknown') AS "user",
    currency,
    sum(run_cost) AS run_cost,
    sum(idle_cost) AS idle_cost,
    sum(checkpoint_storage_cost) AS checkpoint_storage_cost,
    sum(egress_cost) AS egress_cost,
    sum(total_cost) AS total_cost,
    sum(billed_cost) AS billed_cost,
    coalesce(sum(total_cost) FILTER (WHERE session), 0) AS session_cost,
    count(DISTINCT (cluster, job_id)) AS jobs,
    -- DOUBLE measures are summed as DECIMAL: exact, so independent of row order (reruns give the same rows)
    CAST(sum(CAST(gpu_hours AS DECIMAL(38, 10))) AS DOUBLE) AS gpu_hours,
    CAST(sum(CAST(active_gpu_hours AS DECIMAL(38, 10))) AS DOUBLE) AS active_gpu_hours
FROM jobs
GROUP BY ALL
