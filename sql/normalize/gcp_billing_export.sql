-- GCP Cloud Billing export to BigQuery (standard gcp_billing_export_v1_* and detailed
-- gcp_billing_export_resource_v1_* tables) -> FOCUS 1.2 rows.
-- Input: temp view gcp_bq_src (typed, validated records of gpuledger/normalize/gcp_billing.py); ref.gcp_* tables;
-- temp table gcp_sku_prices (Catalog list prices landed by connectors/gcp/billing.py, often empty).
-- Parameters: $delivery_id, $source_format, $ingested_at, $provider_name.
--
-- Money (docs/decisions/0007). `cost` is before credits. Credits of the price-reducing types (committed and
-- sustained use, DISCOUNT, FREE_TIER, SUBSCRIPTION_BENEFIT, RESELLER_MARGIN, FEE_UTILIZATION_OFFSET) reduce
-- the row they sit on: BilledCost = EffectiveCost = cost + those credits, never clamped at 0. PROMOTION
-- credits (money that pays for a charge, not a price) become their own ChargeCategory 'Credit' rows with
-- BilledCost = EffectiveCost = amount. Hence per billing account, invoice month and currency
-- sum(BilledCost) = sum(EffectiveCost) = sum(cost) + sum(credits.amount) = the invoice.
-- Committed use discounts are billed as they accrue: the hourly commitment fee is a Usage row of its
-- 'Commitment ...' SKU (nothing prepaid, so no Purchase to amortize), and EffectiveCost reflects the
-- discount through the on-row CUD credit; no fee is moved between rows.
--
-- Periods. BillingPeriod = invoice.month in US/Pacific, stored in UTC (2026-11 -> [11-01T07:00Z, 12-01T08:00Z)).
-- A row whose usage starts before its invoice month (an adjustment for an earlier month, or usage reported
-- late) corrects a previously invoiced period: ChargeClass 'Correction'.
--
-- List prices. ListCost = cost_at_list. Where the export lacks it, a usage row whose SKU has a Catalog list rate
-- in the row's currency and pricing unit gets ListUnitPrice = that rate and ListCost = usage.amount_in_pricing_units
-- x rate; otherwise ListCost = cost. List prices never touch BilledCost, EffectiveCost or ContractedCost.

WITH export_rows AS (
    SELECT * FROM gcp_bq_src
),

services AS (
    SELECT service_name, service_category, service_subcategory FROM ref.gcp_services
),

units AS (
    SELECT source_unit AS gcp_unit, focus_unit FROM ref.units WHERE provider = $provider_name
),

regions AS (
    SELECT region_id, region_name FROM ref.gcp_regions
),

credit_policy AS (
    SELECT
        coalesce(list(credit_type) FILTER (WHERE treatment = 'on_row'), []) AS on_row_types,
        coalesce(list(credit_type) FILTER (WHERE treatment = 'credit_row'), []) AS credit_row_types,
        coalesce(list(credit_type) FILTER (WHERE committed = 'true'), []) AS committed_types
    FROM ref.gcp_credit_types
),

-- invoice months are US/Pacific months; TIMESTAMPTZ keeps them as UTC instants
periods AS (
    SELECT
        *,
        timezone('America/Los_Angeles', strptime(invoice_month, '%Y%m')) AS billing_period_start,
        timezone('America/Los_Angeles', strptime(invoice_month, '%Y%m') + INTERVAL 1 MONTH) AS billing_period_end
    FROM export_rows
),

credited AS (
    SELECT
        p.*,
        coalesce(
            list_sum(list_transform(list_filter(p.credits, c -> list_contains(cp.on_row_types, c.type)), c -> c.amount)),
            0
        ) AS on_row_credits,
        list_filter(p.credits, c -> list_contains(cp.credit_row_types, c.type)) AS credit_row_credits,
        len(list_filter(p.credits, c -> list_contains(cp.committed_types, c.type))) > 0 AS is_committed
    FROM periods AS p
    CROSS JOIN credit_policy AS cp
),

sku_list_rates AS (
    SELECT sku_id, currency, usage_unit_description, unit_price
    FROM gcp_sku_prices
    -- tier choice: the first tier, if it starts at 0 and is the only tier or not free (volume tiers only discount)
    WHERE tier_start_amount = 0 AND (tier_count = 1 OR unit_price > 0)
),

