-- The billing month (its first day) of a BillingPeriodStart, the one rule every model, check and reader uses
-- (Python: models/billing_month.py). Periods start at local midnight, UTC-12 to UTC+14, so 14 hours after the
-- start always falls inside the month in UTC. Persistent, not TEMP: the analyst file's views call it too.
CREATE OR REPLACE MACRO billing_month(period_start) AS
    CAST(date_trunc('month', timezone('UTC', period_start) + INTERVAL 14 HOUR) AS DATE);

-- Whether a period start is midnight of a month's 1st in some billing time zone: at most 12 hours (UTC-12) after
-- UTC midnight of its billing month's 1st, as billing_month() takes it to be at most 14 hours before.
CREATE OR REPLACE MACRO starts_billing_month(period_start) AS
    timezone('UTC', period_start) <= billing_month(period_start) + INTERVAL 12 HOUR;
