-- Azure Cost Management cost details (EA, MCA; actual, amortized, or both) and 2019-10-01 usage details
-- -> FOCUS 1.2 rows.
-- Input: temp view azure_cost_src (gpuledger/normalize/azure_cost_details.py): canonical typed columns,
--   dataset ('actual' | 'amortized'), combined (both datasets in one delivery), row_hash, source_file;
--   ref.azure_* tables (models/azure.py).
-- Parameters: $delivery_id, $source_format, $ingested_at, $provider_name.
-- Microsoft's FOCUS rule (finops-toolkit convert.md, docs/decisions/0006): a combined delivery keeps every
-- amortized row plus the commitment purchases and refunds only the actual dataset has. Each row gets
-- x_AmortizationClass 'Principal' (commitment purchase/refund: EffectiveCost 0) or 'Amortized Charge'
-- (commitment-covered or unused commitment: BilledCost 0); every other row bills and costs its own amount.

WITH line_items AS (
    SELECT * FROM azure_cost_src
),

services AS (
    SELECT service_name, service_category, service_subcategory FROM ref.azure_services
),

consumed_services AS (
    SELECT consumed_service, service_name FROM ref.azure_consumed_services
),

units AS (
    SELECT source_unit AS unit_of_measure, focus_unit, block_size FROM ref.units WHERE provider = $provider_name
),

regions AS (
    SELECT location_key, region_id, region_name FROM ref.azure_regions
),

resource_types AS (
    SELECT arm_type, display_name FROM ref.azure_resource_types
),

-- Azure rows have no id: file name and content hashed, numbered among identical rows of the file: unique ids
identified AS (
    SELECT
        * EXCLUDE (row_hash),
        dataset || ':' || printf('%016x', row_hash)
        || CASE WHEN occurrence > 1 THEN '#' || occurrence ELSE '' END AS line_item_id
    FROM (SELECT *, row_number() OVER (PARTITION BY dataset, row_hash) AS occurrence FROM line_items)
),

-- combined deliveries: the amortized dataset, plus what only the actual dataset has
kept AS (
    SELECT *
    FROM identified
    WHERE NOT combined
        OR dataset = 'amortized'
        OR (charge_type IN ('Purchase', 'Refund') AND pricing_model IN ('Reservation', 'SavingsPlan'))
),

classified AS (
    SELECT
        *,
        CASE
            WHEN pricing_model IS NULL OR pricing_model IN ('OnDemand', 'Reservation', 'SavingsPlan', 'Spot')
                THEN pricing_model
            ELSE error('unknown PricingModel ' || pricing_model)
        END AS checked_pricing_model,
        CASE charge_type
            WHEN 'Usage' THEN 'Usage'
            WHEN 'UnusedReservation' THEN 'Usage'
            WHEN 'UnusedSavingsPlan' THEN 'Usage'
            WHEN 'Purchase' THEN 'Purchase'
            -- Microsoft maps every refund to a corrected purchase
            WHEN 'Refund' THEN 'Purchase'
            WHEN 'Tax' THEN 'Tax'
            WHEN 'Credit' THEN 'Credit'
            WHEN 'RoundingAdjustment' THEN 'Adjustment'
            ELSE error('unknown ChargeType ' || coalesce(charge_type, 'NULL'))
        END AS charge_category,
        CASE WHEN charge_type = 'Refund' THEN 'Correction' END AS charge_class,
        charge_type IN ('UnusedReservation', 'UnusedSavingsPlan') AS is_unused,
        CASE
            WHEN pricing_model IN ('Reservation', 'SavingsPlan') AND charge_type IN ('Purchase', 'Refund')
                THEN 'Principal'
            WHEN pricing_model IN ('Reservation', 'SavingsPlan')
                AND charge_type IN ('Usage', 'UnusedReservation', 'UnusedSavingsPlan')
                THEN 'Amortized Charge'
        END AS amortization_class
    FROM kept
),