catalog_priced AS (
    SELECT
        c.*,
        CASE
            WHEN c.cost_at_list IS NULL AND c.cost_type = 'regular' AND c.usage_amount_in_pricing_units <> 0
                THEN r.unit_price
        END AS catalog_unit_price
    FROM credited AS c
    LEFT JOIN sku_list_rates AS r
        ON r.sku_id = c.sku_id
        AND r.currency = c.currency
        AND lower(r.usage_unit_description) = lower(c.usage_pricing_unit)
),

classified AS (
    SELECT
        *,
        CASE cost_type
            WHEN 'regular' THEN 'Usage'
            WHEN 'tax' THEN 'Tax'
            WHEN 'adjustment' THEN 'Adjustment'
            WHEN 'rounding_error' THEN 'Adjustment'
            ELSE error('unknown cost_type ' || coalesce(cost_type, 'NULL'))
        END AS charge_category,
        -- hourly commitment fees ("Commitment v1: ...", "Commitment - dollar based v1: ...")
        coalesce(sku_description ILIKE 'Commitment%', false) AS is_commitment_fee,
        CASE WHEN usage_start_time < billing_period_start THEN 'Correction' END AS charge_class,
        cost + on_row_credits AS billed_cost,
        coalesce(
            cost_at_list, CAST(usage_amount_in_pricing_units * catalog_unit_price AS DECIMAL(38, 10)), cost
        ) AS list_cost,
        -- without a priced quantity (or a zero quantity that still costs money) the charge is one lump-sum unit
        usage_amount_in_pricing_units IS NULL OR usage_pricing_unit IS NULL
            OR (usage_amount_in_pricing_units = 0 AND (cost <> 0 OR coalesce(cost_at_list, cost) <> 0)) AS is_lump_sum
    FROM catalog_priced
),

priced AS (
    SELECT
        c.*,
        c.charge_category IN ('Usage', 'Purchase') AS has_unit_pricing,
        CASE WHEN c.is_lump_sum THEN 1 ELSE c.usage_amount_in_pricing_units END AS pricing_quantity,
        CASE WHEN c.is_lump_sum THEN 'Units' ELSE coalesce(u.focus_unit, c.usage_pricing_unit) END AS pricing_unit,
        NOT c.is_lump_sum AND u.focus_unit IS NULL AND NOT follows_unit_format(c.usage_pricing_unit) AS unit_unmapped
    FROM classified AS c
    LEFT JOIN units AS u ON u.gcp_unit = c.usage_pricing_unit
),

unit_priced AS (
    SELECT
        *,
        CASE
            WHEN catalog_unit_price IS NOT NULL THEN catalog_unit_price
            WHEN pricing_quantity = 0 THEN 0
            ELSE CAST(list_cost / pricing_quantity AS DECIMAL(38, 10))
        END AS list_unit_price,
        CASE
            WHEN pricing_quantity = 0 THEN 0
            ELSE CAST(cost / pricing_quantity AS DECIMAL(38, 10))
        END AS contracted_unit_price,
        CASE
            WHEN charge_category NOT IN ('Usage', 'Purchase') THEN NULL
            WHEN is_committed OR is_commitment_fee THEN 'Committed'
            WHEN sku_description ILIKE '%Spot%' OR sku_description ILIKE '%Preemptible%' THEN 'Dynamic'
            ELSE 'Standard'
        END AS pricing_category
    FROM priced
),

-- labels beat inherited project labels on the same key; resource-manager tags are namespaced
-- (<parent id>/<key>) and system labels carry their service prefix, so neither collides with labels
tag_entries AS (
    SELECT
        *,
        list_sort(list_concat(
            list_transform(labels, l -> {'k': l.key, 'p': 1, 'v': l.value}),
            list_transform(project_labels, l -> {'k': l.key, 'p': 2, 'v': l.value}),
            list_transform(tags, t -> {'k': coalesce(nullif(t.namespace, '') || '/', '') || t.key, 'p': 3, 'v': t.value}),
            list_transform(system_labels, l -> {'k': l.key, 'p': 4, 'v': l.value})
        )) AS sorted_tags
    FROM unit_priced
),

