"""Find complete GCP billing deliveries in a local folder of BigQuery extracts (docs/decisions/0007).

Layout (one folder per BigQuery table, one sub-folder per invoice month, one per extract of it)::

    <dataset>/<table>/invoice_month=YYYYMM/export_time=<ISO 8601 UTC>/part-*.{parquet,json,jsonl}[.gz]

``<table>`` is the export table's name (``gcp_billing_export_resource_v1_<ACCOUNT>``, ``..._v1_...`` or
``gcp_billing_export_focus_...``; the account's hyphens are underscores); ``YYYYMM`` may also stand alone.
BigQuery's export table is append-only: each ``export_time=<T>`` folder holds the rows appended since the
month's previous folder (``WHERE invoice.month = @month AND export_time > @previous AND export_time <= @T``),
named by their ``max(export_time)``; the extraction job writes it under another name (any name not starting
with ``export_time=``, e.g. ``_writing-...``) and renames it when complete. A month's delivery is the union
of all its folders, versioned by the newest: when Google appends rows (late usage, corrections), a new
folder appears, the version changes, and the loader replaces the whole (ProviderName, billing account,
invoice month) slice with the union. Every record carries its own ``export_time``: one that several extracts
hold (a repeated or a full re-extract) counts once (gpuledger/normalize/gcp_billing.py), and re-importing
changes nothing. Usage-day partitions are
refused: a usage day's rows belong to two invoice months, and a slice must be delivered whole. When a
dataset holds both the standard and the detailed table of one account, only the detailed one is read
(same costs; loading both would make them take each other's slices over).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from pathlib import Path

from models.delivery import Delivery
from models.errors import InputError

log = logging.getLogger(__name__)

EXPORT_TABLE_NAME = re.compile(
    r"^gcp_billing_export_(?P<kind>resource_v1|v1|focus)_(?P<account>[0-9A-Za-z]{6}_[0-9A-Za-z]{6}_[0-9A-Za-z]{6})$"
)
_MONTH = re.compile(r"^(?:invoice_month=)?(?P<year>\d{4})(?P<month>0[1-9]|1[0-2])$")
_USAGE_DAY = re.compile(r"^(?:[a-z_]+=)?\d{4}-?\d{2}-?\d{2}$")
EXPORT_TIME_PREFIX = "export_time="
"""An extract's folder: ``export_time=<the newest export_time of its records>``."""
_EXPORT_TIME = re.compile(rf"^{EXPORT_TIME_PREFIX}(?P<time>.+)$")
_DATA_SUFFIXES = (".parquet", ".json", ".jsonl", ".ndjson", ".json.gz", ".jsonl.gz", ".ndjson.gz")
# Standard and detailed tables hold the same money; the detailed one (with resources) wins when both exist.
_TABLE_KIND_FORMAT = {"resource_v1": "gcp-bq", "v1": "gcp-bq", "focus": "gcp-focus"}


def is_table(folder: Path) -> bool:
    """A folder laid out as one exported table: invoice-month folders holding ``export_time=`` folders."""
    if not folder.is_dir():
        return False
    months = [p for p in folder.iterdir() if p.is_dir() and _MONTH.match(p.name)]
    return any(e.is_dir() and e.name.startswith("export_time=") for month in months for e in month.iterdir())


def is_dataset(folder: Path) -> bool:
    return folder.is_dir() and any(EXPORT_TABLE_NAME.match(p.name) and is_table(p) for p in folder.iterdir())


def discover(folder: Path, source_format: str, source_name: str | None = None) -> list[Delivery]:
    """One delivery per invoice month of the table ``folder``, or of each matching table in a dataset."""
    if is_table(folder) or EXPORT_TABLE_NAME.match(folder.name):
        return discover_table(folder, source_format, source_name)
    tables = _tables_for(folder, source_format)
    return [d for table in tables for d in discover_table(table, source_format, source_name)]


