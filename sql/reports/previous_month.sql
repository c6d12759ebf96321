-- Statement $month: each team's totals of the month before, per source currency and in the reporting currency at
-- that month's rate, for the month-over-month change: as charged (its latest issued statement version) once it
-- was issued, so a restatement of it never changes this statement; today's showback while it was not.
WITH previous AS (
    SELECT CAST($month - INTERVAL 1 MONTH AS DATE) AS billing_month
),

latest AS (
    SELECT max(version) AS version
    FROM chargeback.statements
    WHERE billing_month = (SELECT billing_month FROM previous)
),

issued AS (
    SELECT team, currency, total_cost, total_cost_reporting
    FROM chargeback.statement_lines
    WHERE billing_month = (SELECT billing_month FROM previous) AND version = (SELECT version FROM latest)
),

today AS (
    SELECT team, currency, total_cost, total_cost_reporting
    FROM showback.team_month_reporting
    WHERE billing_month = (SELECT billing_month FROM previous)
    UNION ALL
    -- without a reporting currency, team_month_reporting is empty: the source-currency totals still compare
    SELECT team, currency, total_cost, NULL AS total_cost_reporting
    FROM showback.team_month
    WHERE billing_month = (SELECT billing_month FROM previous)
        AND NOT EXISTS (SELECT 1 FROM showback.team_month_reporting)
)

SELECT * FROM issued
UNION ALL
SELECT * FROM today WHERE (SELECT version FROM latest) IS NULL
ORDER BY team, currency NULLS FIRST
