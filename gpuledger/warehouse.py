"""The pipeline-owned DuckDB warehouse: connection settings, schemas and reference tables."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb

from models import aws, focus
from models.currencies import ISO_4217_CODES

WAREHOUSE_FILE = "warehouse.duckdb"

# How information_schema spells the types focus.cost_rows is declared with.
_INFORMATION_SCHEMA_TYPES = {"TIMESTAMPTZ": "TIMESTAMP WITH TIME ZONE"}

_META_DDL = """
CREATE SCHEMA IF NOT EXISTS focus;
CREATE SCHEMA IF NOT EXISTS meta;
CREATE SCHEMA IF NOT EXISTS ref;
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
CREATE TABLE IF NOT EXISTS meta.slices (
    provider_name VARCHAR NOT NULL,
    billing_account_id VARCHAR NOT NULL,
    billing_period_start TIMESTAMPTZ NOT NULL,
    delivery_id VARCHAR NOT NULL,
    replaced_at TIMESTAMPTZ NOT NULL
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
"""


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse with the settings every run relies on (UTC, bounded memory, spilling)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {
        # Out-of-core: big exports spill to disk instead of growing RSS.
        "memory_limit": os.environ.get("GPULEDGER_MEMORY_LIMIT", "1GB"),
        "preserve_insertion_order": "false",
    }
    if not read_only:
        config["temp_directory"] = str(path.parent / "tmp")
    con = duckdb.connect(str(path), read_only=read_only, config=config)
    # Set after connecting: the ICU extension that owns TimeZone loads with the first query.
    con.execute("SET TimeZone = 'UTC'")
    return con


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Commit what the block did, or roll all of it back on any exception."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def focus_costs_ddl() -> str:
    """``CREATE TABLE focus.cost_rows`` generated from the FOCUS column specification."""
    columns = [
        f"    {name} {sql_type}{'' if _nullable(name) else ' NOT NULL'}"
        for name, sql_type in focus.column_types().items()
    ]
    return "CREATE TABLE IF NOT EXISTS focus.cost_rows (\n" + ",\n".join(columns) + "\n)"


# What readers see: rows of the deliveries that own a slice. Staged rows stay invisible until their
# delivery passed its checks and took its slices over (docs/decisions/0003).
_PUBLISHED_VIEW = """
CREATE OR REPLACE VIEW focus.costs AS
SELECT * FROM focus.cost_rows WHERE x_DeliveryId IN (SELECT delivery_id FROM meta.slices)
"""


def _nullable(name: str) -> bool:
    if name in focus.FOCUS_BY_NAME:
        return focus.FOCUS_BY_NAME[name].nullable
    return next(c.nullable for c in focus.CUSTOM_COLUMNS if c.name == name)


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the warehouse tables if missing and refresh the reference tables from ``models``."""
    con.execute(_META_DDL)
    con.execute(focus_costs_ddl())
    con.execute(_PUBLISHED_VIEW)
    _replace_ref_table(
        con,
        "ref.aws_services",
        ("product_code", "service_category", "service_subcategory"),
        [(code, cat, sub) for code, (cat, sub) in sorted(aws.AWS_SERVICE_CATEGORIES.items())],
    )
    _replace_ref_table(con, "ref.aws_units", ("aws_unit", "focus_unit"), sorted(aws.AWS_UNITS.items()))
    _replace_ref_table(con, "ref.aws_regions", ("region_id", "region_name"), sorted(aws.AWS_REGION_NAMES.items()))
    _replace_ref_table(
        con,
        "ref.focus_allowed_values",
        ("column_name", "value"),
        [(c.name, v) for c in focus.FOCUS_COLUMNS for v in c.allowed_values],
    )
    _replace_ref_table(
        con,
        "ref.focus_service_subcategories",
        ("service_category", "service_subcategory"),
        [(cat, sub) for cat, subs in focus.SERVICE_SUBCATEGORIES.items() for sub in subs],
    )
    _replace_ref_table(
        con,
        "ref.focus_columns",
        ("column_name", "data_type"),
        [(c.name, _INFORMATION_SCHEMA_TYPES.get(c.type.sql, c.type.sql)) for c in focus.FOCUS_COLUMNS],
    )
    _replace_ref_table(con, "ref.iso_4217", ("code",), [(code,) for code in sorted(ISO_4217_CODES)])


def _replace_ref_table(
    con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Iterable[tuple[str, ...]]
) -> None:
    # Table and column names are constants of this module, never input; values are bound as lists.
    con.execute(f"CREATE OR REPLACE TABLE {table} ({', '.join(f'{c} VARCHAR' for c in columns)})")
    values = list(zip(*rows, strict=True)) or [() for _ in columns]
    unnested = ", ".join(f"unnest(${i + 1}::VARCHAR[])" for i in range(len(columns)))
    con.execute(f"INSERT INTO {table} SELECT {unnested}", [list(v) for v in values])
