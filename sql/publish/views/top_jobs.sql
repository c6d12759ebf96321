-- Jobs ranked by cost within each billing month and currency, with their idle share and run group.
WITH jobs AS (
    SELECT * FROM showback.job_costs
)

SELECT
    billing_month,
    currency,
    rank() OVER (PARTITION BY billing_month, currency ORDER BY total_cost DESC, cluster, job_id) AS cost_rank,
    team,
    cluster,
    job_id,
    name,
    state,
    outcome,
    session,
    run_group,
    gpu_hours,
    total_cost,
    idle_cost,
    CASE WHEN total_cost > 0 THEN round(100 * idle_cost / total_cost, 2) END AS idle_percent
FROM jobs
ORDER BY billing_month, currency, cost_rank