tagged AS (
    SELECT
        * EXCLUDE (sorted_tags),
        -- one value per key (the first by priority); a key without a value is true (FOCUS KeyValueFormat)
        nullif(
            '{' || array_to_string(
                list_transform(
                    list_filter(sorted_tags, (e, i) -> i = 1 OR sorted_tags[i - 1].k <> e.k),
                    e -> to_json(e.k) || ':' || coalesce(to_json(nullif(e.v, '')), 'true')
                ),
                ','
            ) || '}',
            '{}'
        ) AS tags_json,
        lower(coalesce(
            list_filter(system_labels, l -> l.key = 'compute.googleapis.com/machine_spec')[1].value,
            nullif(regexp_extract(
                lower(sku_description),
                '\b([a-z][0-9]+[a-z]?-(?:highgpu|megagpu|ultragpu|edgegpu|standard|highmem|highcpu|ultramem|megamem)-[0-9]+g?)\b',
                1
            ), '')
        )) AS instance_type
    FROM tag_entries
),

-- one FOCUS row per record, plus one Credit row per PROMOTION credit on it (one scan of tagged: two would have
-- DuckDB materialize it)
expanded AS (
    SELECT * EXCLUDE (entry), entry.row_kind AS row_kind, entry.credit AS credit
    FROM (
        SELECT
            *,
            unnest(list_prepend(
                {'row_kind': 'charge', 'credit': NULL},
                list_transform(credit_row_credits, c -> {'row_kind': 'credit', 'credit': c})
            )) AS entry
        FROM tagged
    )
),

