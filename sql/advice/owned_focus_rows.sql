-- advice.owned_focus_rows: what the month's rented GPU work would have cost on owned GPUs, as synthetic
-- FOCUS 1.2-shaped rows (an ESTIMATE, never billed data: nothing here is ever written to focus.costs). One row
-- per billing month, GPU model, currency and cost component (depreciation, power, colocation) of
-- advice.owned_vs_rented, whose owned_monthly_cost the three add up to exactly. Cost columns (Billed, Effective,
-- List, Contracted) all carry the estimate; ConsumedQuantity is the owned capacity's GPU-hours (capacity x hours
-- in the month). Method: advice.owned_vs_rented's. No parameters.
WITH estimates AS (
    SELECT
        e.*,
        h.capex_per_gpu,
        h.depreciation_years,
        h.watts_per_gpu,
        h.pue,
        h.price_per_kwh,
        h.colocation_per_gpu_month,
        h.example
    FROM advice.owned_vs_rented AS e
    JOIN advice.owned_hardware AS h USING (gpu_model, currency)
    WHERE e.owned_monthly_cost IS NOT NULL
),

-- the owned cost's three components, one row each, with the inputs that price it
components AS (
    SELECT
        e.*,
        c.component,
        c.cost,
        c.description
    FROM estimates AS e
    CROSS JOIN LATERAL (
        VALUES
            (
                'depreciation',
                e.depreciation_cost,
                format(
                    '{} x {} {} capex per GPU, straight-line over {} years, for {} h',
                    e.capacity, e.capex_per_gpu, e.currency, e.depreciation_years, e.hours_in_month
                )
            ),
            (
                'power',
                e.power_cost,
                format(
                    '{} GPU-h at nominal {} W per GPU x PUE {} and {} {} per kWh (DCGM energy not collected yet)',
                    e.owned_gpu_hours, e.watts_per_gpu, e.pue, e.price_per_kwh, e.currency
                )
            ),
            (
                'colocation',
                e.colocation_cost,
                format('{} GPUs x {} {} per GPU-month', e.capacity, e.colocation_per_gpu_month, e.currency)
            )
    ) AS c (component, cost, description)
)

SELECT
    timezone('UTC', CAST(c.month AS TIMESTAMP)) AS BillingPeriodStart,
    timezone('UTC', CAST(c.month + INTERVAL 1 MONTH AS TIMESTAMP)) AS BillingPeriodEnd,
    timezone('UTC', CAST(c.month AS TIMESTAMP)) AS ChargePeriodStart,
    timezone('UTC', CAST(c.month + INTERVAL 1 MONTH AS TIMESTAMP)) AS ChargePeriodEnd,
    'gpuledger-owned-estimate' AS BillingAccountId,
    'Owned hardware (gpuledger estimate)' AS BillingAccountName,
    c.currency AS BillingCurrency,
    CAST(c.cost AS DECIMAL(38, 10)) AS BilledCost,
    CAST(c.cost AS DECIMAL(38, 10)) AS EffectiveCost,
    CAST(c.cost AS DECIMAL(38, 10)) AS ListCost,
    CAST(c.cost AS DECIMAL(38, 10)) AS ContractedCost,
    'Owned hardware (gpuledger estimate)' AS ProviderName,
    'Owned hardware (gpuledger estimate)' AS PublisherName,
    'Owned hardware (gpuledger estimate)' AS InvoiceIssuerName,
    'Owned GPUs' AS ServiceName,
    'AI and Machine Learning' AS ServiceCategory,
    'Usage' AS ChargeCategory,
    CAST(NULL AS VARCHAR) AS ChargeClass,
    format('ESTIMATE: owned {} {} ({})', c.gpu_model, c.component, c.description) AS ChargeDescription,
    'Usage-Based' AS ChargeFrequency,
    'Standard' AS PricingCategory,
    CAST(c.owned_gpu_hours AS DECIMAL(38, 10)) AS ConsumedQuantity,
    'Hours' AS ConsumedUnit,
    'GPU' AS ResourceType,
    c.gpu_model AS SkuId,
    c.month AS x_BillingMonth,
    c.component AS x_CostComponent,
    true AS x_Estimate,
    CASE WHEN c.example THEN 'EXAMPLE owned-hardware costs: ' ELSE '' END
    || 'owned cost of the month''s peak rented GPU capacity (advice.owned_vs_rented): straight-line depreciation + '
    || 'nominal power (watts x PUE x price per kWh) + colocation, every hour of the month' AS x_EstimateMethod
FROM components AS c
ORDER BY x_BillingMonth, BillingCurrency, SkuId, x_CostComponent
