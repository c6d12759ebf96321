-- AWS Cost and Usage Report (legacy CUR 1 and CUR 2.0 Data Exports) -> FOCUS 1.2 rows.
-- Input: temp view aws_cur_src with the canonical CUR columns of models/aws_cur.py, plus
--   tags_json / cost_categories_json (flat JSON objects with final keys), the reader's repairs (src_changes,
--   src_values) and source_file; ref.aws_* tables, ref.units; the macros of sql/normalize/macros.sql.
-- Parameters: $delivery_id, $source_format, $ingested_at.
-- Amortization follows the CID summary view; RIFee and SavingsPlanRecurringFee rows are split
-- into the Purchase (billed, EffectiveCost 0) and an Unused commitment row (EffectiveCost = unused)
-- so that FOCUS's "Purchase EffectiveCost = 0" holds while every cent is kept (docs/decisions/0004).

WITH line_items AS (
    SELECT * FROM aws_cur_src
),

services AS (
    SELECT product_code, service_category, service_subcategory FROM ref.aws_services
),

units AS (
    SELECT source_unit AS aws_unit, focus_unit FROM ref.units WHERE provider = $provider_name
),

regions AS (
    SELECT region_id, region_name FROM ref.aws_regions
),

-- one output row per line item, plus an Unused row for commitment fees with unused commitment
row_kinds AS (
    SELECT * FROM (VALUES ('charge'), ('unused')) AS k(row_kind)
),

commitment_terms AS (
    SELECT
        *,
        coalesce(savings_plan_savings_plan_a_r_n, reservation_reservation_a_r_n) AS commitment_arn,
        CASE
            WHEN savings_plan_savings_plan_a_r_n IS NOT NULL THEN 'Spend'
            WHEN reservation_reservation_a_r_n IS NOT NULL THEN 'Usage'
        END AS commitment_category,
        CASE
            WHEN savings_plan_savings_plan_a_r_n IS NOT NULL THEN 'Savings Plan'
            WHEN reservation_reservation_a_r_n IS NOT NULL THEN 'Reserved Instance'
        END AS commitment_type,
        -- the term of the commitment the row names (end exclusive), as the source states it
        CASE
            WHEN savings_plan_savings_plan_a_r_n IS NOT NULL THEN savings_plan_start_time
            WHEN reservation_reservation_a_r_n IS NOT NULL THEN reservation_start_time
        END AS commitment_term_start,
        CASE
            WHEN savings_plan_savings_plan_a_r_n IS NOT NULL THEN savings_plan_end_time
            WHEN reservation_reservation_a_r_n IS NOT NULL THEN reservation_end_time
        END AS commitment_term_end,
        CASE line_item_line_item_type
            WHEN 'RIFee' THEN coalesce(reservation_unused_amortized_upfront_fee_for_billing_period, 0)
                + coalesce(reservation_unused_recurring_fee, 0)
            WHEN 'SavingsPlanRecurringFee' THEN coalesce(savings_plan_total_commitment_to_date, 0)
                - coalesce(savings_plan_used_commitment, 0)
            ELSE 0
        END AS unused_commitment_cost
    FROM line_items
),

expanded AS (
    SELECT t.*, k.row_kind
    FROM commitment_terms AS t
    JOIN row_kinds AS k
        ON k.row_kind = 'charge' OR t.unused_commitment_cost <> 0
),

