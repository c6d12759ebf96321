-- Where each team's money went, per billing month and currency: one row per cost category.
WITH team_month AS (
    SELECT * FROM showback.team_month
)

SELECT billing_month, team, currency, category, cost
FROM team_month
UNPIVOT (
    cost FOR category IN (
        run_cost AS 'run',
        idle_allocated_cost AS 'idle_allocated',
        idle_underutilized_cost AS 'idle_underutilized',
        idle_unallocated_cost AS 'idle_unallocated',
        idle_unused_commitment_cost AS 'idle_unused_commitment',
        checkpoint_storage_cost AS 'checkpoint_storage',
        egress_cost AS 'egress',
        other_cost AS 'other'
    )
)
ORDER BY billing_month, team, currency, category
