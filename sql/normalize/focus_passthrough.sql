-- FOCUS 1.0 / 1.1 / 1.2 exports of any provider -> FOCUS 1.2 rows (formats focus, aws-focus, azure-focus).
-- Input: temp view focus_passthrough_src (gpuledger/normalize/focus_passthrough.py): every FOCUS 1.2 column
-- typed, NULL where the source's version lacks it, the provider's x_ columns, and src_* hints (incl. the
-- line-item id: FOCUS has none, so the reader derives one from the file name and the row's content).
-- Parameters: $delivery_id, $source_format, $ingested_at.
-- Values the source has pass through; columns FOCUS 1.1 and 1.2 added are derived from what the row carries;
-- values FOCUS lets one derive (an empty ContractedCost, ListCost or ContractedUnitPrice) and units outside
-- UnitFormat are repaired, and the row says so in x_SourceChanges (docs/decisions/0011).

WITH focus_export AS (
    SELECT * FROM focus_passthrough_src
),

-- the unit table (models/units.py): a provider's spellings, and those of any provider's FOCUS files ('*')
units AS (
    SELECT provider, source_unit, focus_unit FROM ref.units
),

aws_services AS (
    SELECT product_code, service_category, service_subcategory FROM ref.aws_services
),

focus_subcategories AS (
    SELECT service_category, service_subcategory FROM ref.focus_service_subcategories
),

-- a provider's own spellings of itself become its one name, as provider and as publisher and issuer of its own
-- charges (docs/decisions/0004); src_first_party_* name the provider a spelling belongs to
named AS (
    SELECT
        * REPLACE (
            coalesce(src_first_party_provider, ProviderName) AS ProviderName,
            CASE
                WHEN src_first_party_publisher = coalesce(src_first_party_provider, ProviderName)
                    THEN src_first_party_publisher
                ELSE PublisherName
            END AS PublisherName,
            CASE
                WHEN src_first_party_issuer = coalesce(src_first_party_provider, ProviderName) THEN src_first_party_issuer
                ELSE InvoiceIssuerName
            END AS InvoiceIssuerName
        )
    FROM focus_export
),

-- values FOCUS 1.2 requires and lets one derive, which a source (often a FOCUS 1.0 export) left empty or wrote
-- inconsistently; every repair names itself in src_changes (models/focus.py SOURCE_CHANGES), money never changes
priced AS (
    SELECT
        f.* REPLACE (
            coalesce(f.ListCost, CAST(f.ListUnitPrice * f.PricingQuantity AS DECIMAL(38, 10))) AS ListCost,
            -- FOCUS: ContractedCost defaults to ListCost where no negotiated price applies
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
            CASE
                WHEN f.PricingCategory IS NOT NULL OR NOT f.needs_unit_prices THEN f.PricingCategory
                WHEN f.CommitmentDiscountId IS NOT NULL THEN 'Committed'
                ELSE 'Standard'
            END AS PricingCategory,
            CASE WHEN f.needs_unit_prices THEN coalesce(f.SkuPriceId, f.SkuId) ELSE f.SkuPriceId END AS SkuPriceId,
            CASE WHEN f.RegionId IS NOT NULL THEN coalesce(f.RegionName, f.RegionId) END AS RegionName,
            coalesce(pu.focus_unit, pa.focus_unit, f.PricingUnit) AS PricingUnit,
            CASE WHEN f.consumes THEN coalesce(cu.focus_unit, ca.focus_unit, f.ConsumedUnit) END AS ConsumedUnit,
            coalesce(f.BillingAccountName, f.BillingAccountId) AS BillingAccountName,
            CASE WHEN f.SubAccountId IS NOT NULL THEN coalesce(f.SubAccountName, f.SubAccountId) END AS SubAccountName,
            CASE WHEN f.consumes THEN f.ConsumedQuantity END AS ConsumedQuantity,
            list_concat(f.src_changes, [
                CASE WHEN f.ListCost IS NULL THEN 'MissingListCost' END,
                CASE WHEN f.ContractedCost IS NULL THEN 'MissingContractedCost' END,
                CASE
                    WHEN f.ContractedUnitPrice IS NULL AND f.needs_unit_prices THEN 'MissingContractedUnitPrice'
                END,
                CASE WHEN f.PricingCategory IS NULL AND f.needs_unit_prices THEN 'MissingPricingCategory' END,
                CASE
                    WHEN f.SkuPriceId IS NULL AND f.SkuId IS NOT NULL AND f.needs_unit_prices THEN 'MissingSkuPriceId'
                END,
                CASE WHEN f.RegionName IS NULL AND f.RegionId IS NOT NULL THEN 'MissingRegionName' END,
                CASE
                    WHEN coalesce(pu.focus_unit, pa.focus_unit) IS NULL AND NOT follows_unit_format(f.PricingUnit)
                        THEN 'UnmappedUnit'
                END,
                CASE
                    WHEN coalesce(cu.focus_unit, ca.focus_unit) IS NULL AND NOT follows_unit_format(f.ConsumedUnit)
                        THEN 'UnmappedUnit'
                END,
                CASE WHEN f.BillingAccountName IS NULL THEN 'MissingBillingAccountName' END,
                CASE WHEN f.SubAccountName IS NULL AND f.SubAccountId IS NOT NULL THEN 'MissingSubAccountName' END,
                CASE WHEN NOT f.consumes AND f.ConsumedQuantity IS NOT NULL THEN 'ConsumedQuantityOutsideUsage' END
            ]) AS src_changes,
            merge_source_values(f.src_values, [
                {
                    'key': 'ConsumedQuantity',
                    'value': CASE WHEN NOT f.consumes THEN CAST(f.ConsumedQuantity AS VARCHAR) END
                },
                {'key': 'ConsumedUnit', 'value': CASE WHEN NOT f.consumes THEN f.ConsumedUnit END}
            ]) AS src_values
        )
    FROM (
        SELECT
            *,
            -- FOCUS requires unit prices on usage and purchases that are no corrections
            ChargeCategory IN ('Usage', 'Purchase') AND ChargeClass IS NULL AS needs_unit_prices,
            -- and a consumed quantity only on usage that is no unused commitment
            ChargeCategory = 'Usage' AND CommitmentDiscountStatus IS DISTINCT FROM 'Unused' AS consumes
        FROM named
    ) AS f
    LEFT JOIN units AS pu ON pu.source_unit = f.PricingUnit AND pu.provider = f.ProviderName
    LEFT JOIN units AS pa ON pa.source_unit = f.PricingUnit AND pa.provider = '*'
    LEFT JOIN units AS cu ON cu.source_unit = f.ConsumedUnit AND cu.provider = f.ProviderName
    LEFT JOIN units AS ca ON ca.source_unit = f.ConsumedUnit AND ca.provider = '*'
),

-- a unit price that contradicts its cost (AWS's own FOCUS data: free-tier usage costs 0 at a non-zero rate)
-- follows the cost (the check sql/gates/checks/focus_unit_price_products.sql applies the same macro)
repaired AS (
    SELECT
        * EXCLUDE (list_off, contracted_off) REPLACE (
            CASE WHEN list_off THEN CAST(ListCost / PricingQuantity AS DECIMAL(38, 10)) ELSE ListUnitPrice END
                AS ListUnitPrice,
            CASE
                WHEN contracted_off THEN CAST(ContractedCost / PricingQuantity AS DECIMAL(38, 10))
                ELSE ContractedUnitPrice
            END AS ContractedUnitPrice,
            list_concat(src_changes, [
                CASE WHEN list_off THEN 'InconsistentListUnitPrice' END,
                CASE WHEN contracted_off THEN 'InconsistentContractedUnitPrice' END
            ]) AS src_changes,
            merge_source_values(src_values, [
                {'key': 'ListUnitPrice', 'value': CASE WHEN list_off THEN CAST(ListUnitPrice AS VARCHAR) END},
                {
                    'key': 'ContractedUnitPrice',
                    'value': CASE WHEN contracted_off THEN CAST(ContractedUnitPrice AS VARCHAR) END
                }
            ]) AS src_values
        )
    FROM (
        SELECT
            *,
            coalesce(
                needs_unit_prices AND PricingQuantity <> 0
                AND price_contradicts_cost(ListUnitPrice, PricingQuantity, ListCost),
                false
            ) AS list_off,
            coalesce(
                needs_unit_prices AND PricingQuantity <> 0
                AND price_contradicts_cost(ContractedUnitPrice, PricingQuantity, ContractedCost),
                false
            ) AS contracted_off
        FROM priced
    )
),

-- unit prices are never negative (FOCUS); where a row needs none (a credit's), a negative one is dropped
unsigned_prices AS (
    SELECT
        * REPLACE (
            CASE WHEN ListUnitPrice < 0 AND NOT needs_unit_prices THEN NULL ELSE ListUnitPrice END AS ListUnitPrice,
            CASE
                WHEN ContractedUnitPrice < 0 AND NOT needs_unit_prices THEN NULL ELSE ContractedUnitPrice
            END AS ContractedUnitPrice,
            list_append(src_changes, CASE
                WHEN (ListUnitPrice < 0 OR ContractedUnitPrice < 0) AND NOT needs_unit_prices THEN 'NegativeUnitPrice'
            END) AS src_changes,
            merge_source_values(src_values, [
                {'key': 'ListUnitPrice', 'value': CASE
                    WHEN ListUnitPrice < 0 AND NOT needs_unit_prices THEN CAST(ListUnitPrice AS VARCHAR)
                END},
                {'key': 'ContractedUnitPrice', 'value': CASE
                    WHEN ContractedUnitPrice < 0 AND NOT needs_unit_prices THEN CAST(ContractedUnitPrice AS VARCHAR)
                END}
            ]) AS src_values
        )
    FROM repaired
),

-- ChargeFrequency is only Recommended: sources may leave it out
with_frequency AS (
    SELECT
        * REPLACE (
            coalesce(
                ChargeFrequency, CASE WHEN ChargeCategory = 'Usage' THEN 'Usage-Based' ELSE 'One-Time' END
            ) AS ChargeFrequency
        )
    FROM unsigned_prices
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
            -- a 1.0 export names no meter: the provider's usage type, else what the charge says it is
            coalesce(f.SkuMeter, CASE WHEN f.SkuId IS NOT NULL THEN coalesce(f.x_UsageType, f.ChargeDescription) END)
                AS SkuMeter,
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

-- a resource has a type, and only a resource: a 1.0 export without one gets its subcategory ("Block Storage")
typed_resources AS (
    SELECT
        * REPLACE (
            CASE WHEN ResourceId IS NOT NULL THEN coalesce(ResourceType, ServiceSubcategory) END AS ResourceType,
            list_concat(src_changes, [
                CASE WHEN ResourceType IS NULL AND ResourceId IS NOT NULL THEN 'MissingResourceType' END,
                CASE WHEN ResourceType IS NOT NULL AND ResourceId IS NULL THEN 'ResourceTypeWithoutResource' END
            ]) AS src_changes,
            merge_source_values(src_values, [
                {'key': 'ResourceType', 'value': CASE WHEN ResourceId IS NULL THEN ResourceType END}
            ]) AS src_values
        )
    FROM upgraded_1_1
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
    FROM typed_resources
),

-- FOCUS: a Credit's EffectiveCost is its BilledCost. A source's Credit whose amounts differ keeps its billed
-- amount, and the difference becomes a derived Adjustment row (BilledCost 0) beside it: both totals stay
-- exactly the source's
credit_split AS (
    SELECT *, ChargeCategory = 'Credit' AND EffectiveCost <> BilledCost AS split_credit FROM upgraded_1_2
),

focus_rows AS (
    SELECT
        * EXCLUDE (split_credit) REPLACE (
            CASE WHEN split_credit THEN BilledCost ELSE EffectiveCost END AS EffectiveCost,
            CASE
                WHEN split_credit AND PricingCurrency = BillingCurrency THEN BilledCost
                ELSE PricingCurrencyEffectiveCost
            END AS PricingCurrencyEffectiveCost,
            list_append(src_changes, CASE WHEN split_credit THEN 'CreditEffectiveCostSplit' END) AS src_changes,
            merge_source_values(src_values, [
                {'key': 'EffectiveCost', 'value': CASE WHEN split_credit THEN CAST(EffectiveCost AS VARCHAR) END}
            ]) AS src_values
        )
    FROM credit_split
    UNION ALL BY NAME
    SELECT
        * EXCLUDE (split_credit) REPLACE (
            'Adjustment' AS ChargeCategory,
            CAST(0 AS DECIMAL(38, 10)) AS BilledCost,
            EffectiveCost - BilledCost AS EffectiveCost,
            CAST(0 AS DECIMAL(38, 10)) AS ListCost,
            CAST(0 AS DECIMAL(38, 10)) AS ContractedCost,
            CASE
                WHEN PricingCurrency = BillingCurrency THEN EffectiveCost - BilledCost
                ELSE CAST(0 AS DECIMAL(38, 10))
            END AS PricingCurrencyEffectiveCost,
            'EffectiveCost of a credit beyond its BilledCost: ' || coalesce(ChargeDescription, '-') AS ChargeDescription,
            src_line_item_id || '/effective' AS src_line_item_id,
            list_append(src_changes, 'CreditEffectiveCostSplit') AS src_changes
        )
    FROM credit_split
    WHERE split_credit
)

SELECT
    * EXCLUDE (
        src_first_party_provider, src_first_party_publisher, src_first_party_issuer, src_billing_account_type,
        src_sub_account_type, src_pricing_to_billing_rate, src_file, src_line_item_id, src_changes, src_values,
        needs_unit_prices, consumes
    ) REPLACE (source_tags(Tags) AS Tags),
    source_changes(list_append(src_changes, CASE WHEN takes_own_tag_key(Tags) THEN 'ReservedTagKey' END))
        AS x_SourceChanges,
    src_values AS x_SourceValues,
    $source_format || '-' || x_SourceVersion AS x_SourceFormat,
    $delivery_id AS x_DeliveryId,
    src_file AS x_SourceFile,
    src_line_item_id AS x_SourceLineItemId,
    CAST(NULL AS VARCHAR) AS x_SourceLineItemType,
    CAST($ingested_at AS TIMESTAMPTZ) AS x_IngestedAt
FROM focus_rows
