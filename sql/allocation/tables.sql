-- Tables allocation writes (gpuledger/allocation): exchange rates, the GPU usage per job and hour, and the
-- cost split. The alloc.* configuration tables are generated from the config; the showback.* models are
-- built by allocation. No parameters.

CREATE SCHEMA IF NOT EXISTS gpu;
CREATE SCHEMA IF NOT EXISTS alloc;
CREATE SCHEMA IF NOT EXISTS allocation;
CREATE SCHEMA IF NOT EXISTS showback;

CREATE TABLE IF NOT EXISTS alloc.exchange_rates (
    rate_date DATE NOT NULL,
    currency VARCHAR NOT NULL,
    reporting_currency VARCHAR NOT NULL,
    rate DECIMAL(38, 18) NOT NULL,
    source_file VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS gpu.usage (
    billing_period_start TIMESTAMPTZ NOT NULL,
    cluster VARCHAR NOT NULL,
    node VARCHAR NOT NULL,
    hour TIMESTAMPTZ NOT NULL,
    job_id VARCHAR NOT NULL,
    resource_id VARCHAR,
    allocated_seconds DOUBLE NOT NULL,
    active_seconds DOUBLE NOT NULL,
    busy_seconds DOUBLE,
    run_seconds DOUBLE,
    underutilized_seconds DOUBLE,
    mean_utilization DOUBLE,
    p95_utilization DOUBLE,
    sm_active DOUBLE,
    tensor_active DOUBLE,
    dram_active DOUBLE,
    fb_used_mib DOUBLE,
    metric VARCHAR NOT NULL,
    attribution VARCHAR
);

CREATE TABLE IF NOT EXISTS allocation.cost_split (
    BillingPeriodStart TIMESTAMPTZ NOT NULL,
    BillingCurrency VARCHAR,
    ProviderName VARCHAR NOT NULL,
    BillingAccountId VARCHAR NOT NULL,
    SubAccountId VARCHAR,
    charge_key VARCHAR NOT NULL,
    x_DeliveryId VARCHAR NOT NULL,
    x_SourceLineItemId VARCHAR NOT NULL,
    ChargeCategory VARCHAR NOT NULL,
    ChargePeriodStart TIMESTAMPTZ NOT NULL,
    ChargePeriodEnd TIMESTAMPTZ NOT NULL,
    ServiceName VARCHAR,
    ResourceId VARCHAR,
    category VARCHAR NOT NULL,
    idle_kind VARCHAR,
    team VARCHAR NOT NULL,
    cluster VARCHAR,
    job_id VARCHAR,
    BilledCost DECIMAL(38, 10) NOT NULL,
    EffectiveCost DECIMAL(38, 10) NOT NULL,
    gpu_hours DOUBLE NOT NULL,
    allocated_ratio DOUBLE NOT NULL,
    allocation_basis VARCHAR NOT NULL,
    metric VARCHAR,
    AllocatedMethodId VARCHAR NOT NULL,
    AllocatedMethodDetails JSON,
    AllocatedResourceId VARCHAR,
    billing_month DATE NOT NULL
);

-- Warehouses made before GPU-truth pricing: the columns it added (NULL in a month until it is split again).
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS busy_seconds DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS run_seconds DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS underutilized_seconds DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS p95_utilization DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS sm_active DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS tensor_active DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS dram_active DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS fb_used_mib DOUBLE;
ALTER TABLE gpu.usage ADD COLUMN IF NOT EXISTS attribution VARCHAR;
ALTER TABLE allocation.cost_split ADD COLUMN IF NOT EXISTS AllocatedMethodDetails JSON;
-- Warehouses made before the stored billing month: the column, filled from the one billing_month() rule.
ALTER TABLE allocation.cost_split ADD COLUMN IF NOT EXISTS billing_month DATE;
UPDATE allocation.cost_split SET billing_month = billing_month(BillingPeriodStart) WHERE billing_month IS NULL;

