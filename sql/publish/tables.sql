-- Tables publishing writes (gpuledger/publish): one row per analyst file swapped in. No parameters.

CREATE SCHEMA IF NOT EXISTS meta;

CREATE TABLE IF NOT EXISTS meta.publishes (
    published_at TIMESTAMPTZ NOT NULL,
    path VARCHAR NOT NULL,
    published_rows BIGINT NOT NULL,
    lake_snapshot BIGINT  -- the DuckLake snapshot the analyst file was copied from (NULL: a DuckDB file warehouse)
);
