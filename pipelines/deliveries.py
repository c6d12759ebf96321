"""The nightly pipeline's steps, callable from Dagster assets and the command line alike."""

from __future__ import annotations

import datetime as dt
import functools
import logging
import multiprocessing
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import closing
from pathlib import Path

import duckdb

from connectors.aws import exports
from connectors.azure import exports as azure_exports
from connectors.gcp import exports as gcp_exports
from gpuledger.allocation.allocate import AllocationResult, allocate_month
from gpuledger.gates.contract import Outranked
from gpuledger.gates.load import (
    LoadResult,
    Part,
    PartStager,
    PlannedLoad,
    StagedPart,
    finish_load,
    plan_load,
    stage_part,
)
from gpuledger.gates.refusals import Refusal, replace_refusals
from gpuledger.normalize import gcp_billing
from gpuledger.normalize.detect import detect_format
from gpuledger.telemetry.ingest import TelemetryLoad, ingest_telemetry
from gpuledger.warehouse.home import connect_warehouse
from models.config import SourceConfig, load_config, load_warehouse_config
from models.delivery import Delivery
from models.errors import InputError, ReconciliationError
from models.formats import FORMATS, Layout

log = logging.getLogger(__name__)

_TABLE_SUFFIXES = (".csv", ".csv.gz", ".parquet")
# A folder of a configured source's files names its billing month: 2026-11, 202611, BILLING_PERIOD=2026-11,
# invoice_month=202611, or an Azure monthly range 20261101-20261130; else the file's name does (focus-2026-11.csv).
_MONTH_FOLDER = re.compile(r"^(?:[A-Za-z_]+=)?(\d{4})-?(0[1-9]|1[0-2])$")
_MONTH_RANGE_FOLDER = re.compile(r"^(\d{4})(0[1-9]|1[0-2])01-(\d{4})(\d{2})\d{2}$")
_MONTH_IN_NAME = re.compile(r"(?<!\d)(\d{4})-(0[1-9]|1[0-2])(?!\d)")


def discover(source: SourceConfig) -> list[Delivery]:
    """Complete deliveries of one configured source, newest manifest per billing period."""
    if not source.path.is_dir():
        if source.remote is not None:  # nothing synced yet: no delivery, not a mistake
            return []
        raise InputError(source.path, f"source {source.name!r}: export folder does not exist")
    layouts = FORMATS[source.format].layouts
    layout = next(layout for layout in layouts if layout == layouts[-1] or _LAID_OUT[layout](source.path))
    return _DISCOVER[layout](source)


def _discover_bigquery(source: SourceConfig) -> list[Delivery]:
    return gcp_exports.discover(source.path, source.format, source.name)


def _discover_azure_export(source: SourceConfig) -> list[Delivery]:
    return azure_exports.discover(source.path, source.format, source.name)


def _discover_cur1(source: SourceConfig) -> list[Delivery]:
    return exports.discover_cur1(source.path, source.name)


def _discover_data_export(source: SourceConfig) -> list[Delivery]:
    return exports.discover_data_export(source.path, source.format, source.name)


def _discover_azure_focus(source: SourceConfig) -> list[Delivery]:
    """Azure FocusCost exports (an export folder, or a folder of them): the newest complete run per month."""
    inner = [p for p in sorted(source.path.iterdir()) if p.is_dir() and azure_exports.looks_like_export(p)]
    deliveries = []
    for folder in inner or [source.path]:
        for run in azure_exports.newest_runs(folder).values():
            if run.dataset is not None:
                raise InputError(
                    run.manifest or folder,
                    f"export {folder.name!r} holds {run.dataset} cost details, but its source is azure-focus",
                    column="exportConfig.type",
                )
            deliveries.append(
                Delivery(
                    source_format=source.format,
                    files=run.files,
                    billing_period=run.billing_period,
                    version=run.run_id,
                    manifest=run.manifest,
                    source_name=source.name,
                    version_time=run.version_time,
                    root=source.path,
                )
            )
    return deliveries


