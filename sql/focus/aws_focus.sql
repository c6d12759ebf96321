-- AWS FOCUS exports (FOCUS_1_0_AWS, FOCUS_1_2_AWS) -> FOCUS 1.2 rows.
-- Input: temp view aws_focus_src (every FOCUS 1.2 column typed, NULL where a 1.0 export lacks it).
-- Parameters: $delivery_id, $source_format, $ingested_at, $provider_name.
-- 1.2 rows pass through; 1.0 rows get the 1.1/1.2 columns derived from what they carry.

WITH focus_export AS (
    SELECT * FROM aws_focus_src
),

services AS (
    SELECT product_code, service_category, service_subcategory FROM ref.aws_services
),

upgraded AS (
    SELECT
        f.* REPLACE (
            -- first-party AWS rows use one literal for provider, publisher and issuer (docs/decisions/0004)
            CASE
                WHEN f.InvoiceIssuerName LIKE 'Amazon Web Services%' OR f.InvoiceIssuerName = 'AWS'
                    THEN $provider_name
                ELSE f.InvoiceIssuerName
            END AS InvoiceIssuerName,
            CASE WHEN f.PublisherName LIKE 'Amazon Web Services%' THEN $provider_name ELSE f.PublisherName END
                AS PublisherName,
            CASE WHEN f.ProviderName LIKE 'Amazon Web Services%' THEN $provider_name ELSE f.ProviderName END
                AS ProviderName,
            coalesce(f.BillingAccountType, 'Payer Account') AS BillingAccountType,
            CASE WHEN f.SubAccountId IS NOT NULL THEN coalesce(f.SubAccountType, 'Linked Account') END
                AS SubAccountType,
            coalesce(
                f.ServiceSubcategory,
                CASE WHEN s.service_category = f.ServiceCategory THEN s.service_subcategory END,
                'Other (' || f.ServiceCategory || ')'
            ) AS ServiceSubcategory,
            coalesce(f.SkuMeter, CASE WHEN f.SkuId IS NOT NULL THEN f.x_UsageType END) AS SkuMeter,
            coalesce(f.PricingCurrency, f.BillingCurrency) AS PricingCurrency,
            coalesce(f.PricingCurrencyEffectiveCost, f.EffectiveCost) AS PricingCurrencyEffectiveCost,
            coalesce(f.PricingCurrencyListUnitPrice, f.ListUnitPrice) AS PricingCurrencyListUnitPrice,
            coalesce(f.PricingCurrencyContractedUnitPrice, f.ContractedUnitPrice) AS PricingCurrencyContractedUnitPrice,
            -- 1.1 added the commitment quantity: spend commitments count money, usage ones count units
            CASE
                WHEN f.CommitmentDiscountQuantity IS NOT NULL THEN f.CommitmentDiscountQuantity
                WHEN f.CommitmentDiscountId IS NULL OR f.ChargeClass IS NOT NULL
                    OR f.ChargeCategory NOT IN ('Usage', 'Purchase') THEN NULL
                WHEN f.CommitmentDiscountCategory = 'Spend'
                    THEN CASE WHEN f.ChargeCategory = 'Purchase' THEN f.BilledCost ELSE f.EffectiveCost END
                ELSE f.PricingQuantity
            END AS CommitmentDiscountQuantity,
            CASE
                WHEN f.CommitmentDiscountUnit IS NOT NULL THEN f.CommitmentDiscountUnit
                WHEN f.CommitmentDiscountId IS NULL OR f.ChargeClass IS NOT NULL
                    OR f.ChargeCategory NOT IN ('Usage', 'Purchase') THEN NULL
                WHEN f.CommitmentDiscountCategory = 'Spend' THEN f.BillingCurrency
                ELSE f.PricingUnit
            END AS CommitmentDiscountUnit
        )
    FROM focus_export AS f
    LEFT JOIN services AS s ON s.product_code = f.x_ServiceCode
)

SELECT
    * EXCLUDE (source_focus_version, source_file),
    $source_format || '-' || source_focus_version AS x_SourceFormat,
    $delivery_id AS x_DeliveryId,
    source_file AS x_SourceFile,
    CAST(NULL AS VARCHAR) AS x_SourceLineItemId,
    CAST(NULL AS VARCHAR) AS x_SourceLineItemType,
    CAST($ingested_at AS TIMESTAMPTZ) AS x_IngestedAt,
    CAST(NULL AS VARCHAR) AS x_InstanceType
FROM upgraded
