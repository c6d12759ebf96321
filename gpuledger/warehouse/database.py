"""The pipeline-owned DuckDB warehouse: connection settings, schemas and reference tables."""

from __future__ import annotations

import hashlib
import logging
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TypeVar

import duckdb

from gpuledger.warehouse.sqlfiles import load_sql, quote_ident, quote_literal
from models import aws, azure, focus, gcp, units
from models.allocation import CATEGORIES, EGRESS_USAGE_PATTERNS, IDLE_KINDS, AllocationConfig
from models.currencies import ISO_4217_CODES
from models.errors import GpuledgerError
from models.formats import FORMATS
from models.gpu_catalog import catalog_rows
from models.telemetry import JOB_OUTCOMES

WAREHOUSE_FILE = "warehouse.duckdb"

# The tables each stage writes, one file per stage, in flow order (every statement is IF NOT EXISTS).
_TABLE_FILES = (
    "warehouse/reference_tables.sql",
    "gates/tables.sql",
    "telemetry/tables.sql",
    "allocation/tables.sql",
    "chargeback/tables.sql",
    "publish/tables.sql",
)


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB file (the file warehouse, or the analysts' file) with the settings every run relies on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    config = session_config()
    if not read_only:
        config["temp_directory"] = str(path.parent / "tmp")
    con = prepare_session(duckdb.connect(str(path), read_only=read_only, config=config))
    if not read_only:  # persistent: a reader finds the macro the last writer stored
        create_billing_month(con)
    return con


def session_config() -> dict[str, str]:
    """Bounded memory: big exports spill to disk instead of growing RSS (``GPULEDGER_MEMORY_LIMIT``)."""
    return {
        "memory_limit": os.environ.get("GPULEDGER_MEMORY_LIMIT", "1GB"),
        "preserve_insertion_order": "false",
        # an internal error (a reader's bounds check on a bad input file) fails its statement, not every later one
        "disable_database_invalidation": "true",
    }


def prepare_session(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """UTC and the project's temporary macros on a new session."""
    # Set after connecting: the ICU extension that owns TimeZone loads with the first query.
    con.execute("SET TimeZone = 'UTC'")
    create_macros(con)
    return con


def create_billing_month(con: duckdb.DuckDBPyConnection) -> None:
    """The ``billing_month()`` macro, stored in the current database (the warehouse, or the analyst file for its
    views): the one SQL spelling of the billing month (``models/billing_month.py`` is the Python one)."""
    con.execute(load_sql("normalize/billing_month.sql"))


def create_macros(con: duckdb.DuckDBPyConnection) -> None:
    """The macros the FOCUS models and checks share (temporary: every connection makes its own)."""
    con.execute(load_sql("normalize/macros.sql"))
    # generated from models/units.py through the quoting helper: the pattern is ours, never input
    pattern = quote_literal(units.UNIT_FORMAT_PATTERN)
    con.execute(f"CREATE OR REPLACE TEMP MACRO follows_unit_format(unit) AS regexp_matches(unit, {pattern})")
    suffix = quote_literal(focus.DERIVED_ROW_SUFFIX.pattern)  # models/focus.py's pattern, quoted
    origin = f"regexp_replace(CAST(id AS VARCHAR), {suffix}, '')"
    con.execute(f"CREATE OR REPLACE TEMP MACRO origin_line_item(id) AS {origin}")


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


_CONFLICT_TRIES = 5
_Result = TypeVar("_Result")


def retry_on_conflict(attempt: Callable[[], _Result]) -> _Result:
    """Run ``attempt`` (whole transactions) again when a lake refused its commit because another writer changed the
    same table meanwhile (DuckLake's optimistic concurrency): the refused transaction committed nothing."""
    tries = 1
    while True:
        try:
            return attempt()
        except duckdb.TransactionException as exc:
            if tries == _CONFLICT_TRIES or "Transaction conflict" not in str(exc):
                raise
            tries += 1
            logging.getLogger(__name__).info("commit refused by a concurrent writer; trying again: %s", exc)
            time.sleep(random.uniform(0.2, 2.0))  # noqa: S311 (spreads retries apart; not a secret)


def focus_costs_ddl() -> str:
    """``CREATE TABLE focus.cost_rows`` generated from the FOCUS column specification."""
    columns = [
        f"    {quote_ident(name)} {sql_type}{'' if _nullable(name) else ' NOT NULL'}"
        for name, sql_type in focus.column_types().items()
    ]
    return "CREATE TABLE IF NOT EXISTS focus.cost_rows (\n" + ",\n".join(columns) + "\n)"


def _nullable(name: str) -> bool:
    if name in focus.FOCUS_BY_NAME:
        return focus.FOCUS_BY_NAME[name].nullable
    return next(c.nullable for c in focus.CUSTOM_COLUMNS if c.name == name)


RefTable = tuple[str, tuple[str, ...], list[tuple[str, ...]]]
"""A reference table: its name, columns and rows (all text), generated from ``models``."""


SCHEMA_VERSION = 1
"""The warehouse schema's number, recorded by every migration: raise it with every change to the tables a release
ships. It only grows, so a gpuledger older than the warehouse's schema refuses it instead of migrating it back
(the fingerprint only tells that schemas differ, not which is newer). Warehouses before numbers count as 0."""


class NewerSchema(GpuledgerError):
    """The warehouse was migrated by a newer gpuledger: this one would rebuild it to its older schema, or fail."""


def ensure_schema(con: duckdb.DuckDBPyConnection) -> bool:
    """Bring the warehouse to this code's schema and reference tables, once: a warehouse already migrated to the
    same :func:`schema_fingerprint` is left as it is, so opening one costs no DDL. True when it migrated; raises
    :class:`NewerSchema` when a newer gpuledger migrated it."""
    references = _reference_tables()
    fingerprint = schema_fingerprint(references)
    migrated, version = _migrated_schema(con)
    if version > SCHEMA_VERSION:
        [(where,)] = con.execute(
            "SELECT coalesce(path, database_name) FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchall()
        raise NewerSchema(
            f"{where}: this warehouse was written by a newer gpuledger (schema {version}; this gpuledger"
            f" {package_version('gpuledger')} knows schema {SCHEMA_VERSION} and older); upgrade gpuledger"
        )
    if (migrated, version) == (fingerprint, SCHEMA_VERSION):
        return False
    with transaction(con):
        _migrate(con, references)
        con.execute(
            "CREATE TABLE IF NOT EXISTS meta.schema_version"
            " (fingerprint VARCHAR NOT NULL, migrated_at TIMESTAMPTZ, version INTEGER)"
        )
        con.execute("ALTER TABLE meta.schema_version ADD COLUMN IF NOT EXISTS version INTEGER")
        con.execute("DELETE FROM meta.schema_version")
        con.execute(
            "INSERT INTO meta.schema_version BY NAME SELECT $fingerprint AS fingerprint, now() AS migrated_at,"
            " $version AS version",
            {"fingerprint": fingerprint, "version": SCHEMA_VERSION},
        )
    return True


def schema_fingerprint(references: Sequence[RefTable] | None = None) -> str:
    """What the schema is made of: the DDL of every stage and the reference tables' rows, hashed."""
    digest = hashlib.sha256()
    for text in (*(load_sql(path) for path in _SCHEMA_FILES), focus_costs_ddl()):
        digest.update(text.encode())
    digest.update(repr([*(references or _reference_tables()), _custom_columns()]).encode())
    return digest.hexdigest()


def _custom_columns() -> list[tuple[str, str]]:
    return [(c.name, c.sql_type) for c in focus.CUSTOM_COLUMNS if c.nullable]


def _migrated_schema(con: duckdb.DuckDBPyConnection) -> tuple[str | None, int]:
    """The fingerprint and number of the schema the warehouse was last migrated to (None, 0: never)."""
    # asked directly, not through duckdb_tables(): on a lake, listing the catalog costs 0.2 s at every open
    try:
        row = con.execute("SELECT max(fingerprint), coalesce(max(version), 0) FROM meta.schema_version").fetchone()
    except (duckdb.CatalogException, duckdb.BinderException):  # never migrated, or before schemas were numbered
        return None, 0
    return (str(row[0]) if row[0] else None, int(row[1])) if row else (None, 0)


def _migrate(con: duckdb.DuckDBPyConnection, references: Sequence[RefTable]) -> None:
    """Create the warehouse tables if missing, add the columns later versions introduced, rebuild the reference
    tables and the views over them."""
    create_billing_month(con)
    for path in _TABLE_FILES:
        con.execute(load_sql(path))
    _slice_table_to_owner_log(con)
    _relax_not_null(con)
    con.execute(focus_costs_ddl())
    # Warehouses created before a custom column existed gain it (always nullable: old rows have no value).
    for name, sql_type in _custom_columns():
        con.execute(f"ALTER TABLE focus.cost_rows ADD COLUMN IF NOT EXISTS {quote_ident(name)} {sql_type}")
    # Statements issued before their data was stored gain the column (NULL: such a version cannot be rendered).
    con.execute("ALTER TABLE chargeback.statements ADD COLUMN IF NOT EXISTS data VARCHAR")
    # Publishes before the lake recorded no snapshot.
    con.execute("ALTER TABLE meta.publishes ADD COLUMN IF NOT EXISTS lake_snapshot BIGINT")
    _ensure_delivery_contract_columns(con)
    for superseded in ("ref.aws_units", "ref.azure_units", "ref.gcp_units"):  # one table per provider before
        con.execute(f"DROP TABLE IF EXISTS {superseded}")
    con.execute(load_sql(_READER_VIEWS_FILE))
    for table, columns, rows in references:
        replace_ref_table(con, table, columns, rows)
    for path in _VIEW_FILES:
        con.execute(load_sql(path))


# Views over the tables and reference tables, recreated by a migration.
_VIEW_FILES = ("gates/slices.sql", "gates/published_costs.sql", "warehouse/gpu_instances.sql")
_READER_VIEWS_FILE = "warehouse/reader_views.sql"
_SCHEMA_FILES = ("normalize/billing_month.sql", *_TABLE_FILES, _READER_VIEWS_FILE, *_VIEW_FILES)


def _reference_tables() -> list[RefTable]:
    """Every ``ref.*`` table, from ``models``."""
    return [
        (
            "ref.aws_services",
            ("product_code", "service_category", "service_subcategory"),
            [(code, cat, sub) for code, (cat, sub) in sorted(aws.AWS_SERVICE_CATEGORIES.items())],
        ),
        (
            "ref.source_formats",
            ("source_format", "provider"),
            [(name, f.provider.key) for name, f in sorted(FORMATS.items())],
        ),
        (
            "ref.units",
            ("provider", "source_unit", "focus_unit", "block_size"),
            [(u.provider, u.source_unit, u.focus_unit, str(u.block_size)) for u in units.UNIT_MAPPINGS],
        ),
        ("ref.aws_regions", ("region_id", "region_name"), sorted(aws.AWS_REGION_NAMES.items())),
        *_gcp_ref_tables(),
        *_azure_ref_tables(),
        (
            "ref.focus_allowed_values",
            ("column_name", "value"),
            [(c.name, v) for c in focus.FOCUS_COLUMNS for v in c.allowed_values],
        ),
        (
            "ref.focus_service_categories",
            ("service_category", "position"),
            [(category, f"{position:02d}") for position, category in enumerate(focus.SERVICE_SUBCATEGORIES)],
        ),
        (
            "ref.focus_service_subcategories",
            ("service_category", "service_subcategory"),
            [(cat, sub) for cat, subs in focus.SERVICE_SUBCATEGORIES.items() for sub in subs],
        ),
        (
            "ref.focus_columns",
            ("column_name", "data_type"),
            [(c.name, c.type.catalog_name) for c in focus.FOCUS_COLUMNS],
        ),
        ("ref.iso_4217", ("code",), [(code,) for code in sorted(ISO_4217_CODES)]),
        (
            "ref.gpu_instance_types",
            ("provider", "instance_type", "gpu_model", "gpu_count", "gpu_memory_gib", "gpu_memory_bandwidth_tbps"),
            [tuple(map(str, row)) for row in catalog_rows()],
        ),
    ]


def _ensure_delivery_contract_columns(con: duckdb.DuckDBPyConnection) -> None:
    """What the ingestion contract records (docs/decisions/0011); warehouses made before it gain the columns."""
    # state: 'published' (it owned its slices once), 'held' (checked, waiting for `gpuledger accept`),
    # 'superseded' (held, then overtaken by a newer delivery of its slices)
    con.execute("ALTER TABLE meta.deliveries ADD COLUMN IF NOT EXISTS state VARCHAR DEFAULT 'published'")
    con.execute("ALTER TABLE meta.deliveries ADD COLUMN IF NOT EXISTS version_time TIMESTAMPTZ")
    con.execute("ALTER TABLE meta.deliveries ADD COLUMN IF NOT EXISTS origin VARCHAR")
    # line items a delivery lists more than once, where the format has a line-item id (NULL: it has none)
    con.execute("ALTER TABLE meta.source_totals ADD COLUMN IF NOT EXISTS duplicate_line_items BIGINT")
    # the part of its delivery's files a total was staged from, and when that part's staging began and ended
    con.execute("ALTER TABLE meta.source_totals ADD COLUMN IF NOT EXISTS part INTEGER")
    con.execute("ALTER TABLE meta.source_totals ADD COLUMN IF NOT EXISTS staging_started_at TIMESTAMPTZ")
    con.execute("ALTER TABLE meta.source_totals ADD COLUMN IF NOT EXISTS staged_at TIMESTAMPTZ")
    # a slice belongs to the source that delivered it; older owners take their delivery's source
    con.execute(
        "UPDATE meta.slice_owners AS s SET source_name = d.source_name FROM meta.deliveries AS d"
        " WHERE s.source_name IS NULL AND d.delivery_id = s.delivery_id AND d.source_name IS NOT NULL"
    )


def _slice_table_to_owner_log(con: duckdb.DuckDBPyConnection) -> None:
    """Warehouses made before loading became insert-only kept one owner row per slice in the table meta.slices:
    those rows start the owner log, and meta.slices becomes the view of it (docs/decisions/0019)."""
    old = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'meta' AND table_name = 'slices'"
        " AND database_name = current_database()"
    ).fetchone()
    if not old or not old[0]:
        return
    con.execute("ALTER TABLE meta.slices ADD COLUMN IF NOT EXISTS source_name VARCHAR")
    con.execute("INSERT INTO meta.slice_owners BY NAME SELECT * FROM meta.slices")
    con.execute("DROP TABLE meta.slices")


# Columns that became nullable (schema, table, column): warehouses made before still hold the NOT NULL.
_NOW_NULLABLE = (("gpu", "jobs", "run_group"),)


def _relax_not_null(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the NOT NULL of :data:`_NOW_NULLABLE` where a warehouse still has it (a DuckLake refuses dropping one
    that is not there)."""
    for schema, table, column in _NOW_NULLABLE:
        held = con.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE database_name = current_database()"
            " AND schema_name = $schema AND table_name = $table AND constraint_type = 'NOT NULL'"
            " AND list_contains(constraint_column_names, $column)",
            {"schema": schema, "table": table, "column": column},
        ).fetchone()
        if held and held[0]:  # names are this module's constants
            con.execute(f"ALTER TABLE {schema}.{table} ALTER COLUMN {quote_ident(column)} DROP NOT NULL")


def _gcp_ref_tables() -> list[RefTable]:
    """Reference tables that sql/normalize/gcp_billing_export.sql joins (models/gcp.py)."""
    return [
        (
            "ref.gcp_services",
            ("service_name", "service_category", "service_subcategory"),
            [(name, cat, sub) for name, (cat, sub) in sorted(gcp.GCP_SERVICE_CATEGORIES.items())],
        ),
        ("ref.gcp_regions", ("region_id", "region_name"), sorted(gcp.GCP_REGION_NAMES.items())),
        (
            "ref.gcp_credit_types",
            ("credit_type", "treatment", "committed"),
            [(name, str(t.treatment), str(t.committed).lower()) for name, t in sorted(gcp.GCP_CREDIT_TYPES.items())],
        ),
    ]


def _azure_ref_tables() -> list[RefTable]:
    """Reference tables that sql/normalize/azure_cost_details.sql joins (models/azure.py)."""
    return [
        (
            "ref.azure_services",
            ("service_name", "service_category", "service_subcategory"),
            [(name, cat, sub) for name, (cat, sub) in sorted(azure.AZURE_SERVICE_CATEGORIES.items())],
        ),
        (
            "ref.azure_consumed_services",
            ("consumed_service", "service_name"),
            sorted(azure.AZURE_CONSUMED_SERVICES.items()),
        ),
        (
            "ref.azure_regions",
            ("location_key", "region_id", "region_name"),
            [(key, region, name) for key, (region, name) in sorted(azure.AZURE_REGIONS.items())],
        ),
        ("ref.azure_resource_types", ("arm_type", "display_name"), sorted(azure.AZURE_RESOURCE_TYPES.items())),
    ]


def replace_ref_table(
    con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], rows: Iterable[tuple[str, ...]]
) -> None:
    # Table and column names are constants of this module, never input; values are bound as lists.
    con.execute(f"CREATE OR REPLACE TABLE {table} ({', '.join(f'{c} VARCHAR' for c in columns)})")
    values = list(zip(*rows, strict=True)) or [() for _ in columns]
    unnested = ", ".join(f"unnest(${i + 1}::VARCHAR[])" for i in range(len(columns)))
    con.execute(f"INSERT INTO {table} SELECT {unnested}", [list(v) for v in values])


def write_allocation_config(con: duckdb.DuckDBPyConnection, config: AllocationConfig) -> None:
    """The configuration as ``alloc.*`` tables, which the allocation SQL joins."""
    settings = [(config.idle_policy, config.pricing, str(config.group_by_name).lower())]
    replace_ref_table(con, "alloc.settings", ("idle_policy", "pricing", "group_by_name"), settings)
    sessions = [
        *(("partition", v) for v in config.session_partitions),
        *(("qos", v) for v in config.session_qos),
        *(("name", v) for v in config.session_names),
    ]
    replace_ref_table(con, "alloc.session_patterns", ("field", "pattern"), sessions)
    replace_ref_table(con, "alloc.categories", ("category",), [(c,) for c in CATEGORIES])
    replace_ref_table(con, "alloc.idle_kinds", ("idle_kind",), [(k,) for k in IDLE_KINDS])
    replace_ref_table(con, "alloc.job_outcomes", ("state", "outcome"), sorted(JOB_OUTCOMES.items()))
    priorities = [(key, f"{i:04d}") for i, key in enumerate(config.team_tag_keys)]
    replace_ref_table(con, "alloc.team_tag_keys", ("tag_key", "priority"), priorities)
    replace_ref_table(con, "alloc.account_teams", ("account_id", "team"), sorted(config.account_teams.items()))
    replace_ref_table(con, "alloc.job_account_teams", ("account", "team"), sorted(config.job_account_teams.items()))
    replace_ref_table(con, "alloc.checkpoint_resources", ("resource_id",), [(r,) for r in config.checkpoint_resources])
    replace_ref_table(con, "alloc.checkpoint_tags", ("tag_key", "tag_value"), sorted(config.checkpoint_tags.items()))
    nodes = [(n.cluster, n.node, n.resource_id, n.pool) for n in config.nodes]
    replace_ref_table(con, "alloc.nodes", ("cluster", "node", "resource_id", "pool"), nodes)
    replace_ref_table(
        con,
        "alloc.egress_patterns",
        ("provider", "pattern"),
        [(provider, p) for provider, patterns in sorted(EGRESS_USAGE_PATTERNS.items()) for p in patterns],
    )
