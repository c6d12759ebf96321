-- Macros of the advice models. usage_once(): gpu.usage with each (cluster, node, hour, job) once. Two billing
-- months' usage can both cover an hour (a charge of one month may cover hours of another); the month whose UTC
-- month holds the hour keeps it, else the later one. Needs billing_month(). No parameters.
CREATE OR REPLACE TEMP MACRO usage_once() AS TABLE
SELECT u.*
FROM gpu.usage AS u
QUALIFY row_number() OVER (
    PARTITION BY u.cluster, u.node, u.hour, u.job_id
    ORDER BY
        billing_month(u.billing_period_start) = CAST(date_trunc('month', timezone('UTC', u.hour)) AS DATE) DESC,
        u.billing_period_start DESC
) = 1;
