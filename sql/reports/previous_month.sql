-- Statement $month: each team's totals of the month before (showback, today's figures), per source currency
-- and in the reporting currency at that month's rate, for the month-over-month change.
SELECT
    team,
    currency,
    total_cost,
    total_cost_reporting
FROM showback.team_month_reporting
WHERE billing_month = CAST($month - INTERVAL 1 MONTH AS DATE)
UNION ALL
-- without a reporting currency, team_month_reporting is empty: the source-currency totals still compare
SELECT
    team,
    currency,
    total_cost,
    NULL AS total_cost_reporting
FROM showback.team_month
WHERE billing_month = CAST($month - INTERVAL 1 MONTH AS DATE)
    AND NOT EXISTS (SELECT 1 FROM showback.team_month_reporting)
ORDER BY team, currency NULLS FIRST