def _tables_for(dataset: Path, source_format: str) -> list[Path]:
    by_account: dict[str, dict[str, Path]] = {}
    for table in sorted(p for p in dataset.iterdir() if p.is_dir()):
        match = EXPORT_TABLE_NAME.match(table.name)
        if not match or not is_table(table) or _TABLE_KIND_FORMAT[match["kind"]] != source_format:
            continue
        by_account.setdefault(match["account"], {})[match["kind"]] = table
    chosen = []
    for kinds in by_account.values():
        if "resource_v1" in kinds and "v1" in kinds:
            log.info("%s: the detailed table %s holds the same costs; using it", kinds["v1"], kinds["resource_v1"].name)
            del kinds["v1"]
        chosen.extend(kinds.values())
    return sorted(chosen)


def discover_table(table: Path, source_format: str, source_name: str | None = None) -> list[Delivery]:
    """One delivery per invoice-month folder: the union of its ``export_time=`` extracts, versioned by the newest."""
    account = billing_account_from_table(table.name)
    deliveries = []
    for month_folder in sorted(p for p in table.iterdir() if p.is_dir()):
        month = _MONTH.match(month_folder.name)
        if month is None:
            if _USAGE_DAY.match(month_folder.name):
                raise InputError(
                    month_folder,
                    "usage-day partitions cannot be delivered as whole invoice months;"
                    " extract one folder per invoice.month (invoice_month=YYYYMM)",
                )
            log.info("%s: not an invoice-month folder, ignored", month_folder)
            continue
        newest = _month_extracts(month_folder)
        if newest is None:
            log.info("%s: no complete extract yet, not a delivery", month_folder)
            continue
        export_time, files = newest
        deliveries.append(
            Delivery(
                source_format=source_format,
                files=files,
                billing_period=f"{month['year']}-{month['month']}",
                billing_account_id=account,
                version=export_time.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                source_name=source_name or table.name,
                version_time=export_time,
                root=table,
            )
        )
    return deliveries


def extract_of(file: Path) -> str:
    """The extract a data file belongs to (its ``export_time=`` folder; '' for a loose file): a month's delivery
    is the union of its extracts, which may repeat each other's records."""
    return next((str(p) for p in file.parents if p.name.startswith(EXPORT_TIME_PREFIX)), "")


def billing_account_from_table(name: str) -> str | None:
    """``gcp_billing_export_v1_01A2B3_C4D5E6_F7A8B9`` -> ``01A2B3-C4D5E6-F7A8B9``; None for other names."""
    match = EXPORT_TABLE_NAME.match(name)
    return match["account"].replace("_", "-").upper() if match else None


def _month_extracts(month_folder: Path) -> tuple[dt.datetime, tuple[Path, ...]] | None:
    """The newest export time and the data files of every complete extract of the month, oldest first."""
    extracts = []
    for folder in month_folder.iterdir():
        match = _EXPORT_TIME.match(folder.name)
        if folder.is_dir() and match is not None:
            extracts.append((_export_time(folder, match["time"]), folder))
    files: list[Path] = []
    for _, folder in sorted(extracts):
        found = sorted(p for p in folder.rglob("*") if p.is_file() and _is_data_file(p))
        if not found:
            log.info("%s: extract without data files", folder)
        files.extend(found)
    return (max(t for t, _ in extracts), tuple(files)) if files else None


def _export_time(folder: Path, text: str) -> dt.datetime:
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise InputError(folder, f"export_time {text!r} is not an ISO 8601 timestamp") from exc
    # BigQuery's export_time is UTC; a folder name without a zone means UTC
    return parsed.replace(tzinfo=dt.UTC) if parsed.tzinfo is None else parsed.astimezone(dt.UTC)


def _is_data_file(path: Path) -> bool:
    name = path.name.lower()
    return not name.startswith(("_", ".")) and name.endswith(_DATA_SUFFIXES)
