-- Where each team's money went, per billing month and currency: one row per cost category, in cents that add
-- up to the team's month total rounded to cents (largest remainder; exact amounts in showback.team_month).
WITH team_month AS (
    SELECT
        billing_month,
        team,
        currency,
        cents_that_foot([
            run_cost,
            idle_allocated_cost,
            idle_underutilized_cost,
            idle_unallocated_cost,
            idle_unused_commitment_cost,
            checkpoint_storage_cost,
            egress_cost,
            other_cost
        ]) AS parts
    FROM showback.team_month
),

rounded AS (
    SELECT
        billing_month,
        team,
        currency,
        parts[1] AS run,
        parts[2] AS idle_allocated,
        parts[3] AS idle_underutilized,
        parts[4] AS idle_unallocated,
        parts[5] AS idle_unused_commitment,
        parts[6] AS checkpoint_storage,
        parts[7] AS egress,
        parts[8] AS other
    FROM team_month
)

SELECT billing_month, team, currency, category, cost
FROM rounded
UNPIVOT (
    cost FOR category IN (
        run,
        idle_allocated,
        idle_underutilized,
        idle_unallocated,
        idle_unused_commitment,
        checkpoint_storage,
        egress,
        other
    )
)
ORDER BY billing_month, team, currency, category