focus_rows AS (
    SELECT
        e.location_zone AS AvailabilityZone,
        CASE WHEN e.row_kind = 'credit' THEN e.credit.amount ELSE e.billed_cost END AS BilledCost,
        e.billing_account_id AS BillingAccountId,
        -- the export carries no account display name
        e.billing_account_id AS BillingAccountName,
        'Billing Account' AS BillingAccountType,
        e.currency AS BillingCurrency,
        e.billing_period_end AS BillingPeriodEnd,
        e.billing_period_start AS BillingPeriodStart,
        CAST(NULL AS VARCHAR) AS CapacityReservationId,
        CAST(NULL AS VARCHAR) AS CapacityReservationStatus,
        CASE WHEN e.row_kind = 'credit' THEN 'Credit' ELSE e.charge_category END AS ChargeCategory,
        e.charge_class AS ChargeClass,
        CASE
            WHEN e.row_kind = 'credit' THEN coalesce(e.credit.full_name, e.credit.name, e.credit.type)
            WHEN e.charge_category = 'Adjustment'
                THEN coalesce(e.adjustment_info_description, e.sku_description, e.service_description)
            ELSE coalesce(e.sku_description, e.service_description)
        END AS ChargeDescription,
        CASE
            WHEN e.row_kind = 'credit' OR e.charge_category = 'Adjustment' THEN 'One-Time'
            WHEN e.charge_category = 'Tax' OR e.is_commitment_fee THEN 'Recurring'
            ELSE 'Usage-Based'
        END AS ChargeFrequency,
        e.usage_end_time AS ChargePeriodEnd,
        e.usage_start_time AS ChargePeriodStart,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountCategory,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountId,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountName,
        CAST(NULL AS DECIMAL(38, 10)) AS CommitmentDiscountQuantity,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountStatus,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountType,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountUnit,
        CASE WHEN e.row_kind = 'charge' AND e.charge_category = 'Usage' THEN e.usage_amount END AS ConsumedQuantity,
        CASE
            WHEN e.row_kind = 'charge' AND e.charge_category = 'Usage' AND e.usage_amount IS NOT NULL
                THEN coalesce(cu.focus_unit, e.usage_unit)
        END AS ConsumedUnit,
        CASE WHEN e.row_kind = 'credit' THEN e.credit.amount ELSE e.cost END AS ContractedCost,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.contracted_unit_price END AS ContractedUnitPrice,
        CASE WHEN e.row_kind = 'credit' THEN e.credit.amount ELSE e.billed_cost END AS EffectiveCost,
        CAST(NULL AS VARCHAR) AS InvoiceId,
        $provider_name AS InvoiceIssuerName,
        CASE WHEN e.row_kind = 'credit' THEN e.credit.amount ELSE e.list_cost END AS ListCost,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.list_unit_price END AS ListUnitPrice,
        CASE WHEN e.row_kind = 'charge' THEN e.pricing_category END AS PricingCategory,
        e.currency AS PricingCurrency,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.contracted_unit_price END
            AS PricingCurrencyContractedUnitPrice,
        CASE WHEN e.row_kind = 'credit' THEN e.credit.amount ELSE e.billed_cost END AS PricingCurrencyEffectiveCost,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.list_unit_price END
            AS PricingCurrencyListUnitPrice,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.pricing_quantity END AS PricingQuantity,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.pricing_unit END AS PricingUnit,
        $provider_name AS ProviderName,
        CASE
            WHEN coalesce(e.transaction_type, 'GOOGLE') = 'GOOGLE' THEN $provider_name
            ELSE coalesce(e.seller_name, $provider_name)
        END AS PublisherName,
        e.location_region AS RegionId,
        CASE WHEN e.location_region IS NOT NULL THEN coalesce(r.region_name, e.location_region) END AS RegionName,
        e.resource_global_name AS ResourceId,
        CASE WHEN e.resource_global_name IS NOT NULL THEN e.resource_name END AS ResourceName,
        -- //compute.googleapis.com/projects/p/zones/z/instances/123 -> compute.googleapis.com/instances
        CASE
            WHEN e.resource_global_name IS NOT NULL THEN coalesce(
                nullif(
                    regexp_replace(e.resource_global_name, '^//([^/]+)/(?:.*/)?([^/]+)/[^/]+$', '\1/\2'),
                    e.resource_global_name
                ),
                e.service_description
            )
        END AS ResourceType,
        coalesce(s.service_category, 'Other') AS ServiceCategory,
        e.service_description AS ServiceName,
        coalesce(s.service_subcategory, 'Other (Other)') AS ServiceSubcategory,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.sku_id END AS SkuId,
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.sku_description END AS SkuMeter,
        CASE
            WHEN e.row_kind = 'charge' AND e.has_unit_pricing AND e.sku_id IS NOT NULL AND e.instance_type IS NOT NULL
                THEN json_object('InstanceType', e.instance_type)::VARCHAR
        END AS SkuPriceDetails,
        -- a SKU has one price list entry per tier; the SKU id is the stable parent (FOCUS allows Id = SkuId)
        CASE WHEN e.row_kind = 'charge' AND e.has_unit_pricing THEN e.sku_id END AS SkuPriceId,
        e.project_id AS SubAccountId,
        CASE WHEN e.project_id IS NOT NULL THEN coalesce(e.project_name, e.project_id) END AS SubAccountName,
        CASE WHEN e.project_id IS NOT NULL THEN 'Project' END AS SubAccountType,
        source_tags(e.tags_json) AS Tags,
        $source_format AS x_SourceFormat,
        $delivery_id AS x_DeliveryId,
        e.source_file AS x_SourceFile,
        CASE
            WHEN e.row_kind = 'credit' THEN e.source_line_item_id || '/credit/' || e.credit.ordinal
            ELSE e.source_line_item_id
        END AS x_SourceLineItemId,
        CASE WHEN e.row_kind = 'credit' THEN e.credit.type ELSE e.cost_type END AS x_SourceLineItemType,
        CAST($ingested_at AS TIMESTAMPTZ) AS x_IngestedAt,
        e.service_id AS x_ServiceCode,
        e.sku_description AS x_UsageType,
        CAST(NULL AS VARCHAR) AS x_Operation,
        e.instance_type AS x_InstanceType,
        CAST(NULL AS VARCHAR) AS x_CostCategories,
        e.invoice_month AS x_InvoiceMonth,
        e.source_version AS x_SourceVersion,
        e.usage_pricing_unit AS x_PricingUnitDescription,
        source_changes([
            CASE WHEN e.unit_unmapped THEN 'UnmappedUnit' END,
            CASE WHEN takes_own_tag_key(e.tags_json) THEN 'ReservedTagKey' END,
            CASE WHEN e.invalid_tags THEN 'InvalidTags' END
        ]) AS x_SourceChanges,
        -- the committed use discount a fee pays for or a credit applied (detailed export only; FOCUS 1.2 columns stay
        -- empty, docs/decisions/0016); a committed credit without subscription.instance_id names none
        CASE
            WHEN e.row_kind = 'charge' AND (e.is_commitment_fee OR e.is_committed) THEN e.subscription_instance_id
        END AS x_CommitmentId
    FROM expanded AS e
    LEFT JOIN services AS s ON s.service_name = e.service_description
    LEFT JOIN units AS cu ON cu.gcp_unit = e.usage_unit
    LEFT JOIN regions AS r ON r.region_id = e.location_region
)

SELECT * FROM focus_rows
