-- Idle GPU money per team and month: what share of the team's cost paid for GPUs that did nothing. The cents are
-- views.cost_by_team_month_category's (the idle kinds add up to idle_cost, every category to total_cost); the
-- share is of the exact amounts.
WITH category_cents AS (
    SELECT
        billing_month,
        team,
        currency,
        sum(cost) FILTER (WHERE starts_with(category, 'idle_')) AS idle_cost,
        sum(cost) FILTER (WHERE category = 'idle_allocated') AS idle_allocated_cost,
        sum(cost) FILTER (WHERE category = 'idle_underutilized') AS idle_underutilized_cost,
        sum(cost) FILTER (WHERE category = 'idle_unallocated') AS idle_unallocated_cost,
        sum(cost) FILTER (WHERE category = 'idle_unused_commitment') AS idle_unused_commitment_cost,
        sum(cost) AS total_cost
    FROM views.cost_by_team_month_category
    GROUP BY ALL
)

SELECT
    t.billing_month,
    t.team,
    t.currency,
    CAST(c.idle_cost AS DECIMAL(18, 2)) AS idle_cost,
    CAST(c.idle_allocated_cost AS DECIMAL(18, 2)) AS idle_allocated_cost,
    CAST(c.idle_underutilized_cost AS DECIMAL(18, 2)) AS idle_underutilized_cost,
    CAST(c.idle_unallocated_cost AS DECIMAL(18, 2)) AS idle_unallocated_cost,
    CAST(c.idle_unused_commitment_cost AS DECIMAL(18, 2)) AS idle_unused_commitment_cost,
    CAST(c.total_cost AS DECIMAL(18, 2)) AS total_cost,
    CASE WHEN t.total_cost > 0 THEN round(100 * t.idle_cost / t.total_cost, 2) END AS idle_percent,
    tenths(t.gpu_hours) AS gpu_hours,
    tenths(t.gpu_hours - t.active_gpu_hours) AS idle_gpu_hours
FROM showback.team_month AS t
JOIN category_cents AS c USING (billing_month, team, currency)
ORDER BY t.billing_month, t.idle_cost DESC, t.team