def _discover_month_folders(source: SourceConfig) -> list[Delivery]:
    """One delivery per billing month of a folder of files: each month's files are one complete copy of it.

    A plain folder has no manifest to name a month, so its folders (or file names) must: the nightly run loads
    a month at a time, and the loader checks every row belongs to the month its delivery is for.
    """
    files = sorted(p for p in source.path.rglob("*") if p.is_file())
    if manifest := next((p for p in files if _is_manifest(p)), None):
        # An export's folders hold old and incomplete runs too: only its manifests say which files count.
        raise InputError(
            manifest,
            f"source {source.name!r}: a manifest in a folder that is not laid out as a {source.format} export;"
            " point the source's path at the export's own folder",
        )
    months: dict[str, list[Path]] = {}
    for file in (p for p in files if _is_data_file(p, source.format)):
        month = _month_of(file.relative_to(source.path))
        if month is None:
            raise InputError(
                file,
                f"source {source.name!r}: no billing month in the file's folders or name; keep each month's"
                " files in a folder named like 2026-11 (or BILLING_PERIOD=2026-11), or name the file so",
            )
        months.setdefault(month, []).append(file)
    return [
        Delivery(
            source_format=source.format,
            files=tuple(files),
            billing_period=month,
            source_name=source.name,
            version_time=max(dt.datetime.fromtimestamp(f.stat().st_mtime, dt.UTC) for f in files),
            root=source.path,
        )
        for month, files in sorted(months.items())
    ]


# How each layout (models.formats.Layout) is recognised in a folder, when a format may come in several, and found.
_LAID_OUT: dict[Layout, Callable[[Path], bool]] = {
    "data-export": exports.is_data_export,
    "azure-focus-export": azure_exports.looks_like_export,
}
_DISCOVER: dict[Layout, Callable[[SourceConfig], list[Delivery]]] = {
    "cur1": _discover_cur1,
    "data-export": _discover_data_export,
    "azure-cost-export": _discover_azure_export,
    "azure-focus-export": _discover_azure_focus,
    "bigquery": _discover_bigquery,
    "month-folders": _discover_month_folders,
}


def _month_of(relative: Path) -> str | None:
    """``YYYY-MM`` named by the innermost folder that names one, else by the file name."""
    for folder in reversed(relative.parent.parts):
        if match := _MONTH_FOLDER.match(folder):
            return f"{match.group(1)}-{match.group(2)}"
        if (match := _MONTH_RANGE_FOLDER.match(folder)) and match.group(1, 2) == match.group(3, 4):
            return f"{match.group(1)}-{match.group(2)}"
    match = _MONTH_IN_NAME.search(relative.name)
    return f"{match.group(1)}-{match.group(2)}" if match else None


def deliveries_for(home: Path, provider: str | None = None, month: str | None = None) -> list[Delivery]:
    """Every complete delivery of the configured sources, optionally for one provider and billing month."""
    found = []
    for source in load_config(home).sources:
        if provider and source.provider != provider:
            continue
        found.extend(d for d in discover(source) if month is None or d.billing_period == month)
    return found


def load_month(con: duckdb.DuckDBPyConnection, home: Path, provider: str, month: str) -> list[LoadResult]:
    """Load the newest delivery of every source for one (provider, billing month) partition; raise the first
    refusal."""
    planned, refused = plan_month(con, home, provider, month)
    loaded, refused_later = finish_month(con, home, (provider, month), planned, part_staging(home)[1])
    for refusal in (*refused, *refused_later):
        raise refusal.error or InputError(refusal.delivery, refusal.reason)
    return loaded


_REFUSALS = (InputError, ReconciliationError)
"""What a delivery's own content or place causes: it refuses that delivery, never the partition's others."""


