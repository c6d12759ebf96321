-- FOCUS 1.0 / 1.1 / 1.2 exports of any provider -> FOCUS 1.2 rows (formats focus, aws-focus, azure-focus).
-- Input: temp view focus_passthrough_src (gpuledger/normalize/focus_passthrough.py): every FOCUS 1.2 column
-- typed, NULL where the source's version lacks it, the provider's x_ columns, and src_* hints (incl. the
-- line-item id: FOCUS has none, so the reader derives one from the file name and the row's content).
-- Parameters: $delivery_id, $source_format, $ingested_at, $provider_name (NULL for the generic format).
-- Values the source has pass through; columns FOCUS 1.1 and 1.2 added are derived from what the row carries;
-- values FOCUS lets one derive (an empty ContractedCost, ListCost or ContractedUnitPrice) and units outside
-- UnitFormat are repaired, and the row says so in x_SourceChanges (docs/decisions/0011).

WITH focus_export AS (
    SELECT * FROM focus_passthrough_src
),

-- the unit table's spellings for this provider, and those of any provider's FOCUS files
units AS (
    SELECT DISTINCT ON (source_unit) source_unit, focus_unit
    FROM ref.units
    WHERE provider = $provider_name OR provider = '*'
    ORDER BY source_unit, provider = '*'
),

aws_services AS (
    SELECT product_code, service_category, service_subcategory FROM ref.aws_services
),

focus_subcategories AS (
    SELECT service_category, service_subcategory FROM ref.focus_service_subcategories
),

-- the provider's own spellings of itself become the format's one name (docs/decisions/0004)
named AS (
    SELECT
        * REPLACE (
            CASE WHEN src_first_party_provider THEN $provider_name ELSE ProviderName END AS ProviderName,
            CASE WHEN src_first_party_publisher THEN $provider_name ELSE PublisherName END AS PublisherName,
            CASE WHEN src_first_party_issuer THEN $provider_name ELSE InvoiceIssuerName END AS InvoiceIssuerName
        )
    FROM focus_export
),

-- derivable prices a source left empty (FOCUS: ContractedCost defaults to ListCost without negotiated prices)
repaired AS (
    SELECT
        f.* REPLACE (
            coalesce(
                f.ListCost, CAST(f.ListUnitPrice * f.PricingQuantity AS DECIMAL(38, 10))
            ) AS ListCost,
            coalesce(
                f.ContractedCost,
                CAST(f.ContractedUnitPrice * f.PricingQuantity AS DECIMAL(38, 10)),
                f.ListCost,
                CAST(f.ListUnitPrice * f.PricingQuantity AS DECIMAL(38, 10))
            ) AS ContractedCost,
            CASE
                WHEN f.ContractedUnitPrice IS NOT NULL OR NOT f.needs_unit_prices THEN f.ContractedUnitPrice
                WHEN f.ContractedCost IS NOT NULL AND f.PricingQuantity <> 0
                    THEN CAST(f.ContractedCost / f.PricingQuantity AS DECIMAL(38, 10))
                ELSE f.ListUnitPrice
            END AS ContractedUnitPrice,
            coalesce(pu.focus_unit, f.PricingUnit) AS PricingUnit,
            coalesce(cu.focus_unit, f.ConsumedUnit) AS ConsumedUnit,
            list_concat(f.src_changes, [
                CASE WHEN f.ListCost IS NULL THEN 'MissingListCost' END,
                CASE WHEN f.ContractedCost IS NULL THEN 'MissingContractedCost' END,
                CASE
                    WHEN f.ContractedUnitPrice IS NULL AND f.needs_unit_prices THEN 'MissingContractedUnitPrice'
                END,
                CASE WHEN pu.focus_unit IS NULL AND NOT follows_unit_format(f.PricingUnit) THEN 'UnmappedUnit' END,
                CASE WHEN cu.focus_unit IS NULL AND NOT follows_unit_format(f.ConsumedUnit) THEN 'UnmappedUnit' END
            ]) AS src_changes
        )
    FROM (
        SELECT
            *,
            -- FOCUS requires unit prices on usage and purchases that are no corrections
            ChargeCategory IN ('Usage', 'Purchase') AND ChargeClass IS NULL AS needs_unit_prices
        FROM named
    ) AS f
    LEFT JOIN units AS pu ON pu.source_unit = f.PricingUnit
    LEFT JOIN units AS cu ON cu.source_unit = f.ConsumedUnit
),

-- ChargeFrequency is only Recommended: sources may leave it out
with_frequency AS (
    SELECT
        * REPLACE (
            coalesce(
                ChargeFrequency, CASE WHEN ChargeCategory = 'Usage' THEN 'Usage-Based' ELSE 'One-Time' END
            ) AS ChargeFrequency
        )
    FROM repaired
),

-- columns FOCUS 1.1 added
upgraded_1_1 AS (
    SELECT
        f.* REPLACE (
            coalesce(
                f.ServiceSubcategory,
                CASE WHEN s.service_category = f.ServiceCategory THEN s.service_subcategory END,
                -- a service named like a subcategory of its category ("Virtual Machines") is that subcategory
                n.service_subcategory,
                'Other (' || f.ServiceCategory || ')'
            ) AS ServiceSubcategory,
            coalesce(f.SkuMeter, CASE WHEN f.SkuId IS NOT NULL THEN f.x_UsageType END) AS SkuMeter,
            -- spend commitments count money, usage commitments count units
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
            END AS CommitmentDiscountUnit,
            coalesce(f.x_InstanceType, json_extract_string(f.SkuPriceDetails, '$.InstanceType')) AS x_InstanceType
        )
    FROM with_frequency AS f
    LEFT JOIN aws_services AS s ON s.product_code = f.x_ServiceCode
    LEFT JOIN focus_subcategories AS n
        ON n.service_category = f.ServiceCategory AND lower(n.service_subcategory) = lower(f.ServiceName)
),

-- columns FOCUS 1.2 added; prices in a differing pricing currency only through the source's own rate
upgraded_1_2 AS (
    SELECT
        * REPLACE (
            coalesce(BillingAccountType, src_billing_account_type) AS BillingAccountType,
            CASE WHEN SubAccountId IS NOT NULL THEN coalesce(SubAccountType, src_sub_account_type) END
                AS SubAccountType,
            coalesce(PricingCurrency, BillingCurrency) AS PricingCurrency,
            coalesce(
                PricingCurrencyEffectiveCost,
                CASE
                    WHEN coalesce(PricingCurrency, BillingCurrency) = BillingCurrency THEN EffectiveCost
                    ELSE CAST(EffectiveCost / nullif(src_pricing_to_billing_rate, 0) AS DECIMAL(38, 10))
                END
            ) AS PricingCurrencyEffectiveCost,
            coalesce(
                PricingCurrencyListUnitPrice,
                CASE
                    WHEN coalesce(PricingCurrency, BillingCurrency) = BillingCurrency THEN ListUnitPrice
                    ELSE CAST(ListUnitPrice / nullif(src_pricing_to_billing_rate, 0) AS DECIMAL(38, 10))
                END
            ) AS PricingCurrencyListUnitPrice,
            coalesce(
                PricingCurrencyContractedUnitPrice,
                CASE
                    WHEN coalesce(PricingCurrency, BillingCurrency) = BillingCurrency THEN ContractedUnitPrice
                    ELSE CAST(ContractedUnitPrice / nullif(src_pricing_to_billing_rate, 0) AS DECIMAL(38, 10))
                END
            ) AS PricingCurrencyContractedUnitPrice
        )
    FROM upgraded_1_1
)

SELECT
    * EXCLUDE (
        src_first_party_provider, src_first_party_publisher, src_first_party_issuer, src_billing_account_type,
        src_sub_account_type, src_pricing_to_billing_rate, src_file, src_line_item_id, src_changes, src_values,
        needs_unit_prices
    ),
    source_changes(src_changes) AS x_SourceChanges,
    src_values AS x_SourceValues,
    $source_format || '-' || x_SourceVersion AS x_SourceFormat,
    $delivery_id AS x_DeliveryId,
    src_file AS x_SourceFile,
    src_line_item_id AS x_SourceLineItemId,
    CAST(NULL AS VARCHAR) AS x_SourceLineItemType,
    CAST($ingested_at AS TIMESTAMPTZ) AS x_IngestedAt
FROM upgraded_1_2
