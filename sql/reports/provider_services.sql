-- Statement $month: each team's EffectiveCost per provider, service and source currency (allocation.cost_split),
-- with the reporting-currency amount at the month's rate. billing_month() is the warehouse's macro.
WITH split AS (
    SELECT * FROM allocation.cost_split WHERE billing_month(BillingPeriodStart) = $month
),

rates AS (
    SELECT DISTINCT currency, reporting_currency, exchange_rate
    FROM showback.team_month_reporting
    WHERE billing_month = $month
)

SELECT
    s.team,
    s.ProviderName AS provider,
    coalesce(s.ServiceName, '(no service)') AS service,
    s.BillingCurrency AS currency,
    sum(s.EffectiveCost) AS cost,
    CAST(round(sum(s.EffectiveCost) * r.exchange_rate, 10) AS DECIMAL(38, 10)) AS cost_reporting
FROM split AS s
LEFT JOIN rates AS r ON r.currency IS NOT DISTINCT FROM s.BillingCurrency
GROUP BY s.team, s.ProviderName, coalesce(s.ServiceName, '(no service)'), s.BillingCurrency, r.exchange_rate
ORDER BY s.team, cost_reporting DESC NULLS LAST, cost DESC, provider, service, currency NULLS FIRST
