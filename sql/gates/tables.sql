-- Tables the ingestion gates write (gpuledger/gates): the deliveries, who owns each slice, their repairs,
-- holds and source-side totals. focus.cost_rows is generated from models/focus.py. No parameters.

CREATE SCHEMA IF NOT EXISTS focus;
CREATE SCHEMA IF NOT EXISTS meta;

CREATE TABLE IF NOT EXISTS meta.deliveries (
    delivery_id VARCHAR NOT NULL,
    source_name VARCHAR,
    source_format VARCHAR NOT NULL,
    billing_account_id VARCHAR,
    billing_period VARCHAR,
    version VARCHAR,
    manifest VARCHAR,
    files VARCHAR[] NOT NULL,
    bytes BIGINT NOT NULL,
    content_sha256 VARCHAR NOT NULL,
    focus_rows BIGINT NOT NULL,
    first_ingested_at TIMESTAMPTZ NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL
);

-- Who owned which slice since when, appended to and never updated: publishing a delivery appends a row per slice
-- it takes over (its rows stay where they were written), and the newest row of a slice is its owner (meta.slices).
CREATE TABLE IF NOT EXISTS meta.slice_owners (
    provider_name VARCHAR NOT NULL,
    billing_account_id VARCHAR NOT NULL,
    billing_period_start TIMESTAMPTZ NOT NULL,
    delivery_id VARCHAR NOT NULL,
    replaced_at TIMESTAMPTZ NOT NULL,
    source_name VARCHAR
);

CREATE TABLE IF NOT EXISTS meta.delivery_repairs (
    delivery_id VARCHAR NOT NULL,
    change VARCHAR NOT NULL,
    rows BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS meta.delivery_holds (
    delivery_id VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    provider_name VARCHAR NOT NULL,
    billing_account_id VARCHAR NOT NULL,
    billing_period VARCHAR NOT NULL,
    detail VARCHAR NOT NULL,
    held_at TIMESTAMPTZ NOT NULL,
    accepted_at TIMESTAMPTZ
);

-- Deliveries a nightly run refused (bad money, keys, identity, an older version than the loaded one): each
-- ingestion partition (provider, billing month) replaces its own rows when it runs, so these are the refusals
-- still standing. The rest of the run goes on; the refused delivery's slices keep what was published.
CREATE TABLE IF NOT EXISTS meta.delivery_refusals (
    provider VARCHAR NOT NULL,
    billing_period VARCHAR NOT NULL,
    source_name VARCHAR,
    delivery VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    refused_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS meta.source_totals (
    delivery_id VARCHAR NOT NULL,
    billing_account_id VARCHAR NOT NULL,
    billing_period_start TIMESTAMPTZ NOT NULL,
    currency VARCHAR NOT NULL,
    source_rows BIGINT NOT NULL,
    billed_cost DECIMAL(38, 10) NOT NULL,
    effective_cost DECIMAL(38, 10) NOT NULL
);

-- The digests (gates/delivery_digests.sql) of published deliveries the delivery gate passed, under the code that
-- checked them, appended by the publish gate: a verdict is a function of the rows, the totals and the code, so the
-- gate checks again only a delivery whose digest it has not seen pass (an edited row changes the digest).
CREATE TABLE IF NOT EXISTS meta.passed_delivery_digests (
    delivery_id VARCHAR NOT NULL,
    digest VARCHAR NOT NULL,
    code_version VARCHAR NOT NULL,
    passed_at TIMESTAMPTZ NOT NULL
);
