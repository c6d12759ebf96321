-- Data quality per billing month and currency: the jobs' GPU cost (run and held idle) priced by node-level
-- activity shared between jobs, and its share; only months where some was. No parameters.
SELECT
    strftime(billing_month, '%Y-%m') AS billing_month,
    currency,
    round(sum(node_shared_gpu_cost), 2) AS node_shared,
    round(sum(run_cost + idle_allocated_cost + idle_underutilized_cost), 2) AS jobs_gpu_cost,
    format('{:.1f}%', 100 * sum(node_shared_gpu_cost) / sum(run_cost + idle_allocated_cost + idle_underutilized_cost))
        AS share
FROM showback.team_month
GROUP BY ALL
HAVING sum(node_shared_gpu_cost) > 0
ORDER BY ALL
