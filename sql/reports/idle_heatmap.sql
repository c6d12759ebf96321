-- Statement $month: each team's idle GPU-hours and idle cost (reporting currency, when there is one) per ISO
-- weekday (1 = Monday) and UTC hour of day, summed over source currencies (showback.idle_by_hour_of_week).
WITH idle AS (
    SELECT * FROM showback.idle_by_hour_of_week WHERE billing_month = $month
),

rates AS (
    SELECT DISTINCT currency, exchange_rate
    FROM showback.team_month_reporting
    WHERE billing_month = $month
)

SELECT
    i.team,
    i.iso_weekday,
    i.hour_of_day,
    CAST(sum(CAST(i.idle_gpu_hours AS DECIMAL(38, 10))) AS DECIMAL(38, 6)) AS idle_gpu_hours,
    CAST(sum(round(i.idle_cost * r.exchange_rate, 10)) AS DECIMAL(38, 10)) AS idle_cost_reporting
FROM idle AS i
LEFT JOIN rates AS r ON r.currency IS NOT DISTINCT FROM i.currency
GROUP BY ALL
ORDER BY ALL