costed AS (
    SELECT
        *,
        CASE WHEN amortization_class = 'Amortized Charge' THEN 0 ELSE cost END AS billed_cost,
        CASE WHEN amortization_class = 'Principal' THEN 0 ELSE cost END AS effective_cost,
        CASE
            WHEN amortization_class = 'Principal' THEN 0 ELSE cost_in_pricing_currency
        END AS effective_cost_in_pricing_currency,
        charge_category IN ('Usage', 'Purchase') AS has_unit_pricing,
        CASE
            WHEN checked_pricing_model IN ('Reservation', 'SavingsPlan') AND charge_category IN ('Usage', 'Purchase')
                THEN lower(coalesce(benefit_id, reservation_id))
        END AS commitment_id,
        CASE checked_pricing_model WHEN 'Reservation' THEN 'Usage' WHEN 'SavingsPlan' THEN 'Spend' END
            AS commitment_category,
        CASE checked_pricing_model WHEN 'Reservation' THEN 'Reservation' WHEN 'SavingsPlan' THEN 'Savings Plan' END
            AS commitment_type
    FROM classified
),

-- a commitment purchase states its term: from the purchase's date for Term months ("12", "P1Y", "P3Y")
terms AS (
    SELECT
        *,
        CASE
            WHEN regexp_matches(term, '^[0-9]+$') THEN TRY_CAST(term AS INTEGER)
            WHEN regexp_matches(term, '^P[0-9]+Y$') THEN TRY_CAST(regexp_extract(term, '[0-9]+') AS INTEGER) * 12
            WHEN regexp_matches(term, '^P[0-9]+M$') THEN TRY_CAST(regexp_extract(term, '[0-9]+') AS INTEGER)
        END AS term_months,
        charge_category = 'Purchase' AND commitment_id IS NOT NULL AND term IS NOT NULL AS states_term
    FROM costed
),

-- prices are per pricing block and in the pricing currency (MCA); FOCUS prices are in the billing currency
priced AS (
    SELECT
        c.*,
        -- units missing from ref.units: a leading count is the block ("1/Year" -> Units/Year per 1)
        coalesce(
            u.focus_unit,
            CASE
                WHEN c.unit_text IS NULL OR regexp_full_match(c.unit_text, '[0-9]+') THEN 'Units'
                WHEN regexp_matches(c.unit_text, '^[0-9]* ?/') THEN 'Units/' || trim(split_part(c.unit_text, '/', 2))
                ELSE regexp_replace(c.unit_text, '^[0-9]+ +', '')
            END
        ) AS focus_unit,
        coalesce(u.block_size, nullif(regexp_extract(c.unit_text, '^[0-9]+'), ''), '1') AS block_size,
        u.focus_unit IS NOT NULL AS unit_mapped,
        coalesce(
            c.unit_price,
            c.effective_price,
            CAST(c.cost / nullif(c.quantity, 0) AS DECIMAL(38, 10))
        ) AS contracted_price_pc,
        c.payg_price AS list_price_pc
    FROM (SELECT *, nullif(trim(unit_of_measure), '') AS unit_text FROM terms) AS c
    LEFT JOIN units AS u ON u.unit_of_measure = c.unit_text
),

billing_prices AS (
    SELECT
        *,
        CASE WHEN has_unit_pricing THEN quantity END AS pricing_quantity,
        CASE WHEN block_size = '1' THEN focus_unit ELSE block_size || ' ' || focus_unit END AS pricing_unit,
        CASE
            WHEN exchange_rate IS NULL THEN contracted_price_pc
            ELSE CAST(contracted_price_pc * exchange_rate AS DECIMAL(38, 10))
        END AS contracted_unit_price,
        CASE
            WHEN exchange_rate IS NULL THEN coalesce(list_price_pc, contracted_price_pc)
            ELSE CAST(coalesce(list_price_pc, contracted_price_pc) * exchange_rate AS DECIMAL(38, 10))
        END AS list_unit_price
    FROM priced
),

list_and_contracted AS (
    SELECT
        *,
        -- a refund corrects what was billed: its list and contracted cost are what it refunds
        CASE
            WHEN charge_class IS NULL AND has_unit_pricing AND contracted_unit_price IS NOT NULL
                AND pricing_quantity IS NOT NULL
                THEN CAST(contracted_unit_price * pricing_quantity AS DECIMAL(38, 10))
            ELSE cost
        END AS contracted_cost
    FROM billing_prices
),

