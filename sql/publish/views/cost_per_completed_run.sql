-- What a finished training run really cost each team: all attempts (failed, preempted, restarted) of every run
-- group that completed in the month, charged before it completed, divided by the runs completed; failed,
-- preempted and cancelled attempts, estimated lost work, retained checkpoints and sessions beside it.
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
    preempted_run_cost,
    cancelled_run_cost,
    estimated_lost_work_cost,
    retained_checkpoint_cost,
    sessions,
    session_cost,
    total_cost
FROM team_month
WHERE completed_runs > 0 OR failed_run_cost <> 0 OR preempted_run_cost <> 0 OR cancelled_run_cost <> 0
ORDER BY billing_month, team, currency