def plan_month(
    con: duckdb.DuckDBPyConnection, home: Path, provider: str, month: str
) -> tuple[list[PlannedLoad], list[Refusal]]:
    """What loading the (provider, billing month) partition does, delivery by delivery (``plan_load``), and the
    deliveries (or sources' folders) refused already; these become the partition's standing refusals."""
    part_bytes, _ = part_staging(home)
    planned: list[PlannedLoad] = []
    refused: list[Refusal] = []
    for source in load_config(home).sources:
        if source.provider != provider:
            continue
        try:
            deliveries = [d for d in discover(source) if d.billing_period == month]
        except _REFUSALS as exc:
            refused.append(Refusal(source.name, str(source.path), str(exc), exc))
            continue
        for delivery in deliveries:
            try:
                planned.append(plan_load(con, delivery, part_bytes))
            except _REFUSALS as exc:
                refused.append(_refusal(delivery, exc))
    replace_refusals(con, provider, month, refused)
    return planned, refused


def finish_month(
    con: duckdb.DuckDBPyConnection,
    home: Path,
    partition: tuple[str, str],
    planned: Sequence[PlannedLoad],
    stager: PartStager | None,
) -> tuple[list[LoadResult], list[Refusal]]:
    """The (provider, billing month) ``partition``'s planned loads done in order (``finish_load``), their parts
    staged by ``stager``; a refused load is added to the partition's standing refusals and the next one goes on."""
    rules = load_config(home).ingest
    loaded: list[LoadResult] = []
    refused: list[Refusal] = []
    for load in planned:
        try:
            loaded.append(finish_load(con, load, rules, stager))
        except Outranked as exc:
            log.info("passed over: %s", exc)
        except _REFUSALS as exc:
            refused.append(_refusal(load.delivery, exc))
    if refused:
        replace_refusals(con, *partition, refused, keep=True)
    return loaded, refused


def _refusal(delivery: Delivery, exc: Exception) -> Refusal:
    where = delivery.manifest or (delivery.files[0] if delivery.files else delivery.root)
    return Refusal(delivery.source_name, str(where), str(exc), exc)


def part_staging(home: Path) -> tuple[int, PartStager | None]:
    """How a load in ``home`` stages a delivery's files: in parts of ``[warehouse] part_size_mb``, and on a lake
    with ``workers`` > 1 that many parts at once, each by a process of its own (None: in the loading process)."""
    warehouse = load_warehouse_config(home)
    stager = functools.partial(_stage_in_processes, home, warehouse.workers) if warehouse.workers > 1 else None
    return warehouse.part_size_mb * 1_000_000, stager


def _stage_in_processes(home: Path, workers: int, parts: Sequence[Part]) -> list[StagedPart]:
    # spawned, not forked: the loading process holds DuckDB connections and threads a fork would copy mid-state
    with ProcessPoolExecutor(min(workers, len(parts)), mp_context=multiprocessing.get_context("spawn")) as pool:
        return [staged.result() for staged in [pool.submit(stage_part_apart, home, part) for part in parts]]


def stage_part_apart(home: Path, part: Part) -> StagedPart:
    """Stage one part of a delivery on a connection of its own to ``home``'s warehouse (a process, a step)."""
    with closing(connect_warehouse(home)) as con:
        return stage_part(con, part)


def allocate(con: duckdb.DuckDBPyConnection, home: Path, month: str) -> tuple[list[TelemetryLoad], AllocationResult]:
    """Ingest the configured telemetry, then split billing month ``YYYY-MM`` and rebuild showback."""
    config = load_config(home)
    loads = ingest_telemetry(con, config.telemetry, config.allocation, month)
    return loads, allocate_month(con, config.allocation, month, config.reporting)


def deliveries_from_paths(con: duckdb.DuckDBPyConnection, paths: list[Path], fmt: str) -> list[Delivery]:
    """Deliveries in files or folders a user downloaded: export folders by their manifests, loose files as one."""
    deliveries: list[Delivery] = []
    loose: list[Path] = []
    for path in paths:
        if not path.exists():
            raise InputError(path, "no such file or folder")
        if path.is_dir():
            _refuse_other_layout(path, fmt)
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
            loose.extend(sorted(p for p in path.rglob("*") if p.is_file() and _is_data_file(p, fmt)))
    if loose:
        loose_format = fmt if fmt != "auto" else _single_format(con, loose)
        deliveries.append(Delivery(source_format=loose_format, files=tuple(loose)))
    return deliveries


