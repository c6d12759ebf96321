-- Tables telemetry ingestion writes (gpuledger/telemetry): jobs, GPU activity aggregated per hour,
-- checkpoint and egress bytes, and a record of each load. No parameters.

CREATE SCHEMA IF NOT EXISTS gpu;
CREATE SCHEMA IF NOT EXISTS meta;

CREATE TABLE IF NOT EXISTS gpu.jobs (
    job_id VARCHAR NOT NULL,
    scheduler_job_id VARCHAR,
    cluster VARCHAR NOT NULL,
    name VARCHAR,
    account VARCHAR,
    project VARCHAR,
    "user" VARCHAR,
    "partition" VARCHAR,
    qos VARCHAR,
    nodes VARCHAR[] NOT NULL,
    gpu_model VARCHAR,
    gpu_count INTEGER NOT NULL,
    gpu_ids VARCHAR[],
    mig_profile VARCHAR,
    start_time TIMESTAMPTZ NOT NULL,
    end_time TIMESTAMPTZ,
    state VARCHAR NOT NULL,
    run_group VARCHAR,
    checkpoint_uri VARCHAR,
    source VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS gpu.activity (
    cluster VARCHAR NOT NULL,
    node VARCHAR NOT NULL,
    gpu VARCHAR NOT NULL,
    gpu_instance VARCHAR,
    mig_profile VARCHAR,
    hour TIMESTAMPTZ NOT NULL,
    job_id VARCHAR,
    instance_id VARCHAR,
    metric VARCHAR NOT NULL,
    sampled_seconds DOUBLE NOT NULL,
    active_seconds DOUBLE NOT NULL,
    busy_seconds DOUBLE,
    active_busy_seconds DOUBLE,
    mean_utilization DOUBLE,
    p95_utilization DOUBLE,
    sm_active DOUBLE,
    tensor_active DOUBLE,
    dram_active DOUBLE,
    fb_used_mib DOUBLE,
    samples BIGINT NOT NULL,
    duplicate_samples BIGINT,
    source VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS gpu.checkpoint_bytes (
    source VARCHAR NOT NULL,
    as_of TIMESTAMPTZ NOT NULL,
    uri VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    -- when the object was last written (S3 Inventory LastModifiedDate), null when the listing does not say
    last_modified TIMESTAMPTZ
);

-- Warehouses made before GPU-truth pricing: the columns it added (telemetry is re-read by the next run).
ALTER TABLE gpu.jobs ADD COLUMN IF NOT EXISTS scheduler_job_id VARCHAR;
ALTER TABLE gpu.jobs ADD COLUMN IF NOT EXISTS "partition" VARCHAR;
ALTER TABLE gpu.jobs ADD COLUMN IF NOT EXISTS qos VARCHAR;
ALTER TABLE gpu.jobs ADD COLUMN IF NOT EXISTS gpu_ids VARCHAR[];
ALTER TABLE gpu.jobs ADD COLUMN IF NOT EXISTS mig_profile VARCHAR;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS gpu_instance VARCHAR;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS mig_profile VARCHAR;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS busy_seconds DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS active_busy_seconds DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS p95_utilization DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS sm_active DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS tensor_active DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS dram_active DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS fb_used_mib DOUBLE;
ALTER TABLE gpu.activity ADD COLUMN IF NOT EXISTS duplicate_samples BIGINT;
ALTER TABLE gpu.checkpoint_bytes ADD COLUMN IF NOT EXISTS last_modified TIMESTAMPTZ;

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
    notes VARCHAR[] NOT NULL,
    input_fingerprint VARCHAR
);
-- Loads before files were fingerprinted have none: their source is read again once.
ALTER TABLE meta.telemetry_loads ADD COLUMN IF NOT EXISTS input_fingerprint VARCHAR;
