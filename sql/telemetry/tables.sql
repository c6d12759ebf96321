-- Tables telemetry ingestion writes (gpuledger/telemetry): jobs, GPU activity aggregated per hour,
-- checkpoint and egress bytes, and a record of each load. No parameters.

CREATE SCHEMA IF NOT EXISTS gpu;
CREATE SCHEMA IF NOT EXISTS meta;

CREATE TABLE IF NOT EXISTS gpu.jobs (
    job_id VARCHAR NOT NULL,
    cluster VARCHAR NOT NULL,
    name VARCHAR,
    account VARCHAR,
    project VARCHAR,
    "user" VARCHAR,
    nodes VARCHAR[] NOT NULL,
    gpu_model VARCHAR,
    gpu_count INTEGER NOT NULL,
    start_time TIMESTAMPTZ NOT NULL,
    end_time TIMESTAMPTZ,
    state VARCHAR NOT NULL,
    run_group VARCHAR NOT NULL,
    checkpoint_uri VARCHAR,
    source VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS gpu.activity (
    cluster VARCHAR NOT NULL,
    node VARCHAR NOT NULL,
    gpu VARCHAR NOT NULL,
    hour TIMESTAMPTZ NOT NULL,
    job_id VARCHAR,
    instance_id VARCHAR,
    metric VARCHAR NOT NULL,
    sampled_seconds DOUBLE NOT NULL,
    active_seconds DOUBLE NOT NULL,
    mean_utilization DOUBLE,
    samples BIGINT NOT NULL,
    source VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS gpu.checkpoint_bytes (
    source VARCHAR NOT NULL,
    as_of TIMESTAMPTZ NOT NULL,
    uri VARCHAR NOT NULL,
    bytes BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS gpu.egress_bytes (
    source VARCHAR NOT NULL,
    cluster VARCHAR NOT NULL,
    node VARCHAR NOT NULL,
    hour TIMESTAMPTZ NOT NULL,
    job_id VARCHAR NOT NULL,
    bytes BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS meta.telemetry_loads (
    source_name VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    loaded_at TIMESTAMPTZ NOT NULL,
    window_start TIMESTAMPTZ,
    window_end TIMESTAMPTZ,
    jobs BIGINT NOT NULL,
    activity_rows BIGINT NOT NULL,
    notes VARCHAR[] NOT NULL
);
