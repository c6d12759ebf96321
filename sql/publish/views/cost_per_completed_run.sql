-- What a finished training run really cost each team: all attempts (failed, preempted, restarted) of every run
-- group that completed in the month, divided by the runs completed; failed-run waste beside it.
WITH team_month AS (
    SELECT * FROM showback.team_month
)

SELECT
    billing_month,
    team,
    currency,
    completed_runs,
    cost_per_completed_run,
    failed_run_cost,
    total_cost
FROM team_month
WHERE completed_runs > 0 OR failed_run_cost <> 0
ORDER BY billing_month, team, currency
