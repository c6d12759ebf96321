-- BillingCurrency and PricingCurrency are ISO 4217 codes.
SELECT 'BillingCurrency' AS column_name, BillingCurrency || ' is not an ISO 4217 code' AS problem,
    x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE BillingCurrency NOT IN (SELECT code FROM ref.iso_4217)
UNION ALL
SELECT 'PricingCurrency', PricingCurrency || ' is not an ISO 4217 code', x_SourceFile, x_SourceLineItemId
FROM focus_rows WHERE PricingCurrency IS NOT NULL AND PricingCurrency NOT IN (SELECT code FROM ref.iso_4217)