costs_complete AS (
    SELECT
        *,
        CASE
            WHEN charge_class IS NULL AND has_unit_pricing AND list_price_pc IS NOT NULL AND pricing_quantity IS NOT NULL
                THEN CAST(list_unit_price * pricing_quantity AS DECIMAL(38, 10))
            ELSE contracted_cost
        END AS list_cost,
        CASE
            WHEN NOT has_unit_pricing THEN NULL
            WHEN is_unused OR (checked_pricing_model IN ('Reservation', 'SavingsPlan') AND charge_category = 'Usage')
                THEN 'Committed'
            WHEN checked_pricing_model = 'Spot' OR meter_name LIKE '% Spot' OR meter_name LIKE '% Low Priority'
                THEN 'Dynamic'
            ELSE 'Standard'
        END AS pricing_category,
        CASE frequency
            WHEN 'OneTime' THEN 'One-Time'
            WHEN 'Recurring' THEN 'Recurring'
            WHEN 'UsageBased' THEN 'Usage-Based'
            ELSE CASE charge_category WHEN 'Usage' THEN 'Usage-Based' WHEN 'Tax' THEN 'Recurring' ELSE 'One-Time' END
        END AS charge_frequency,
        CASE
            WHEN commitment_id IS NULL OR charge_category <> 'Usage' THEN NULL
            WHEN is_unused THEN 'Unused'
            ELSE 'Used'
        END AS commitment_status,
        CASE
            WHEN commitment_id IS NULL OR charge_class IS NOT NULL THEN NULL
            WHEN commitment_category = 'Spend' AND charge_category = 'Purchase' THEN cost
            WHEN commitment_category = 'Spend' THEN effective_cost
            ELSE quantity
        END AS commitment_quantity
    FROM list_and_contracted
),

-- ARM ids vary in case across rows and datasets: one lower-case spelling joins them
resources AS (
    SELECT
        *,
        lower(resource_id) AS resource_key,
        nullif(regexp_extract(resource_id, '[^/]+$'), '') AS resource_id_leaf,
        string_split(nullif(regexp_extract(lower(resource_id), '.*/providers/(.+)$', 1), ''), '/') AS arm_parts,
        lower(replace(resource_location, ' ', '')) AS location_key,
        coalesce(
            CASE WHEN vm_size LIKE 'Standard\_%' ESCAPE '\' THEN vm_size END,
            CASE
                WHEN meter_category = 'Virtual Machines' AND meter_name NOT LIKE '%/%'
                    THEN 'Standard_' || replace(regexp_replace(meter_name, ' (Spot|Low Priority)$', ''), ' ', '_')
            END
        ) AS instance_type,
        coalesce(
            CASE WHEN meter_category <> 'Unassigned' THEN meter_category END,
            CASE WHEN publisher_type = 'Marketplace' THEN 'Azure Marketplace' END
        ) AS meter_service_name
    FROM costs_complete
),

named AS (
    SELECT
        r.*,
        r.arm_parts[1] || '/' || array_to_string(list_slice(r.arm_parts, 2, len(r.arm_parts), 2), '/') AS arm_type,
        coalesce(r.meter_service_name, cs.service_name, r.consumed_service, 'Azure') AS service_name,
        coalesce(
            r.product_id,
            r.meter_id,
            r.part_number,
            coalesce(r.consumed_service, 'Azure') || ':' || coalesce(r.product_name, r.charge_type)
        ) AS sku_id
    FROM resources AS r
    LEFT JOIN consumed_services AS cs ON cs.consumed_service = lower(r.consumed_service)
),

