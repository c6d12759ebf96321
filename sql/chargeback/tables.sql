-- Tables chargeback writes (gpuledger/chargeback): the month lifecycle (open -> closed -> issued), locked
-- exchange rates, issued statements and the restatements of issued months. No parameters.

CREATE SCHEMA IF NOT EXISTS chargeback;
CREATE SCHEMA IF NOT EXISTS meta;

CREATE TABLE IF NOT EXISTS meta.months (
    billing_month DATE NOT NULL,
    state VARCHAR NOT NULL,
    closes_on DATE NOT NULL,
    closed_at TIMESTAMPTZ,
    issued_at TIMESTAMPTZ
);

CREATE TABLE IF NOT EXISTS meta.locked_rates (
    billing_month DATE NOT NULL,
    currency VARCHAR NOT NULL,
    reporting_currency VARCHAR NOT NULL,
    rate DECIMAL(38, 18) NOT NULL,
    rate_date DATE,
    rate_source VARCHAR
);

CREATE TABLE IF NOT EXISTS chargeback.statements (
    billing_month DATE NOT NULL,
    version INTEGER NOT NULL,
    issued_at TIMESTAMPTZ NOT NULL,
    content_sha256 VARCHAR NOT NULL,
    teams BIGINT NOT NULL,
    data VARCHAR
);

CREATE TABLE IF NOT EXISTS chargeback.statement_lines (
    billing_month DATE NOT NULL,
    version INTEGER NOT NULL,
    team VARCHAR NOT NULL,
    currency VARCHAR,
    run_cost DECIMAL(38, 10) NOT NULL,
    idle_allocated_cost DECIMAL(38, 10) NOT NULL,
    idle_underutilized_cost DECIMAL(38, 10) NOT NULL,
    idle_unallocated_cost DECIMAL(38, 10) NOT NULL,
    idle_unused_commitment_cost DECIMAL(38, 10) NOT NULL,
    checkpoint_storage_cost DECIMAL(38, 10) NOT NULL,
    egress_cost DECIMAL(38, 10) NOT NULL,
    other_cost DECIMAL(38, 10) NOT NULL,
    total_cost DECIMAL(38, 10) NOT NULL,
    billed_cost DECIMAL(38, 10) NOT NULL,
    gpu_hours DOUBLE NOT NULL,
    failed_run_cost DECIMAL(38, 10) NOT NULL,
    completed_runs BIGINT NOT NULL,
    reporting_currency VARCHAR,
    exchange_rate DECIMAL(38, 18),
    total_cost_reporting DECIMAL(38, 10)
);

CREATE TABLE IF NOT EXISTS chargeback.statement_adjustments (
    billing_month DATE NOT NULL,
    version INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    restated_month DATE NOT NULL,
    statement_version INTEGER NOT NULL,
    team VARCHAR NOT NULL,
    currency VARCHAR,
    issued_total DECIMAL(38, 10) NOT NULL,
    restated_total DECIMAL(38, 10) NOT NULL,
    adjustment DECIMAL(38, 10) NOT NULL,
    exchange_rate DECIMAL(38, 18),
    adjustment_reporting DECIMAL(38, 10)
);

CREATE TABLE IF NOT EXISTS chargeback.adjustments (
    billing_month DATE NOT NULL,
    statement_version INTEGER NOT NULL,
    team VARCHAR NOT NULL,
    currency VARCHAR,
    issued_total DECIMAL(38, 10) NOT NULL,
    restated_total DECIMAL(38, 10) NOT NULL,
    adjustment DECIMAL(38, 10) NOT NULL,
    applies_to_month DATE NOT NULL,
    detected_at TIMESTAMPTZ NOT NULL
);

-- Statements issued before idle had four kinds: theirs were allocated and unallocated only.
ALTER TABLE chargeback.statement_lines ADD COLUMN IF NOT EXISTS idle_underutilized_cost DECIMAL(38, 10) DEFAULT 0;
ALTER TABLE chargeback.statement_lines ADD COLUMN IF NOT EXISTS idle_unused_commitment_cost DECIMAL(38, 10) DEFAULT 0;
