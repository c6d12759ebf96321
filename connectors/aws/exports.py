"""Find complete AWS export deliveries in a folder laid out exactly like the export bucket.

Legacy CUR 1 (CREATE_NEW_REPORT or OVERWRITE_REPORT)::

    <prefix>/<report>/<yyyymmdd>-<yyyymmdd>/<report>-Manifest.json   (names the current assemblyId)
    <prefix>/<report>/<yyyymmdd>-<yyyymmdd>/[<assemblyId>/]<report>-<n>.csv.gz

CUR 2.0 and FOCUS Data Exports (overwrite or create-new-version)::

    <prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json
    <prefix>/<export>/data/BILLING_PERIOD=YYYY-MM/[<executionId>/]<export>-<n>.{snappy.parquet,csv.gz}

Only the files the period's manifest lists count; a data folder without a manifest is not a
delivery yet (the manifest is written after the data). Keys that point outside the export folder
are rejected.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from pathlib import Path, PurePosixPath
from typing import Any

from models.delivery import Delivery
from models.errors import InputError

log = logging.getLogger(__name__)

CUR1_RANGE_FOLDER = re.compile(r"^(\d{4})(\d{2})01-\d{8}$")
BILLING_PERIOD_FOLDER = re.compile(r"^BILLING_PERIOD=(\d{4}-\d{2})$")
# CUR 1 manifests state the period as {"start": "20261101T000000.000Z", ...}; Data Exports as "2026-11" (or so).
_MANIFEST_PERIOD = re.compile(r"^(\d{4})-?(\d{2})")


def is_cur1_report(folder: Path) -> bool:
    return any(CUR1_RANGE_FOLDER.match(p.name) for p in folder.iterdir() if p.is_dir())


def is_data_export(folder: Path) -> bool:
    return (folder / "metadata").is_dir() or (folder / "data").is_dir()


def discover_cur1(report_folder: Path, source_name: str | None = None) -> list[Delivery]:
    """One delivery per billing-period folder that has its manifest."""
    report = report_folder.name
    deliveries = []
    for period_folder in sorted(p for p in report_folder.iterdir() if p.is_dir()):
        match = CUR1_RANGE_FOLDER.match(period_folder.name)
        if not match:
            continue
        manifest_path = period_folder / f"{report}-Manifest.json"
        if not manifest_path.is_file():
            log.info("%s: no manifest yet, not a delivery", period_folder)
            continue
        manifest = _read_manifest(manifest_path)
        period = f"{match.group(1)}-{match.group(2)}"
        _require_manifest_period(manifest_path, manifest, period)
        keys = _field(manifest_path, manifest, "reportKeys", list)
        files = tuple(_key_to_local(manifest_path, period_folder, key, anchor=period_folder.name) for key in keys)
        bucket = _optional_str(manifest.get("bucket"))
        deliveries.append(
            Delivery(
                source_format="aws-cur1",
                files=files,
                billing_period=period,
                billing_account_id=_optional_str(manifest.get("account")),
                version=_optional_str(manifest.get("assemblyId")),
                manifest=manifest_path,
                source_name=source_name or report,
                version_time=_modified(manifest_path),
                origin=f"s3://{bucket}" if bucket else None,
                root=report_folder,
            )
        )
    return deliveries


def discover_data_export(export_folder: Path, source_format: str, source_name: str | None = None) -> list[Delivery]:
    """One delivery per ``BILLING_PERIOD=`` whose metadata folder holds the export's manifest."""
    export = export_folder.name
    metadata = export_folder / "metadata"
    deliveries = []
    for period_folder in sorted(p for p in metadata.iterdir() if p.is_dir()) if metadata.is_dir() else []:
        match = BILLING_PERIOD_FOLDER.match(period_folder.name)
        if not match:
            continue
        manifest_path = period_folder / f"{export}-Manifest.json"
        if not manifest_path.is_file():
            continue
        manifest = _read_manifest(manifest_path)
        period = match.group(1)
        _require_manifest_period(manifest_path, manifest, period)
        keys = _field(manifest_path, manifest, "dataFiles", list)
        data_root = export_folder / "data"
        files = tuple(
            _key_to_local(manifest_path, data_root, key, anchor="data", period_folder=f"BILLING_PERIOD={period}")
            for key in keys
        )
        deliveries.append(
            Delivery(
                source_format=source_format,
                files=files,
                billing_period=period,
                billing_account_id=_account_from_arn(manifest.get("exportArn")),
                version=_optional_str(manifest.get("executionId")),
                manifest=manifest_path,
                source_name=source_name or export,
                version_time=_modified(manifest_path),
                origin=_single_bucket(manifest_path, keys),
                root=export_folder,
            )
        )
    _log_unmanifested_periods(export_folder, {d.billing_period for d in deliveries})
    return deliveries


