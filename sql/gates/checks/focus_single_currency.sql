-- One billing account bills one billing period in one currency; sums never mix currencies.
SELECT
    'BillingCurrency' AS column_name,
    'billing account ' || BillingAccountId || ' bills ' || strftime(BillingPeriodStart, '%Y-%m')
        || ' in several currencies: ' || string_agg(DISTINCT BillingCurrency, ', ' ORDER BY BillingCurrency) AS problem,
    min(x_SourceFile) AS x_SourceFile,
    min(x_SourceLineItemId) AS x_SourceLineItemId
FROM focus_rows
GROUP BY ProviderName, BillingAccountId, BillingPeriodStart
HAVING count(DISTINCT BillingCurrency) > 1
