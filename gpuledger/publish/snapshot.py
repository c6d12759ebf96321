"""Publishing: the analysts' DuckDB file, rebuilt from the warehouse and swapped in whole, only when every check passed.

The pipeline owns ``<home>/warehouse.duckdb``; analysts open ``<home>/analyst.duckdb`` (read-only). A publish

1. refuses when a check fails: a FOCUS check or source reconciliation of a current delivery, or an allocation
   audit of any billing month (the old file stays, untouched);
2. copies the published tables into a hidden temporary file beside it, in a fixed row order (a rerun on the
   same data gives identical tables), adds the GPU catalog, the analysts' views (money rounded to cents, GPU-hours
   to tenths; the tables stay exact) and the descriptions of every table, view and column;
3. checks the copy against the warehouse (row counts, money per currency), then renames it over
   ``analyst.duckdb``: an analyst connected to the old file keeps reading it until every connection to it closes,
   and never waits on the pipeline, nor the pipeline on them;
4. writes the FOCUS rows as Parquet partitioned by provider and billing month beside it, swapped in by a
   symbolic link, for other engines; the folder it replaces stays for readers still in it until the next publish.

A crash at any point leaves the last published file (and Parquet folder) as it was; the next publish removes
the temporary leftovers.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from connectors.ledger import write_atomically
from gpuledger.advice.advise import published_advice_tables
from gpuledger.gates.verdicts import publish_blockers, record_passed_deliveries
from gpuledger.publish import focus_1_3
from gpuledger.warehouse.database import create_billing_month, transaction
from gpuledger.warehouse.failpoints import failpoint
from gpuledger.warehouse.lake import read_snapshot
from gpuledger.warehouse.sqlfiles import load_sql, quote_ident, quote_literal, sql_files
from models.errors import GpuledgerError
from models.gpu_catalog import GPU_INSTANCE_TYPES, GPU_MODELS

ANALYST_FILE = "analyst.duckdb"
PUBLISHED_FOLDER = "published"
"""``<home>/published/focus/ProviderName=.../billing_month=.../*.parquet``: the FOCUS rows for other engines."""

PUBLISHED_TABLES = (
    "focus.costs",
    "allocation.cost_split",
    "showback.team_month",
    "showback.team_month_reporting",
    "showback.job_costs",
    "showback.user_month",
    "showback.idle_by_hour_of_week",
    "gpu.jobs",
    "meta.months",
    "meta.deliveries",
    "meta.delivery_repairs",
    "meta.delivery_holds",
    "chargeback.statements",
    "chargeback.statement_lines",
    "chargeback.statement_adjustments",
    "chargeback.adjustments",
    *published_advice_tables(),
)
"""Copied whole into the analyst file; the warehouse's staging, telemetry detail and reference tables are not.
The advice tables are ESTIMATES, in their own schema: no view adds them to billed money."""

REFERENCE_TABLES = ("ref.gpu_models", "ref.gpu_instances")
"""The GPU catalog, written from ``models/gpu_catalog.py`` (the data allocation looks instance types up in)."""

# Columns a rerun rewrites (when it looked at a delivery again): left out so reruns publish identical tables.
_VOLATILE_COLUMNS = {"meta.deliveries": ("ingested_at",)}
_TEMP_PREFIX = ".analyst-"
STATUS_FILE = "publish-status.json"
"""``<home>/publish-status.json``: the last attempt, for ``gpuledger status`` (no DuckDB lock needed)."""
ANALYST_STORAGE_VERSION = "v1.0.0"
"""The analysts' file is written in the storage format every DuckDB 1.x client opens, whatever DuckDB the pipeline
runs (docs/decisions/0018); tests open it with DuckDB 1.4."""


class PublishRefused(GpuledgerError):
    """A check failed: nothing was published and the analysts keep the previous file."""

    def __init__(self, message: str, failed_checks: list[str] | None = None) -> None:
        super().__init__(message)
        self.failed_checks = failed_checks or []
        """The warehouse's failed checks (recorded for ``gpuledger status``); empty when the copy was wrong."""


@dataclass(frozen=True)
class PublishResult:
    path: Path
    parquet: Path
    tables: dict[str, int]
    """Rows per published table."""
    published_at: datetime
    lake_snapshot: int | None
    """The lake snapshot the analyst file was copied from, which analysts may attach read-only; None on a file."""


def publish(con: duckdb.DuckDBPyConnection, home: Path) -> PublishResult:
    """Rebuild ``<home>/analyst.duckdb`` from the warehouse ``con`` and swap it in, or refuse and change nothing."""
    _remove_leftovers(home)
    target = home / ANALYST_FILE
    temp = home / f"{_TEMP_PREFIX}{uuid.uuid4().hex}.duckdb"
    warehouse = con.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
    record_passed_deliveries(con)  # apart: the copy's transaction writes the analyst file alone
    con.execute(  # ATTACH takes no parameters
        f"ATTACH {quote_literal(str(temp))} AS analyst (STORAGE_VERSION {quote_literal(ANALYST_STORAGE_VERSION)})"
    )
    try:
        try:
            snapshot, tables = _checked_copy(con, warehouse)
            con.execute("CHECKPOINT analyst")
        finally:
            con.execute(f"USE {quote_ident(warehouse)}")
            con.execute("DETACH DATABASE IF EXISTS analyst")
    except PublishRefused as refused:
        _remove_leftovers(home)  # the refused copy
        if refused.failed_checks:
            _record_attempt(home, blockers=refused.failed_checks)
        raise
    failpoint("publish:before-swap")
    _fsync(temp)
    os.replace(temp, target)
    _fsync(home)
    failpoint("publish:after-swap")
    parquet = _export_parquet(con, home)
    published_at = datetime.now(UTC)
    con.execute(
        "INSERT INTO meta.publishes BY NAME SELECT $at AS published_at, $path AS path, $rows AS published_rows,"
        " $snapshot AS lake_snapshot",
        {"at": published_at, "path": str(target), "rows": sum(tables.values()), "snapshot": snapshot},
    )
    _record_attempt(home, published_at=published_at, rows=sum(tables.values()), snapshot=snapshot)
    return PublishResult(target, parquet, tables, published_at, snapshot)


def _checked_copy(con: duckdb.DuckDBPyConnection, warehouse: str) -> tuple[int | None, dict[str, int]]:
    """The checks, the copy into ``analyst`` and its comparison, all reading one snapshot of the warehouse (on a
    lake, loads that commit meanwhile are not in it); the lake snapshot read (None on a file) and rows per table."""
    with transaction(con):
        snapshot = read_snapshot(con)
        blockers = publish_blockers(con)
        if blockers:
            raise PublishRefused("not published, checks failed: " + "; ".join(blockers), failed_checks=blockers)
        tables = _build(con, warehouse)
        mismatches = _compare(con, warehouse)
        if mismatches:
            raise PublishRefused("not published, the copy differs from the warehouse: " + "; ".join(mismatches))
    return snapshot, tables


def last_attempt(home: Path) -> dict[str, Any] | None:
    """The last publish attempt (time, published or the failed checks), readable while a run holds the warehouse."""
    path = home / STATUS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _record_attempt(home: Path, *, blockers: list[str] | None = None, published_at: datetime | None = None,
                    rows: int | None = None, snapshot: int | None = None) -> None:  # fmt: skip
    previous = last_attempt(home) or {}
    status = {
        "attempted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "failed_checks": blockers or [],
        "published_at": published_at.isoformat(timespec="seconds") if published_at else previous.get("published_at"),
        "published_rows": rows if rows is not None else previous.get("published_rows"),
        "lake_snapshot": snapshot if published_at else previous.get("lake_snapshot"),
    }
    write_atomically(home / STATUS_FILE, json.dumps(status, indent=2).encode())


def _build(con: duckdb.DuckDBPyConnection, warehouse: str) -> dict[str, int]:
    """The published tables, the GPU catalog, the views and descriptions, in the attached ``analyst`` catalog."""
    con.execute("USE analyst")
    # first: the warehouse's focus.costs calls it, resolved in the analyst file while copied; the views call it too
    create_billing_month(con)
    rows = {}
    for table in PUBLISHED_TABLES:
        schema = table.split(".")[0]
        excluded = _VOLATILE_COLUMNS.get(table, ())
        columns = f"* EXCLUDE ({', '.join(excluded)})" if excluded else "*"
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        # Table and catalog names are this module's constants and DuckDB's own; ORDER BY ALL fixes the row order.
        con.execute(f"CREATE TABLE {table} AS SELECT {columns} FROM {quote_ident(warehouse)}.{table} ORDER BY ALL")  # noqa: S608
        rows[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # type: ignore[index]  # noqa: S608
    rows.update(_write_gpu_catalog(con))
    con.execute("CREATE SCHEMA IF NOT EXISTS views")
    con.execute(load_sql("publish/macros.sql"))  # the views' rounding, called on analysts' connections
    for path in sql_files("publish/views"):
        # View names are the project's file names; their SQL resolves in the analyst file when queried. Created in
        # name order: a view reads only views named before it (idle_by_team reads cost_by_team_month_category).
        con.execute(f"CREATE VIEW views.{path.stem} AS " + path.read_text(encoding="utf-8"))
    con.execute(load_sql("publish/comments.sql"))
    con.execute(f"CREATE SCHEMA {focus_1_3.ANALYST_SCHEMA}")
    focus_1_3.create_views(con, focus_1_3.analyst_view_names())
    focus_1_3.comment_views(con, focus_1_3.analyst_view_names())
    return rows


def _write_gpu_catalog(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """``ref.gpu_models`` and ``ref.gpu_instances`` from the catalog; rows per table."""
    con.execute("CREATE SCHEMA IF NOT EXISTS ref")
    models = sorted(GPU_MODELS.values(), key=lambda m: m.name)
    con.execute(
        load_sql("publish/gpu_models.sql"),
        {
            "gpu_models": [m.name for m in models],
            "vendors": [m.vendor for m in models],
            "architectures": [m.architecture for m in models],
            # as text: the catalog's decimal figures reach the DECIMAL columns without a binary float between
            "memory_gib": [str(m.memory_gib) for m in models],
            "bandwidth_tbps": [str(m.memory_bandwidth_tbps) for m in models],
            "dense_tflops": [str(m.dense_tflops) for m in models],
            "fp8": [m.fp8 for m in models],
            "fp4": [m.fp4 for m in models],
            "interconnects": [m.interconnect for m in models],
        },
    )
    instances = sorted(GPU_INSTANCE_TYPES.values(), key=lambda t: (t.provider, t.instance_type))
    con.execute(
        load_sql("publish/gpu_instances.sql"),
        {
            "providers": [t.provider for t in instances],
            "instance_types": [t.instance_type for t in instances],
            "gpu_models": [t.gpu_model for t in instances],
            "gpu_counts": [t.gpu_count for t in instances],
            "vcpus": [t.vcpus for t in instances],
            "memory_gib": [str(t.memory_gib) for t in instances],
        },
    )
    return {"ref.gpu_models": len(models), "ref.gpu_instances": len(instances)}


def _compare(con: duckdb.DuckDBPyConnection, warehouse: str) -> list[str]:
    """Differences between the copy and the warehouse: row counts of every table, money per currency."""
    mismatches = []
    for table in PUBLISHED_TABLES:
        counts = con.execute(
            # table names are this module's constants, the catalog quoted
            f"SELECT (SELECT count(*) FROM analyst.{table}), (SELECT count(*) FROM {quote_ident(warehouse)}.{table})"  # noqa: S608
        ).fetchone()
        if counts is None or counts[0] != counts[1]:
            mismatches.append(f"{table}: {counts}")
    # the month gate's showback-equals-FOCUS audit, over every month of the copy
    money = load_sql("gates/audits/team_month_totals.sql")
    for row in con.execute(money, {"billing_month": None}).fetchall():
        mismatches.append(f"showback and FOCUS totals differ in the copy: {row}")
    return mismatches


def _export_parquet(con: duckdb.DuckDBPyConnection, home: Path) -> Path:
    """FOCUS rows as Parquet under ``published/focus``: a new folder, then the link moved to it in one rename. The
    folder it replaces stays, named by ``published/.previous-focus``, for readers still in it, until the next
    publish retires this one and removes it."""
    folder = home / PUBLISHED_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    version = f".focus-{uuid.uuid4().hex}"
    con.execute(load_sql("publish/focus_parquet.sql"), {"dir": str(folder / version)})
    link = folder / "focus"
    previous = _link_target(link)
    _point(link, version)
    if previous:
        retired = _link_target(folder / _PREVIOUS_LINK)
        _point(folder / _PREVIOUS_LINK, previous)
        if retired and retired != previous:
            shutil.rmtree(folder / retired, ignore_errors=True)
    return link


_PREVIOUS_LINK = ".previous-focus"
"""``published/.previous-focus``: the Parquet folder the last publish replaced, kept for its readers."""


def _point(link: Path, target: str) -> None:
    """Make ``link`` name ``target`` in one rename: a reader finds the old target or the new, never none."""
    temp_link = link.parent / f".focus-link-{uuid.uuid4().hex}"
    temp_link.symlink_to(target)
    os.replace(temp_link, link)


def _link_target(link: Path) -> str | None:
    return os.readlink(link) if link.is_symlink() else None


def crash_leftovers(home: Path) -> list[Path]:
    """Temporary files of a publish that crashed: never read by anyone (unlike the published Parquet folder and the
    one it replaced), safe to delete."""
    found = list(home.glob(f"{_TEMP_PREFIX}*.duckdb*"))
    folder = home / PUBLISHED_FOLDER
    if folder.is_dir():
        kept = {_link_target(folder / "focus"), _link_target(folder / _PREVIOUS_LINK)}
        found += [leftover for leftover in folder.glob(".focus-*") if leftover.name not in kept]
    return found


def _remove_leftovers(home: Path) -> None:
    for leftover in crash_leftovers(home):
        if leftover.is_symlink() or leftover.is_file():
            leftover.unlink(missing_ok=True)
        else:
            shutil.rmtree(leftover, ignore_errors=True)


def _fsync(path: Path) -> None:
    """Flush a file or folder to disk, so the rename never points at data a power cut could lose."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
