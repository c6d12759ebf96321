-- The lines of version $version of billing month $month's chargeback statement, inserted into
-- chargeback.statement_lines: one per team and source currency, from showback, with the reporting-currency
-- total at the month's (locked) rate. Ordered, so its hash is stable. Parameters: $month (its first day),
-- $version.
INSERT INTO chargeback.statement_lines
WITH team_month AS (
    SELECT * FROM showback.team_month WHERE billing_month = $month
),

reporting AS (
    SELECT billing_month, team, currency, reporting_currency, exchange_rate, total_cost_reporting
    FROM showback.team_month_reporting
    WHERE billing_month = $month
),

lines AS (
    SELECT
        t.billing_month,
        t.team,
        t.currency,
        t.run_cost,
        t.idle_allocated_cost,
        t.idle_underutilized_cost,
        t.idle_unallocated_cost,
        t.idle_unused_commitment_cost,
        t.checkpoint_storage_cost,
        t.egress_cost,
        t.other_cost,
        t.total_cost,
        t.billed_cost,
        t.gpu_hours,
        t.failed_run_cost,
        t.completed_runs,
        r.reporting_currency,
        r.exchange_rate,
        r.total_cost_reporting
    FROM team_month AS t
    LEFT JOIN reporting AS r USING (billing_month, team, currency)
    ORDER BY t.team, t.currency NULLS FIRST
)

SELECT $month, $version, * EXCLUDE (billing_month) FROM lines