# The export layouts a folder may have by its own marks (manifests, folder names), and what that looks like.
_AZURE_EXPORT: tuple[Layout, ...] = ("azure-cost-export", "azure-focus-export")  # same runs and manifests
_LOOKS_LIKE: dict[tuple[Layout, ...], str] = {
    ("cur1",): "an AWS CUR 1 report (period folders like 20261101-20261201 with <report>-Manifest.json)",
    ("data-export",): "an AWS Data Export (data/BILLING_PERIOD=YYYY-MM/ with metadata/ manifests)",
    _AZURE_EXPORT: "an Azure Cost Management export (date-range folders with run manifests)",
    ("bigquery",): "a BigQuery billing export extract (invoice_month=YYYYMM/export_time=... folders)",
}


def _refuse_other_layout(folder: Path, fmt: str) -> None:
    """An explicit ``fmt`` whose deliveries never come laid out as ``folder`` is: refused, saying what it looks like,
    instead of reading one export's files as another's (CUR 2.0 files relabelled as CUR 1)."""
    layouts = () if fmt == "auto" else _export_layouts(folder, fmt)
    if not layouts or set(layouts) & set(FORMATS[fmt].layouts):
        return
    fitting = [name for name, f in FORMATS.items() if set(layouts) & set(f.layouts)]
    raise InputError(
        folder,
        f"looks like {_LOOKS_LIKE[layouts]}, which is no {fmt} delivery; pass --format"
        f" {' or '.join([', '.join(fitting[:-1]), fitting[-1]] if len(fitting) > 1 else fitting)}, or leave it out",
    )


def _export_layouts(folder: Path, fmt: str) -> tuple[Layout, ...]:
    """The export layouts ``folder`` may have; none for loose files and month folders. Only an Azure export without
    manifests looks like a CUR 1 report: an Azure ``fmt`` takes it as Azure's, as discovery does."""
    if _is_azure_export(folder, fmt) or (
        azure_exports.looks_like_export(folder) and azure_exports.has_azure_manifest(folder)
    ):
        return _AZURE_EXPORT
    if exports.is_cur1_report(folder):
        return ("cur1",)
    if gcp_exports.is_table(folder) or gcp_exports.is_dataset(folder):
        return ("bigquery",)
    if exports.is_data_export(folder):
        return ("data-export",)
    return ()


def _is_azure_export(path: Path, fmt: str) -> bool:
    """Azure export folders also hold date-range folders like CUR 1 reports: the format, or a manifest, decides."""
    if not azure_exports.looks_like_export(path):
        return False
    if fmt == "auto":
        return azure_exports.has_azure_manifest(path)
    return "azure-cost-export" in FORMATS[fmt].layouts


def _is_data_file(path: Path, fmt: str) -> bool:
    """CSV and Parquet; newline-delimited JSON too where ``fmt`` may read it, but never a manifest."""
    name = path.name.lower()
    if name.endswith(_TABLE_SUFFIXES):
        return True
    # ``auto`` tells BigQuery's JSON extracts by their keys
    reads_json = fmt == "auto" or FORMATS[fmt].newline_json
    return reads_json and gcp_billing.is_json_file(path) and not _is_manifest(path)


def _is_manifest(path: Path) -> bool:
    """manifest.json, _manifest.json (Azure), <report>-Manifest.json (AWS)."""
    return path.name.lower().endswith("manifest.json")


def _data_export_format(con: duckdb.DuckDBPyConnection, folder: Path) -> str:
    files = sorted(p for p in (folder / "data").rglob("*") if p.is_file() and _is_data_file(p, "aws-cur2"))
    if not files:
        raise InputError(folder, "export folder has no data files to tell its format from; pass --format")
    return detect_format(con, files[0])


def _single_format(con: duckdb.DuckDBPyConnection, files: list[Path]) -> str:
    formats = {detect_format(con, f) for f in files}
    if len(formats) > 1:
        raise InputError(files[0], f"files of different formats ({', '.join(sorted(formats))}); import them separately")
    return formats.pop()