classified AS (
    SELECT
        *,
        CASE
            WHEN row_kind = 'unused' THEN 'Usage'
            WHEN line_item_line_item_type IN
                ('Usage', 'DiscountedUsage', 'SavingsPlanCoveredUsage', 'SavingsPlanNegation') THEN 'Usage'
            WHEN line_item_line_item_type IN
                ('SavingsPlanUpfrontFee', 'SavingsPlanRecurringFee', 'RIFee', 'Fee', 'FlatRateSubscription')
                THEN 'Purchase'
            WHEN line_item_line_item_type = 'Tax' THEN 'Tax'
            -- a refunded commitment purchase corrects that purchase; other refunds are credits
            WHEN line_item_line_item_type = 'Refund' AND commitment_arn IS NOT NULL THEN 'Purchase'
            WHEN line_item_line_item_type IN ('Credit', 'Refund', 'BundledDiscount', 'Discount', 'EdpDiscount',
                'PrivateRateDiscount', 'DistributorDiscount') THEN 'Credit'
            ELSE error('unknown line item type ' || coalesce(line_item_line_item_type, 'NULL'))
        END AS charge_category,
        CASE
            WHEN line_item_line_item_type = 'Refund' AND commitment_arn IS NOT NULL THEN 'Correction'
        END AS charge_class,
        CASE
            WHEN row_kind = 'unused' THEN unused_commitment_cost
            WHEN line_item_line_item_type = 'DiscountedUsage' THEN reservation_effective_cost
            WHEN line_item_line_item_type = 'SavingsPlanCoveredUsage' THEN savings_plan_savings_plan_effective_cost
            WHEN line_item_line_item_type IN
                ('SavingsPlanNegation', 'SavingsPlanUpfrontFee', 'SavingsPlanRecurringFee', 'RIFee') THEN 0
            WHEN line_item_line_item_type IN ('Fee', 'Refund') AND commitment_arn IS NOT NULL THEN 0
            ELSE line_item_unblended_cost
        END AS effective_cost,
        CASE WHEN row_kind = 'unused' THEN 0 ELSE line_item_unblended_cost END AS billed_cost,
        -- unused commitment is counted in the fee's own unit: RI hours, or SP hours of the full hourly
        -- commitment (TotalCommitmentToDate / hours, which includes any amortized upfront part)
        CASE
            WHEN row_kind <> 'unused' THEN line_item_usage_amount
            WHEN line_item_line_item_type = 'RIFee' THEN reservation_unused_quantity
            ELSE CAST(
                unused_commitment_cost * line_item_usage_amount / nullif(savings_plan_total_commitment_to_date, 0)
                AS DECIMAL(38, 10)
            )
        END AS quantity
    FROM expanded
),

priced AS (
    SELECT
        *,
        charge_category IN ('Usage', 'Purchase') AS has_unit_pricing,
        CASE
            WHEN row_kind = 'unused' THEN CAST(effective_cost / nullif(quantity, 0) AS DECIMAL(38, 10))
            WHEN line_item_line_item_type = 'SavingsPlanNegation' THEN 0
            ELSE coalesce(pricing_public_on_demand_rate, line_item_unblended_rate)
        END AS list_unit_price,
        CASE
            WHEN row_kind = 'unused' THEN CAST(effective_cost / nullif(quantity, 0) AS DECIMAL(38, 10))
            WHEN line_item_line_item_type = 'SavingsPlanNegation' THEN 0
            -- commitment-covered usage is contracted at the rate before the commitment discount
            WHEN line_item_line_item_type IN ('DiscountedUsage', 'SavingsPlanCoveredUsage')
                THEN coalesce(pricing_public_on_demand_rate, line_item_unblended_rate)
            ELSE line_item_unblended_rate
        END AS contracted_unit_price,
        CASE
            WHEN row_kind = 'unused' THEN effective_cost
            WHEN charge_category NOT IN ('Usage', 'Purchase') THEN billed_cost
            WHEN line_item_line_item_type = 'SavingsPlanNegation' THEN 0
            ELSE coalesce(pricing_public_on_demand_cost, billed_cost)
        END AS list_cost,
        CASE
            WHEN row_kind = 'unused' THEN effective_cost
            WHEN charge_category NOT IN ('Usage', 'Purchase') THEN billed_cost
            WHEN line_item_line_item_type = 'SavingsPlanNegation' THEN 0
            WHEN line_item_line_item_type = 'DiscountedUsage' THEN coalesce(pricing_public_on_demand_cost, 0)
            ELSE billed_cost
        END AS contracted_cost,
        CASE
            WHEN charge_category NOT IN ('Usage', 'Purchase') THEN NULL
            WHEN row_kind = 'unused' OR commitment_arn IS NOT NULL AND charge_category = 'Usage'
                THEN 'Committed'
            WHEN pricing_term = 'Spot' OR line_item_usage_type LIKE '%SpotUsage%' THEN 'Dynamic'
            ELSE 'Standard'
        END AS pricing_category,
        CASE
            WHEN row_kind = 'unused' THEN 'Recurring'
            WHEN line_item_line_item_type IN ('SavingsPlanRecurringFee', 'RIFee', 'FlatRateSubscription', 'Tax')
                THEN 'Recurring'
            WHEN line_item_line_item_type IN ('SavingsPlanUpfrontFee', 'Fee', 'Credit', 'Refund') THEN 'One-Time'
            ELSE 'Usage-Based'
        END AS charge_frequency,
        CASE WHEN charge_category IN ('Usage', 'Purchase') THEN commitment_arn END AS commitment_discount_id
    FROM classified
),

unit_prices AS (
    -- FOCUS unit prices are never negative; a correction (a refund) needs none, so its negative rate is emptied
    SELECT
        *,
        has_unit_pricing AND NOT (charge_class IS NOT NULL AND (list_unit_price < 0 OR contracted_unit_price < 0))
            AS states_unit_prices,
        has_unit_pricing AND charge_class IS NOT NULL AND (list_unit_price < 0 OR contracted_unit_price < 0)
            AS drops_negative_prices
    FROM priced
),

