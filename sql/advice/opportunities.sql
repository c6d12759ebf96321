-- advice.opportunities: every ESTIMATED saving of the advice models with money in it, one row per
-- opportunity, ranked per month, team and currency by estimated saving (rank 1 = largest). A run's
-- right-sizing contributes its best alternative only. Opportunities overlap (a run may be right-sized AND moved
-- to spot), so they are never added up; they are estimates with their method and evidence, never billed money.
-- team is NULL for company-wide opportunities (owned GPUs). No parameters.
WITH estimates AS (
    SELECT month, team, currency, opportunity, estimated_saving, method, evidence, run_groups
    FROM advice.right_sizing
    WHERE best
    UNION ALL BY NAME
    SELECT month, team, currency, opportunity, estimated_saving, method, evidence, run_groups
    FROM advice.spot_what_if
    UNION ALL BY NAME
    SELECT month, team, currency, opportunity, estimated_saving, method, evidence, run_groups
    FROM advice.checkpoint_intervals
    UNION ALL BY NAME
    SELECT month, team, currency, opportunity, estimated_saving, method, evidence, run_groups
    FROM advice.checkpoint_retention
    UNION ALL BY NAME
    SELECT month, team, currency, opportunity, estimated_saving, method, evidence, run_groups
    FROM advice.autostop_replay
    UNION ALL BY NAME
    SELECT month, team, currency, opportunity, estimated_saving, method, evidence, run_groups
    FROM advice.owned_vs_rented
),

-- a saving under a cent is not an opportunity anyone acts on
worth_a_cent AS (
    SELECT * FROM estimates WHERE estimated_saving >= 0.01
)

SELECT
    month,
    team,
    currency,
    row_number() OVER (
        PARTITION BY month, team, currency ORDER BY estimated_saving DESC, opportunity, run_groups
    ) AS rank,
    opportunity,
    estimated_saving,
    method,
    evidence,
    run_groups
FROM worth_a_cent
ORDER BY month, team NULLS FIRST, currency, rank
