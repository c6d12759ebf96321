"""The nightly pipeline's steps, callable from Dagster assets and the command line alike."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from connectors.aws import exports
from connectors.azure import exports as azure_exports
from connectors.gcp import exports as gcp_exports
from gpuledger.allocate import AllocationResult, allocate_month
from gpuledger.detect import detect_format
from gpuledger.errors import InputError
from gpuledger.load import LoadResult, load_delivery
from gpuledger.telemetry import TelemetryLoad, ingest_telemetry
from gpuledger.warehouse import WAREHOUSE_FILE, connect, ensure_schema
from models.config import SourceConfig, load_config
from models.delivery import Delivery

DEFAULT_HOME = Path.home() / ".local" / "share" / "gpuledger"


def resolve_home(home: str | Path | None) -> Path:
    """``--home``, else ``$GPULEDGER_HOME``, else ``~/.local/share/gpuledger``."""
    chosen = home or os.environ.get("GPULEDGER_HOME") or DEFAULT_HOME
    return Path(chosen).expanduser().resolve()


def open_warehouse(home: Path) -> duckdb.DuckDBPyConnection:
    con = connect(home / WAREHOUSE_FILE)
    ensure_schema(con)
    return con


def discover(source: SourceConfig) -> list[Delivery]:
    """Complete deliveries of one configured source, newest manifest per billing period."""
    if not source.path.is_dir():
        raise InputError(source.path, f"source {source.name!r}: export folder does not exist")
    if source.format.startswith("gcp-"):
        return gcp_exports.discover(source.path, source.format, source.name)
    if source.format in azure_exports.FORMATS:
        return azure_exports.discover(source.path, source.format, source.name)
    if source.format == "aws-cur1":
        return exports.discover_cur1(source.path, source.name)
    return exports.discover_data_export(source.path, source.format, source.name)


def deliveries_for(home: Path, provider: str | None = None, month: str | None = None) -> list[Delivery]:
    """Every complete delivery of the configured sources, optionally for one provider and billing month."""
    found = []
    for source in load_config(home).sources:
        if provider and source.provider != provider:
            continue
        found.extend(d for d in discover(source) if month is None or d.billing_period == month)
    return found


def load_month(con: duckdb.DuckDBPyConnection, home: Path, provider: str, month: str) -> list[LoadResult]:
    """Load the newest delivery of every source for one (provider, billing month) partition."""
    return [load_delivery(con, delivery) for delivery in deliveries_for(home, provider, month)]


def allocate(con: duckdb.DuckDBPyConnection, home: Path, month: str) -> tuple[list[TelemetryLoad], AllocationResult]:
    """Ingest the configured telemetry, then split billing month ``YYYY-MM`` and rebuild showback."""
    config = load_config(home)
    loads = ingest_telemetry(con, config.telemetry, config.allocation, month)
    return loads, allocate_month(con, config.allocation, month, config.reporting)


def billing_months(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Billing months with published FOCUS rows, oldest first."""
    rows = con.execute("SELECT DISTINCT strftime(BillingPeriodStart, '%Y-%m') FROM focus.costs ORDER BY 1").fetchall()
    return [row[0] for row in rows]


def deliveries_from_paths(con: duckdb.DuckDBPyConnection, paths: list[Path], fmt: str) -> list[Delivery]:
    """Deliveries in files or folders a user downloaded: export folders by their manifests, loose files as one."""
    deliveries: list[Delivery] = []
    loose: list[Path] = []
    for path in paths:
        if not path.exists():
            raise InputError(path, "no such file or folder")
        if path.is_file():
            loose.append(path)
        elif _is_azure_export(path, fmt):
            azure_format = fmt if fmt != "auto" else detect_format(con, azure_exports.first_data_file(path))
            deliveries.extend(azure_exports.discover(path, azure_format))
        elif exports.is_cur1_report(path):
            deliveries.extend(exports.discover_cur1(path))
        elif gcp_exports.is_table(path) or gcp_exports.is_dataset(path):
            deliveries.extend(gcp_exports.discover(path, fmt if fmt != "auto" else "gcp-bq"))
        elif exports.is_data_export(path):
            export_format = fmt if fmt != "auto" else _data_export_format(con, path)
            deliveries.extend(exports.discover_data_export(path, export_format))
        else:
            loose.extend(sorted(p for p in path.rglob("*") if p.is_file() and _is_data_file(p)))
    if loose:
        loose_format = fmt if fmt != "auto" else _single_format(con, loose)
        deliveries.append(Delivery(source_format=loose_format, files=tuple(loose)))
    return deliveries


def _is_azure_export(path: Path, fmt: str) -> bool:
    """Azure export folders also hold date-range folders like CUR 1 reports: the format, or a manifest, decides."""
    if not azure_exports.looks_like_export(path):
        return False
    return fmt in azure_exports.FORMATS or (fmt == "auto" and azure_exports.has_azure_manifest(path))


def _is_data_file(path: Path) -> bool:
    return path.name.lower().endswith((".csv", ".csv.gz", ".parquet"))


def _data_export_format(con: duckdb.DuckDBPyConnection, folder: Path) -> str:
    files = sorted(p for p in (folder / "data").rglob("*") if p.is_file() and _is_data_file(p))
    if not files:
        raise InputError(folder, "export folder has no data files to tell its format from; pass --format")
    return detect_format(con, files[0])


def _single_format(con: duckdb.DuckDBPyConnection, files: list[Path]) -> str:
    formats = {detect_format(con, f) for f in files}
    if len(formats) > 1:
        raise InputError(files[0], f"files of different formats ({', '.join(sorted(formats))}); import them separately")
    return formats.pop()
