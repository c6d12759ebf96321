-- Statement $month: each team's $top most expensive jobs of the month (showback.job_costs; by reporting-currency
-- cost when there is one), with their run group's cost to finish (all attempts, all months; NULL if unfinished).
WITH jobs AS (
    SELECT * FROM showback.job_costs WHERE billing_month = $month
),

rates AS (
    SELECT DISTINCT currency, exchange_rate
    FROM showback.team_month_reporting
    WHERE billing_month = $month
)

SELECT
    j.team,
    j.cluster,
    j.job_id,
    j.name,
    j."user",
    j.run_group,
    j.state,
    j.failed,
    j.currency,
    CAST(j.gpu_hours AS DECIMAL(38, 6)) AS gpu_hours,
    j.total_cost,
    CAST(round(j.total_cost * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS total_cost_reporting,
    j.run_group_cost_to_finish,
    CAST(round(j.run_group_cost_to_finish * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS run_group_cost_to_finish_reporting
FROM jobs AS j
LEFT JOIN rates AS r ON r.currency IS NOT DISTINCT FROM j.currency
QUALIFY row_number() OVER (
    PARTITION BY j.team ORDER BY coalesce(total_cost_reporting, j.total_cost) DESC, j.cluster, j.job_id, j.currency
) <= $top
ORDER BY j.team, coalesce(total_cost_reporting, j.total_cost) DESC, j.cluster, j.job_id, j.currency
