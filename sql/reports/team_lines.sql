-- Statement $month: one line per team and source currency (showback.team_month), every amount also in the
-- reporting currency at the month's rate (showback.team_month_reporting; the idle split and the failed-run
-- and per-run amounts are converted the same way: rounded to 10 decimals). DOUBLE measures become DECIMALs.
WITH team_month AS (
    SELECT * FROM showback.team_month WHERE billing_month = $month
),

reporting AS (
    SELECT * FROM showback.team_month_reporting WHERE billing_month = $month
),

failed_jobs AS (
    SELECT team, currency, count(*) AS failed_jobs
    FROM showback.job_costs
    WHERE billing_month = $month AND failed
    GROUP BY ALL
)

SELECT
    t.team,
    t.currency,
    t.run_cost,
    t.idle_allocated_cost,
    t.idle_underutilized_cost,
    t.idle_unallocated_cost,
    t.idle_unused_commitment_cost,
    t.checkpoint_storage_cost,
    t.egress_cost,
    t.other_cost,
    t.idle_cost,
    t.total_cost,
    t.billed_cost,
    CAST(t.gpu_hours AS DECIMAL(38, 6)) AS gpu_hours,
    CAST(t.active_gpu_hours AS DECIMAL(38, 6)) AS active_gpu_hours,
    CAST(t.mean_gpu_utilization AS DECIMAL(38, 6)) AS mean_gpu_utilization,
    t.failed_run_cost,
    coalesce(f.failed_jobs, 0) AS failed_jobs,
    t.completed_runs,
    t.cost_per_completed_run,
    -- data quality: the jobs' GPU cost, and the part of it priced by node-level activity shared between jobs
    t.run_cost + t.idle_allocated_cost + t.idle_underutilized_cost AS jobs_gpu_cost,
    t.node_shared_gpu_cost,
    r.reporting_currency,
    r.exchange_rate,
    r.rate_date,
    r.rate_source,
    r.run_cost_reporting,
    CAST(round(t.idle_allocated_cost * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS idle_allocated_cost_reporting,
    CAST(round(t.idle_underutilized_cost * r.exchange_rate, 10) AS DECIMAL(38, 10))
        AS idle_underutilized_cost_reporting,
    CAST(round(t.idle_unallocated_cost * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS idle_unallocated_cost_reporting,
    CAST(round(t.idle_unused_commitment_cost * r.exchange_rate, 10) AS DECIMAL(38, 10))
        AS idle_unused_commitment_cost_reporting,
    r.checkpoint_storage_cost_reporting,
    r.egress_cost_reporting,
    r.other_cost_reporting,
    r.idle_cost_reporting,
    r.total_cost_reporting,
    CAST(round(t.billed_cost * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS billed_cost_reporting,
    CAST(round(t.failed_run_cost * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS failed_run_cost_reporting,
    CAST(round(t.cost_per_completed_run * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS cost_per_completed_run_reporting
FROM team_month AS t
LEFT JOIN reporting AS r USING (team, currency)
LEFT JOIN failed_jobs AS f USING (team, currency)
ORDER BY t.team, t.currency NULLS FIRST