focus_rows AS (
    SELECT
        CAST(NULL AS VARCHAR) AS AvailabilityZone,
        r.billed_cost AS BilledCost,
        r.billing_account_id AS BillingAccountId,
        coalesce(r.billing_account_name, r.billing_account_id) AS BillingAccountName,
        r.billing_account_type AS BillingAccountType,
        r.billing_currency AS BillingCurrency,
        CAST(r.billing_period_end + 1 AS TIMESTAMP) AT TIME ZONE 'UTC' AS BillingPeriodEnd,
        CAST(r.billing_period_start AS TIMESTAMP) AT TIME ZONE 'UTC' AS BillingPeriodStart,
        CAST(NULL AS VARCHAR) AS CapacityReservationId,
        CAST(NULL AS VARCHAR) AS CapacityReservationStatus,
        r.charge_category AS ChargeCategory,
        r.charge_class AS ChargeClass,
        coalesce(r.product_name, r.meter_name, r.charge_type) AS ChargeDescription,
        r.charge_frequency AS ChargeFrequency,
        CAST(r.usage_date + 1 AS TIMESTAMP) AT TIME ZONE 'UTC' AS ChargePeriodEnd,
        CAST(r.usage_date AS TIMESTAMP) AT TIME ZONE 'UTC' AS ChargePeriodStart,
        CASE WHEN r.commitment_id IS NOT NULL THEN r.commitment_category END AS CommitmentDiscountCategory,
        r.commitment_id AS CommitmentDiscountId,
        CASE
            WHEN r.commitment_id IS NOT NULL THEN coalesce(r.benefit_name, r.reservation_name)
        END AS CommitmentDiscountName,
        r.commitment_quantity AS CommitmentDiscountQuantity,
        r.commitment_status AS CommitmentDiscountStatus,
        CASE WHEN r.commitment_id IS NOT NULL THEN r.commitment_type END AS CommitmentDiscountType,
        CASE
            WHEN r.commitment_quantity IS NULL THEN NULL
            WHEN r.commitment_category = 'Spend' THEN r.billing_currency
            ELSE r.pricing_unit
        END AS CommitmentDiscountUnit,
        CASE
            WHEN r.charge_category = 'Usage' AND r.commitment_status IS DISTINCT FROM 'Unused'
                THEN CAST(r.quantity * CAST(r.block_size AS DECIMAL(38, 0)) AS DECIMAL(38, 10))
        END AS ConsumedQuantity,
        CASE
            WHEN r.charge_category = 'Usage' AND r.commitment_status IS DISTINCT FROM 'Unused'
                AND r.quantity IS NOT NULL THEN r.focus_unit
        END AS ConsumedUnit,
        r.contracted_cost AS ContractedCost,
        CASE WHEN r.has_unit_pricing THEN r.contracted_unit_price END AS ContractedUnitPrice,
        r.effective_cost AS EffectiveCost,
        r.invoice_id AS InvoiceId,
        coalesce(r.reseller_name, $provider_name) AS InvoiceIssuerName,
        r.list_cost AS ListCost,
        CASE WHEN r.has_unit_pricing THEN r.list_unit_price END AS ListUnitPrice,
        r.pricing_category AS PricingCategory,
        coalesce(r.pricing_currency, r.billing_currency) AS PricingCurrency,
        CASE WHEN r.has_unit_pricing THEN r.contracted_price_pc END AS PricingCurrencyContractedUnitPrice,
        CASE
            WHEN coalesce(r.pricing_currency, r.billing_currency) = r.billing_currency THEN r.effective_cost
            ELSE r.effective_cost_in_pricing_currency
        END AS PricingCurrencyEffectiveCost,
        CASE WHEN r.has_unit_pricing THEN coalesce(r.list_price_pc, r.contracted_price_pc) END
            AS PricingCurrencyListUnitPrice,
        r.pricing_quantity AS PricingQuantity,
        CASE WHEN r.pricing_quantity IS NOT NULL THEN r.pricing_unit END AS PricingUnit,
        $provider_name AS ProviderName,
        CASE
            WHEN r.publisher_type = 'Marketplace' THEN coalesce(r.publisher_name, 'Azure Marketplace')
            ELSE $provider_name
        END AS PublisherName,
        CASE WHEN r.location_key IS NOT NULL THEN coalesce(g.region_id, r.location_key) END AS RegionId,
        CASE WHEN r.location_key IS NOT NULL THEN coalesce(g.region_name, r.resource_location) END AS RegionName,
        CASE WHEN r.is_unused THEN r.commitment_id ELSE r.resource_key END AS ResourceId,
        CASE
            WHEN r.is_unused AND r.commitment_id IS NOT NULL
                THEN coalesce(r.benefit_name, r.reservation_name, r.commitment_id)
            WHEN r.is_unused THEN NULL
            WHEN r.resource_key IS NOT NULL THEN coalesce(r.resource_name, r.resource_id_leaf)
        END AS ResourceName,
        CASE
            WHEN r.is_unused THEN CASE WHEN r.commitment_id IS NOT NULL THEN r.commitment_type END
            WHEN r.resource_key IS NULL THEN NULL
            ELSE coalesce(t.display_name, r.arm_type, lower(r.resource_type), 'Resource')
        END AS ResourceType,
        coalesce(s.service_category, 'Other') AS ServiceCategory,
        r.service_name AS ServiceName,
        coalesce(s.service_subcategory, 'Other (Other)') AS ServiceSubcategory,
        CASE WHEN r.has_unit_pricing THEN r.sku_id END AS SkuId,
        CASE WHEN r.has_unit_pricing THEN coalesce(r.meter_name, r.product_name, r.sku_id) END AS SkuMeter,
        CASE
            WHEN r.has_unit_pricing AND r.instance_type IS NOT NULL
                THEN json_object('InstanceType', r.instance_type)::VARCHAR
        END AS SkuPriceDetails,
        CASE WHEN r.has_unit_pricing THEN coalesce(r.meter_id, r.sku_id) END AS SkuPriceId,
        r.subscription_id AS SubAccountId,
        CASE WHEN r.subscription_id IS NOT NULL THEN coalesce(r.subscription_name, r.subscription_id) END
            AS SubAccountName,
        CASE WHEN r.subscription_id IS NOT NULL THEN 'Subscription' END AS SubAccountType,
        source_tags(r.tags) AS Tags,
        $source_format AS x_SourceFormat,
        $delivery_id AS x_DeliveryId,
        r.source_file AS x_SourceFile,
        r.line_item_id AS x_SourceLineItemId,
        r.charge_type AS x_SourceLineItemType,
        CAST($ingested_at AS TIMESTAMPTZ) AS x_IngestedAt,
        r.consumed_service AS x_ServiceCode,
        coalesce(r.meter_name, r.meter_subcategory) AS x_UsageType,
        CAST(NULL AS VARCHAR) AS x_Operation,
        r.instance_type AS x_InstanceType,
        CAST(NULL AS VARCHAR) AS x_CostCategories,
        r.amortization_class AS x_AmortizationClass,
        r.source_version AS x_SourceVersion,
        r.unit_text AS x_PricingUnitDescription,
        source_changes(list_concat(
            r.src_changes,
            [
                CASE
                    WHEN NOT r.unit_mapped AND r.unit_text IS NOT NULL AND NOT follows_unit_format(r.pricing_unit)
                        THEN 'UnmappedUnit'
                END,
                CASE WHEN r.states_term AND r.term_months IS NULL THEN 'InvalidCommitmentTerm' END,
                CASE WHEN takes_own_tag_key(r.tags) THEN 'ReservedTagKey' END,
                -- a charge for less than nothing: FOCUS has no rule to repair it, the source's figures stay
                CASE WHEN r.quantity < 0 AND r.cost > 0 THEN 'NegativeQuantity' END
            ]
        )) AS x_SourceChanges,
        CASE
            WHEN r.states_term AND r.term_months IS NULL
                THEN CAST(json_merge_patch(coalesce(r.src_values, '{}'), json_object('Term', r.term)) AS VARCHAR)
            ELSE r.src_values
        END AS x_SourceValues,
        CASE WHEN r.states_term AND r.term_months IS NOT NULL THEN timezone('UTC', CAST(r.usage_date AS TIMESTAMP)) END
            AS x_CommitmentTermStart,
        CASE
            WHEN r.states_term AND r.term_months IS NOT NULL
                THEN timezone('UTC', CAST(r.usage_date AS TIMESTAMP) + to_months(r.term_months))
        END AS x_CommitmentTermEnd
    FROM named AS r
    LEFT JOIN services AS s ON s.service_name = r.service_name
    LEFT JOIN regions AS g ON g.location_key = r.location_key
    LEFT JOIN resource_types AS t ON t.arm_type = r.arm_type
)

SELECT * FROM focus_rows
