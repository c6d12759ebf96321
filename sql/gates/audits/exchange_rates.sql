-- Currencies of the month that cannot be converted to the configured reporting currency (no rate dated on or
-- before the month's end). Nothing is returned when no reporting currency is configured.
-- Parameter: $billing_month (the month's first day).
SELECT currency, billing_month
FROM showback.team_month_reporting
WHERE billing_month = $billing_month AND exchange_rate IS NULL
