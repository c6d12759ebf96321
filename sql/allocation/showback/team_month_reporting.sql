-- showback.team_month_reporting: team_month converted into the configured reporting currency, one row per
-- (billing month, team, source currency) with the rate and its date stored beside the amounts. The rate is
-- the newest one dated on or before the month's last day, or the one locked when the month closed
-- (meta.locked_rates); the reporting currency itself converts at 1.
-- Empty when no reporting currency is configured (sums across currencies are never made implicitly).

WITH team_month AS (
    SELECT * FROM showback.team_month
),

reporting AS (
    SELECT currency AS reporting_currency FROM alloc.reporting
),

locked AS (
    SELECT * FROM meta.locked_rates
),

rated AS (
    SELECT
        t.*,
        r.reporting_currency,
        CASE WHEN t.currency = r.reporting_currency THEN 1 ELSE coalesce(l.rate, x.rate) END AS exchange_rate,
        CASE
            WHEN t.currency = r.reporting_currency THEN NULL
            WHEN l.rate IS NOT NULL THEN l.rate_date
            ELSE x.rate_date
        END AS rate_date,
        CASE WHEN l.rate IS NOT NULL THEN l.rate_source ELSE x.source_file END AS rate_source
    FROM team_month AS t
    CROSS JOIN reporting AS r
    LEFT JOIN locked AS l
        ON l.billing_month = t.billing_month AND l.currency = t.currency AND l.reporting_currency = r.reporting_currency
    LEFT JOIN LATERAL (
        SELECT rate, rate_date, source_file
        FROM alloc.exchange_rates AS e
        WHERE e.currency = t.currency AND e.rate_date < t.billing_month + INTERVAL 1 MONTH
        ORDER BY e.rate_date DESC
        LIMIT 1
    ) AS x ON true
)

SELECT
    billing_month,
    team,
    currency,
    reporting_currency,
    CAST(exchange_rate AS DECIMAL(38, 18)) AS exchange_rate,
    rate_date,
    rate_source,
    total_cost,
    CAST(round(run_cost * exchange_rate, 10) AS DECIMAL(38, 10)) AS run_cost_reporting,
    CAST(round(idle_cost * exchange_rate, 10) AS DECIMAL(38, 10)) AS idle_cost_reporting,
    CAST(round(checkpoint_storage_cost * exchange_rate, 10) AS DECIMAL(38, 10)) AS checkpoint_storage_cost_reporting,
    CAST(round(egress_cost * exchange_rate, 10) AS DECIMAL(38, 10)) AS egress_cost_reporting,
    CAST(round(other_cost * exchange_rate, 10) AS DECIMAL(38, 10)) AS other_cost_reporting,
    CAST(round(total_cost * exchange_rate, 10) AS DECIMAL(38, 10)) AS total_cost_reporting
FROM rated