def _log_unmanifested_periods(export_folder: Path, delivered: set[str | None]) -> None:
    data = export_folder / "data"
    for period_folder in sorted(data.iterdir()) if data.is_dir() else []:
        match = BILLING_PERIOD_FOLDER.match(period_folder.name)
        if match and match.group(1) not in delivered:
            log.info("%s: data without a manifest, not a delivery yet", period_folder)


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, f"unreadable manifest: {exc}") from exc
    if not isinstance(manifest, dict):
        raise InputError(path, "manifest is not a JSON object")
    return manifest


def _field(path: Path, manifest: dict[str, Any], name: str, kind: type) -> Any:
    value = manifest.get(name)
    if not isinstance(value, kind):
        raise InputError(path, f"manifest field {name!r} missing or not a {kind.__name__}", column=name)
    return value


def _modified(path: Path) -> dt.datetime:
    """AWS manifests carry no time: their modification time (S3's LastModified, kept by the sync) orders them."""
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC)


def _require_manifest_period(path: Path, manifest: dict[str, Any], period: str) -> None:
    """A manifest stating another billing period than its folder's would deliver one month as another."""
    stated = manifest.get("billingPeriod")
    if isinstance(stated, dict):
        stated = stated.get("start")
    if stated is None:
        return
    match = _MANIFEST_PERIOD.match(str(stated))
    if not match or f"{match.group(1)}-{match.group(2)}" != period:
        message = f"the manifest states billing period {stated!r}, but it is the manifest of {period}"
        raise InputError(path, message, column="billingPeriod")


def _single_bucket(path: Path, keys: list[Any]) -> str | None:
    """``s3://<bucket>`` the data files' URIs name; one delivery comes from one bucket."""
    buckets = {str(k).removeprefix("s3://").split("/", 1)[0] for k in keys if str(k).startswith("s3://")}
    if len(buckets) > 1:
        names = ", ".join(sorted(buckets))
        raise InputError(path, f"the manifest lists files in several buckets ({names})", column="dataFiles")
    return f"s3://{buckets.pop()}" if buckets else None


def _optional_str(value: object) -> str | None:
    return str(value) if value not in (None, "") else None


def _account_from_arn(arn: object) -> str | None:
    # arn:aws:bcm-data-exports:us-east-1:<account>:export/<name>
    parts = str(arn).split(":") if arn else []
    return parts[4] if len(parts) > 5 and parts[4] else None


def _key_to_local(
    manifest_path: Path, local_anchor: Path, key: object, *, anchor: str, period_folder: str | None = None
) -> Path:
    """Map an S3 key or URI to the local mirror, refusing keys outside the export folder (or its period's data)."""
    if not isinstance(key, str) or not key:
        raise InputError(manifest_path, f"manifest lists an invalid key {key!r}")
    path = PurePosixPath(re.sub(r"^s3://[^/]+/", "", key))
    parts = path.parts
    if ".." in parts or path.is_absolute() or anchor not in parts:
        raise InputError(manifest_path, f"manifest key {key!r} points outside the export folder")
    relative = parts[parts.index(anchor) + 1 :]
    if not relative:
        raise InputError(manifest_path, f"manifest key {key!r} names a folder, not a file")
    if period_folder is not None and relative[0] != period_folder:
        message = f"manifest key {key!r} is outside this period's data folder {period_folder}"
        raise InputError(manifest_path, message, column="dataFiles")
    local = local_anchor.joinpath(*relative)
    if not local.is_file():
        raise InputError(manifest_path, f"manifest lists {key!r}, which does not exist at {local}")
    return local
