-- Statement $month: each team's $top most expensive run groups of the month (the attempts of one run): their
-- cost this month, attempts and failed attempts this month, and, when the run finished, its whole cost to
-- finish (all attempts, all months: what a finished run cost).
WITH jobs AS (
    SELECT * FROM showback.job_costs WHERE billing_month = $month
),

rates AS (
    SELECT DISTINCT currency, exchange_rate
    FROM showback.team_month_reporting
    WHERE billing_month = $month
),

groups AS (
    SELECT
        team,
        cluster,
        run_group,
        currency,
        count(*) AS jobs_in_month,
        count(*) FILTER (WHERE failed) AS failed_jobs_in_month,
        any_value(run_group_attempts) AS attempts,
        bool_or(run_group_completed) AS completed,
        sum(total_cost) AS month_cost,
        any_value(run_group_cost_to_finish) AS cost_to_finish
    FROM jobs
    GROUP BY ALL
)

SELECT
    g.*,
    CAST(round(g.month_cost * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS month_cost_reporting,
    CAST(round(g.cost_to_finish * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS cost_to_finish_reporting
FROM groups AS g
LEFT JOIN rates AS r ON r.currency IS NOT DISTINCT FROM g.currency
QUALIFY row_number() OVER (
    PARTITION BY g.team ORDER BY coalesce(month_cost_reporting, g.month_cost) DESC, g.cluster, g.run_group, g.currency
) <= $top
ORDER BY g.team, coalesce(month_cost_reporting, g.month_cost) DESC, g.cluster, g.run_group, g.currency
