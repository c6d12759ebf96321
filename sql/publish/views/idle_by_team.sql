-- Idle GPU money per team and month: what share of the team's cost paid for GPUs that did nothing.
WITH team_month AS (
    SELECT * FROM showback.team_month
)

SELECT
    billing_month,
    team,
    currency,
    idle_cost,
    idle_allocated_cost,
    idle_underutilized_cost,
    idle_unallocated_cost,
    idle_unused_commitment_cost,
    total_cost,
    CASE WHEN total_cost > 0 THEN round(100 * idle_cost / total_cost, 2) END AS idle_percent,
    gpu_hours,
    gpu_hours - active_gpu_hours AS idle_gpu_hours
FROM team_month
ORDER BY billing_month, idle_cost DESC, team
