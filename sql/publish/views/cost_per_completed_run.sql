-- What a finished training run really cost each team: all attempts (failed, preempted, restarted) of every run
-- group that completed in the month, charged before it completed, divided by the runs completed; failed,
-- preempted and cancelled attempts, estimated lost work, retained checkpoints and sessions beside it. Each
-- amount is rounded to cents on its own: they are parts of total_cost, not a split of it (no sum to foot).
WITH team_month AS (
    SELECT * FROM showback.team_month
)

SELECT
    billing_month,
    team,
    currency,
    completed_runs,
    cents(cost_per_completed_run) AS cost_per_completed_run,
    cents(failed_run_cost) AS failed_run_cost,
    cents(preempted_run_cost) AS preempted_run_cost,
    cents(cancelled_run_cost) AS cancelled_run_cost,
    cents(estimated_lost_work_cost) AS estimated_lost_work_cost,
    cents(retained_checkpoint_cost) AS retained_checkpoint_cost,
    sessions,
    cents(session_cost) AS session_cost,
    cents(total_cost) AS total_cost
FROM team_month
WHERE completed_runs > 0 OR failed_run_cost <> 0 OR preempted_run_cost <> 0 OR cancelled_run_cost <> 0
ORDER BY billing_month, team, currency
