-- FOCUS charges per provider, billing account, service and month: billed and effective cost per currency.
WITH costs AS (
    SELECT * FROM focus.costs
)

SELECT
    ProviderName,
    BillingAccountId,
    strftime(billing_month(BillingPeriodStart), '%Y-%m') AS billing_month,
    ServiceCategory,
    ServiceName,
    BillingCurrency,
    count(*) AS charges,
    sum(BilledCost) AS billed_cost,
    sum(EffectiveCost) AS effective_cost,
    sum(ListCost) AS list_cost
FROM costs
GROUP BY ALL
ORDER BY ALL