focus_rows AS (
    SELECT
        nullif(p.line_item_availability_zone, '') AS AvailabilityZone,
        p.billed_cost AS BilledCost,
        p.bill_payer_account_id AS BillingAccountId,
        coalesce(p.bill_payer_account_name, p.bill_payer_account_id) AS BillingAccountName,
        'Payer Account' AS BillingAccountType,
        p.line_item_currency_code AS BillingCurrency,
        p.bill_billing_period_end_date AS BillingPeriodEnd,
        p.bill_billing_period_start_date AS BillingPeriodStart,
        CAST(NULL AS VARCHAR) AS CapacityReservationId,
        CAST(NULL AS VARCHAR) AS CapacityReservationStatus,
        p.charge_category AS ChargeCategory,
        p.charge_class AS ChargeClass,
        CASE
            WHEN p.row_kind = 'unused' THEN 'Unused commitment: ' || p.commitment_arn
            ELSE p.line_item_line_item_description
        END AS ChargeDescription,
        p.charge_frequency AS ChargeFrequency,
        p.line_item_usage_end_date AS ChargePeriodEnd,
        p.line_item_usage_start_date AS ChargePeriodStart,
        CASE WHEN p.commitment_discount_id IS NOT NULL THEN p.commitment_category END
            AS CommitmentDiscountCategory,
        p.commitment_discount_id AS CommitmentDiscountId,
        CAST(NULL AS VARCHAR) AS CommitmentDiscountName,
        CASE
            WHEN p.commitment_discount_id IS NULL OR p.charge_class IS NOT NULL THEN NULL
            WHEN p.commitment_category = 'Spend' THEN
                CASE WHEN p.charge_category = 'Purchase' THEN p.billed_cost ELSE p.effective_cost END
            ELSE p.quantity
        END AS CommitmentDiscountQuantity,
        CASE
            WHEN p.commitment_discount_id IS NULL OR p.charge_category <> 'Usage' THEN NULL
            WHEN p.row_kind = 'unused' THEN 'Unused'
            ELSE 'Used'
        END AS CommitmentDiscountStatus,
        CASE WHEN p.commitment_discount_id IS NOT NULL THEN p.commitment_type END AS CommitmentDiscountType,
        CASE
            WHEN p.commitment_discount_id IS NULL OR p.charge_class IS NOT NULL THEN NULL
            WHEN p.commitment_category = 'Spend' THEN p.line_item_currency_code
            ELSE coalesce(u.focus_unit, p.pricing_unit)
        END AS CommitmentDiscountUnit,
        CASE
            WHEN p.charge_category = 'Usage' AND p.row_kind = 'charge' THEN p.line_item_usage_amount
        END AS ConsumedQuantity,
        CASE
            WHEN p.charge_category = 'Usage' AND p.row_kind = 'charge' AND p.line_item_usage_amount IS NOT NULL
                THEN coalesce(u.focus_unit, p.pricing_unit)
        END AS ConsumedUnit,
        p.contracted_cost AS ContractedCost,
        CASE WHEN p.states_unit_prices THEN p.contracted_unit_price END AS ContractedUnitPrice,
        p.effective_cost AS EffectiveCost,
        nullif(p.bill_invoice_id, '') AS InvoiceId,
        $provider_name AS InvoiceIssuerName,
        p.list_cost AS ListCost,
        CASE WHEN p.states_unit_prices THEN p.list_unit_price END AS ListUnitPrice,
        p.pricing_category AS PricingCategory,
        p.line_item_currency_code AS PricingCurrency,
        CASE WHEN p.states_unit_prices THEN p.contracted_unit_price END AS PricingCurrencyContractedUnitPrice,
        p.effective_cost AS PricingCurrencyEffectiveCost,
        CASE WHEN p.states_unit_prices THEN p.list_unit_price END AS PricingCurrencyListUnitPrice,
        CASE WHEN p.has_unit_pricing THEN p.quantity END AS PricingQuantity,
        CASE
            WHEN p.has_unit_pricing AND p.quantity IS NOT NULL THEN coalesce(u.focus_unit, p.pricing_unit)
        END AS PricingUnit,
        $provider_name AS ProviderName,
        CASE
            WHEN p.bill_billing_entity = 'AWS Marketplace' THEN coalesce(p.line_item_legal_entity, 'AWS Marketplace')
            ELSE $provider_name
        END AS PublisherName,
        nullif(p.product_region_code, '') AS RegionId,
        CASE
            WHEN nullif(p.product_region_code, '') IS NOT NULL THEN coalesce(r.region_name, p.product_region_code)
        END AS RegionName,
        CASE WHEN p.row_kind = 'unused' THEN p.commitment_arn ELSE nullif(p.line_item_resource_id, '') END
            AS ResourceId,
        CAST(NULL AS VARCHAR) AS ResourceName,
        CASE
            WHEN p.row_kind = 'unused' THEN p.commitment_type
            WHEN nullif(p.line_item_resource_id, '') IS NULL THEN NULL
            WHEN p.line_item_resource_id LIKE 'i-%' THEN 'Instance'
            WHEN p.line_item_resource_id LIKE 'vol-%' THEN 'Volume'
            WHEN p.line_item_resource_id LIKE '%:snapshot/%' THEN 'Snapshot'
            WHEN p.line_item_product_code = 'AmazonS3' THEN 'Bucket'
            ELSE coalesce(p.product_product_family, p.line_item_product_code)
        END AS ResourceType,
        coalesce(s.service_category, 'Other') AS ServiceCategory,
        coalesce(p.product_product_name, p.line_item_product_code) AS ServiceName,
        coalesce(s.service_subcategory, 'Other (Other)') AS ServiceSubcategory,
        -- fee rows can lack a SKU; the usage type keeps them identifiable (docs/decisions/0004)
        CASE
            WHEN p.has_unit_pricing
                THEN coalesce(nullif(p.product_sku, ''), p.line_item_product_code || ':' || p.line_item_usage_type)
        END AS SkuId,
        CASE WHEN p.has_unit_pricing THEN p.line_item_usage_type END AS SkuMeter,
        CASE
            WHEN p.has_unit_pricing AND nullif(p.product_instance_type, '') IS NOT NULL
                THEN json_object('InstanceType', p.product_instance_type)::VARCHAR
        END AS SkuPriceDetails,
        CASE
            WHEN p.has_unit_pricing THEN coalesce(
                nullif(p.pricing_rate_code, ''),
                nullif(p.product_sku, ''),
                p.line_item_product_code || ':' || p.line_item_usage_type
            )
        END AS SkuPriceId,
        p.line_item_usage_account_id AS SubAccountId,
        coalesce(p.line_item_usage_account_name, p.line_item_usage_account_id) AS SubAccountName,
        'Linked Account' AS SubAccountType,
        source_tags(p.tags_json) AS Tags,
        $source_format AS x_SourceFormat,
        $delivery_id AS x_DeliveryId,
        p.source_file AS x_SourceFile,
        CASE WHEN p.row_kind = 'unused' THEN p.identity_line_item_id || '/unused' ELSE p.identity_line_item_id END
            AS x_SourceLineItemId,
        p.line_item_line_item_type AS x_SourceLineItemType,
        CAST($ingested_at AS TIMESTAMPTZ) AS x_IngestedAt,
        p.line_item_product_code AS x_ServiceCode,
        p.line_item_usage_type AS x_UsageType,
        p.line_item_operation AS x_Operation,
        nullif(p.product_instance_type, '') AS x_InstanceType,
        p.cost_categories_json AS x_CostCategories,
        CASE WHEN p.commitment_discount_id IS NOT NULL THEN p.commitment_term_start END AS x_CommitmentTermStart,
        CASE WHEN p.commitment_discount_id IS NOT NULL THEN p.commitment_term_end END AS x_CommitmentTermEnd,
        p.pricing_unit AS x_PricingUnitDescription,
        source_changes(list_append(
            p.src_changes,
            CASE
                WHEN u.focus_unit IS NULL AND NOT follows_unit_format(p.pricing_unit) THEN 'UnmappedUnit'
            END
        ).list_append(CASE WHEN p.drops_negative_prices THEN 'NegativeUnitPrice' END)
        .list_append(CASE WHEN takes_own_tag_key(p.tags_json) THEN 'ReservedTagKey' END)) AS x_SourceChanges,
        CASE
            WHEN p.drops_negative_prices THEN merge_source_values(p.src_values, [
                {'key': 'lineItem/UnblendedRate', 'value': CAST(p.contracted_unit_price AS VARCHAR)},
                {'key': 'pricing/publicOnDemandRate', 'value': CAST(p.pricing_public_on_demand_rate AS VARCHAR)}
            ])
            ELSE p.src_values
        END AS x_SourceValues
    FROM unit_prices AS p
    LEFT JOIN services AS s ON s.product_code = p.line_item_product_code
    LEFT JOIN units AS u ON u.aws_unit = p.pricing_unit
    LEFT JOIN regions AS r ON r.region_id = p.product_region_code
)

SELECT * FROM focus_rows
