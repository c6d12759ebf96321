-- The exchange rates statement $month converts with: one row per source currency, the month's locked rate
-- (or, before it closes, the newest rate dated in the month) as showback.team_month_reporting applied it.
-- The reporting currency itself converts at 1 and has no rate date.
WITH reporting AS (
    SELECT * FROM showback.team_month_reporting WHERE billing_month = $month
)

SELECT DISTINCT
    currency,
    reporting_currency,
    exchange_rate,
    rate_date,
    rate_source
FROM reporting
ORDER BY currency NULLS FIRST
