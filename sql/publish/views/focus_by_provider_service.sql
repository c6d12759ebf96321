-- FOCUS charges per provider, billing account, service and month: billed, effective and list cost per currency,
-- each summed exactly and then rounded to cents (three measures, not parts of one total).
WITH costs AS (
    SELECT * FROM focus.costs
)

SELECT
    ProviderName,
    BillingAccountId,
    strftime(x_BillingMonth, '%Y-%m') AS billing_month,
    ServiceCategory,
    ServiceName,
    BillingCurrency,
    count(*) AS charges,
    cents(sum(BilledCost)) AS billed_cost,
    cents(sum(EffectiveCost)) AS effective_cost,
    cents(sum(ListCost)) AS list_cost
FROM costs
GROUP BY ALL
ORDER BY ALL
