-- The billing month (its first day) of a BillingPeriodStart, the one rule every model, check and reader uses
-- (Python: models/billing_month.py). Periods start at local midnight, UTC-12 to UTC+14, so 14 hours after the
-- start always falls inside the month in UTC. Persistent, not TEMP: the analyst file's views call it too.
CREATE OR REPLACE MACRO billing_month(period_start) AS
    CAST(date_trunc('month', timezone('UTC', period_start) + INTERVAL 14 HOUR) AS DATE);
