-- Jobs ranked by cost within each billing month and currency, with their idle share, GPU model and run group;
-- the cost parts are rounded to cents that add up to total_cost (largest remainder; exact: showback.job_costs).
WITH jobs AS (
    SELECT
        *,
        cents_that_foot([run_cost, idle_cost, checkpoint_storage_cost, egress_cost]) AS parts
    FROM showback.job_costs
)

SELECT
    billing_month,
    currency,
    rank() OVER (PARTITION BY billing_month, currency ORDER BY jobs.total_cost DESC, cluster, job_id) AS cost_rank,
    team,
    cluster,
    job_id,
    name,
    state,
    outcome,
    session,
    run_group,
    gpu_model,
    tenths(gpu_hours) AS gpu_hours,
    CAST(list_sum(parts) AS DECIMAL(18, 2)) AS total_cost,
    parts[1] AS run_cost,
    parts[2] AS idle_cost,
    parts[3] AS checkpoint_storage_cost,
    parts[4] AS egress_cost,
    CASE WHEN jobs.total_cost > 0 THEN round(100 * jobs.idle_cost / jobs.total_cost, 2) END AS idle_percent
FROM jobs
ORDER BY billing_month, currency, cost_rank
