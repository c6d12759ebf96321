"""Find complete Azure Cost Management export runs in a folder laid out exactly like the storage container.

Improved exports (``manifest.json``, written last) and legacy partitioned exports (``_manifest.json``)::

    <directory>/<export name>/<YYYYMMDD-YYYYMMDD>/[<yyyyMMddHHmm>/]<run id>/manifest.json
    <directory>/<export name>/<YYYYMMDD-YYYYMMDD>/[<yyyyMMddHHmm>/]<run id>/part_<n>_<nnnn>.{csv.gz,csv,snappy.parquet}

Legacy exports without a manifest write one file per run into the range folder; the newest file wins::

    <directory>/<export name>/<YYYYMMDD-YYYYMMDD>/<export name>_<guid>.csv

Each refresh writes a complete new copy of the period, so only the newest complete run of a period
counts; its files are the ones its manifest lists (never path guesses), and a run folder without a
manifest is not a delivery yet. An actual and an amortized export are paired by name (docs/decisions/0006).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlparse

from models.delivery import Delivery
from models.errors import InputError
from models.formats import FORMATS

log = logging.getLogger(__name__)

# One export per delivery, or (a format that combines two) a pair read side by side: registered in models.formats.
SINGLE_FORMATS = tuple(n for n, f in FORMATS.items() if f.layouts == ("azure-cost-export",) and not f.combines)
COMBINED_FORMAT = next(n for n, f in FORMATS.items() if f.combines)
MANIFEST_NAMES = ("manifest.json", "_manifest.json")

_RANGE = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{4})(\d{2})(\d{2})$")
_RUN_TIME = re.compile(r"^\d{12}$")
_MAX_MANIFEST_DEPTH = 2  # runs sit at most two levels below the range: [<run time>/]<run id>/
_DATA_SUFFIXES = (".csv", ".csv.gz", ".parquet")
_FAILED_STATUSES = {"failed", "timeout", "datanotavailable", "newdatanotavailable", "queued", "inprogress"}
# exportConfig.type (improved) / exportType (legacy) -> dataset; "Usage" is the legacy name of actual cost.
_EXPORT_TYPES = {"actualcost": "actual", "usage": "actual", "amortizedcost": "amortized"}
_DATASET_TOKEN = re.compile(r"amortized|actual", re.IGNORECASE)


@dataclass(frozen=True)
class ExportRun:
    """The files of one complete export run for one date range."""

    range_folder: Path
    files: tuple[Path, ...]
    run_id: str
    order_key: tuple[str, str, float]
    """(manifest submittedTime, run-time folder, manifest mtime): the largest is the newest run."""
    manifest: Path | None = None
    dataset: str | None = None
    """``actual`` or ``amortized`` as the manifest says; None when it does not say."""
    scope: str | None = None
    """Scope the export runs at (from exportConfig.resourceId), lower-case."""
    billing_account_id: str | None = None
    """The BillingAccountId of every row the scope's export holds, as the manifest spells it (see RunManifest)."""

    @property
    def billing_period(self) -> str | None:
        return period_of_range(self.range_folder.name)

    @property
    def version_time(self) -> dt.datetime:
        """When Azure made the run: its submittedTime, else its run-time folder, else the manifest's mtime."""
        submitted, run_time, modified = self.order_key
        try:
            if submitted:
                parsed = dt.datetime.fromisoformat(submitted.replace("Z", "+00:00"))
                return parsed.replace(tzinfo=dt.UTC) if parsed.tzinfo is None else parsed.astimezone(dt.UTC)
            if run_time:
                return dt.datetime.strptime(run_time, "%Y%m%d%H%M").replace(tzinfo=dt.UTC)
        except ValueError:
            pass  # a malformed time orders by the file's own
        return dt.datetime.fromtimestamp(modified, dt.UTC)


@dataclass(frozen=True)
class ManifestBlob:
    """One data part a manifest lists: its blob name (or URL) as written, and its size where stated."""

    name: str
    byte_count: int | None


@dataclass(frozen=True)
class RunManifest:
    """What a complete run's manifest says, whether it is a local file or a blob (connectors/azure/sync.py)."""

    run_id: str
    order_key: tuple[str, str, float]
    """(runInfo.submittedTime, run-time folder, manifest modification time): the largest is the newest run."""
    blobs: tuple[ManifestBlob, ...]
    dataset: str | None
    scope: str | None
    billing_account_id: str | None
    """The BillingAccountId every row of an export at its scope carries: an EA enrollment's number, an MCA billing
    profile's id; None for a scope of several (so an empty run still names the slice it empties)."""
    rows: int | None
    """dataRowCount where the manifest states it."""


def looks_like_export(folder: Path) -> bool:
    """An export folder (date-range folders below it) or a folder of export folders."""
    return _is_export_folder(folder) or any(_is_export_folder(p) for p in _subfolders(folder))


def has_azure_manifest(folder: Path) -> bool:
    """Some run below ``folder`` has an Azure manifest: tells Azure exports from CUR 1 reports (both use ranges)."""
    return any(next(folder.rglob(name), None) is not None for name in MANIFEST_NAMES)


def first_data_file(folder: Path) -> Path:
    """Any data file of the export(s) below ``folder``, to tell the schema from."""
    found = next((p for p in sorted(folder.rglob("*")) if p.is_file() and _is_data_file(p)), None)
    if found is None:
        raise InputError(folder, "export folder has no data files to tell its format from; pass --format")
    return found


def discover(folder: Path, source_format: str, source_name: str | None = None) -> list[Delivery]:
    """Deliveries of an export folder (single formats) or of a folder of paired exports (``azure-cost-details``)."""
    if source_format == COMBINED_FORMAT:
        return discover_cost_details(folder, source_name)
    return discover_export(folder, source_format, source_name)


def discover_export(export_folder: Path, source_format: str, source_name: str | None = None) -> list[Delivery]:
    """One delivery per date range: its newest complete run."""
    if source_format not in SINGLE_FORMATS:
        raise InputError(export_folder, f"not an Azure export format: {source_format}")
    expected = "amortized" if FORMATS[source_format].cost_metric == "AmortizedCost" else "actual"
    deliveries = []
    for run in newest_runs(export_folder).values():
        if run.dataset is not None and run.dataset != expected:
            raise InputError(
                run.manifest or export_folder,
                f"export {export_folder.name!r} holds {run.dataset} cost, but its source is {source_format}",
                column="exportConfig.type",
            )
        deliveries.append(_delivery(source_format, (run,), source_name or export_folder.name, export_folder))
    return deliveries


def discover_cost_details(directory: Path, source_name: str | None = None) -> list[Delivery]:
    """One ``azure-cost-details`` delivery per date range that both exports of a pair have delivered.

    Exports pair by name: the same name apart from an ``actual`` / ``amortized`` token
    (``gpu-actual`` + ``gpu-amortized``, ``ActualCost-ea`` + ``AmortizedCost-ea``).
    """
    pairs: dict[str, dict[str, Path]] = {}
    for folder in (p for p in _subfolders(directory) if _is_export_folder(p)):
        dataset = _dataset_of_export(folder)
        stem = _DATASET_TOKEN.sub("", folder.name).lower()
        if dataset is None:
            log.info("%s: cannot tell actual from amortized (name or manifest), skipped", folder)
            continue
        if dataset in pairs.setdefault(stem, {}):
            raise InputError(folder, f"two {dataset} exports pair as {stem!r}: {pairs[stem][dataset].name}")
        pairs[stem][dataset] = folder
    deliveries = []
    for stem, folders in sorted(pairs.items()):
        if set(folders) != {"actual", "amortized"}:
            log.info("%s: no %s export to pair with, skipped", directory / stem, "actual or amortized")
            continue
        actual_runs, amortized_runs = newest_runs(folders["actual"]), newest_runs(folders["amortized"])
        for range_name in sorted(actual_runs.keys() | amortized_runs.keys()):
            actual, amortized = actual_runs.get(range_name), amortized_runs.get(range_name)
            if actual is None or amortized is None:
                log.info("%s: only one of the paired exports has delivered, not a delivery yet", range_name)
                continue
            if actual.scope and amortized.scope and actual.scope != amortized.scope:
                raise InputError(
                    amortized.manifest or folders["amortized"],
                    f"paired exports cover different scopes: {actual.scope} and {amortized.scope}",
                    column="exportConfig.resourceId",
                )
            name = source_name or stem.strip("-_ ")
            deliveries.append(_delivery(COMBINED_FORMAT, (actual, amortized), name, directory))
    return deliveries


def newest_runs(export_folder: Path) -> dict[str, ExportRun]:
    """Date-range folder name -> the newest complete run in it."""
    runs: dict[str, ExportRun] = {}
    for range_folder in (p for p in _subfolders(export_folder) if _RANGE.match(p.name)):
        if period_of_range(range_folder.name) is None:
            # A custom range would replace a whole month's slice with part of it.
            log.warning("%s: not a monthly range (starts on the 1st, ends in the same month), skipped", range_folder)
            continue
        manifests = _manifests(range_folder)
        candidates = [_manifest_run(range_folder, m) for m in manifests]
        complete = [run for run in candidates if run is not None]
        if not candidates:
            complete = _unmanifested_runs(range_folder)
        for pending in _runs_without_manifest(range_folder, manifests):
            log.info("%s: a run without its manifest (still being written?), not a delivery yet", pending)
        if not complete:
            log.info("%s: no complete run yet, not a delivery", range_folder)
            continue
        runs[range_folder.name] = max(complete, key=lambda run: run.order_key)
    return runs


def dataset_of_file(file: Path) -> str:
    """``actual`` or ``amortized`` for one data file: its run's manifest says, else its export's name."""
    for folder in list(file.parents)[:4]:
        for name in MANIFEST_NAMES:
            manifest = folder / name
            if manifest.is_file() and (dataset := _manifest_dataset(read_manifest(manifest))):
                return dataset
    # the file's name, then its run, run-time, range and export folder names
    for part in (file.name, *(p.name for p in list(file.parents)[:4])):
        if dataset := _dataset_of_name(part):
            return dataset
    raise InputError(
        file,
        "cannot tell whether this file holds actual or amortized cost: no manifest says so and no folder or file"
        " name contains 'actual' or 'amortized'",
    )


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"unreadable manifest: {exc}") from exc
    return parse_manifest(data, path)


def parse_manifest(data: bytes, where: Path | str) -> dict[str, Any]:
    """A manifest's JSON object (a BOM is allowed); ``where`` names it in errors."""
    try:
        manifest = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(where, f"unreadable manifest: {exc}") from exc
    if not isinstance(manifest, dict):
        raise InputError(where, "manifest is not a JSON object")
    return manifest


def run_manifest(
    manifest: dict[str, Any], where: Path | str, relative: PurePosixPath, modified: float
) -> RunManifest | None:
    """The run a manifest describes, or None when its status says it did not complete.

    ``relative`` is the manifest's path below its date-range folder (``[<run time>/]<run id>/manifest.json``),
    ``modified`` its modification time (POSIX seconds): both break ties between runs.
    """
    run_info = _object(manifest.get("runInfo"))
    status = str(run_info.get("status") or manifest.get("status") or "").lower()
    if status in _FAILED_STATUSES:
        log.info("%s: run status %s, skipped", where, status)
        return None
    blobs = manifest.get("blobs")
    if not isinstance(blobs, list):
        raise InputError(where, "manifest field 'blobs' missing or not a list", column="blobs")
    run_time = next((p.name for p in relative.parents if _RUN_TIME.match(p.name)), "")
    return RunManifest(
        run_id=str(run_info.get("runId") or relative.parent.name),
        order_key=(str(run_info.get("submittedTime") or ""), run_time, modified),
        blobs=tuple(_manifest_blob(where, blob) for blob in blobs),
        dataset=_manifest_dataset(manifest),
        scope=_scope(_object(manifest.get("exportConfig")).get("resourceId")),
        billing_account_id=_billing_account(_object(manifest.get("exportConfig")).get("resourceId")),
        rows=rows if isinstance(rows := manifest.get("dataRowCount"), int) else None,
    )


def is_run_manifest(relative: PurePosixPath) -> bool:
    """``relative`` (below a date-range folder) is where a run's manifest sits: ``[<run time>/]<run id>/<manifest>``."""
    return relative.name in MANIFEST_NAMES and len(relative.parts) <= _MAX_MANIFEST_DEPTH + 1


def _delivery(source_format: str, runs: tuple[ExportRun, ...], source_name: str, root: Path) -> Delivery:
    first = runs[0]
    return Delivery(
        source_format=source_format,
        files=tuple(f for run in runs for f in run.files),
        billing_period=first.billing_period,
        billing_account_id=first.billing_account_id,
        version="+".join(run.run_id for run in runs),
        manifest=first.manifest,
        source_name=source_name,
        version_time=max(run.version_time for run in runs),
        root=root,
    )


def period_of_range(name: str) -> str | None:
    """``YYYY-MM`` when the range lies within one calendar month starting on the 1st (monthly exports)."""
    match = _RANGE.match(name)
    if match and match.group(3) == "01" and match.group(1, 2) == match.group(4, 5):
        return f"{match.group(1)}-{match.group(2)}"
    return None


def _manifests(range_folder: Path) -> list[Path]:
    depths = ["*/" * n for n in range(_MAX_MANIFEST_DEPTH + 1)]
    return sorted(p for name in MANIFEST_NAMES for depth in depths for p in range_folder.glob(depth + name))


def _manifest_run(range_folder: Path, manifest_path: Path) -> ExportRun | None:
    relative = PurePosixPath(manifest_path.relative_to(range_folder).as_posix())
    run = run_manifest(read_manifest(manifest_path), manifest_path, relative, manifest_path.stat().st_mtime)
    if run is None:
        return None
    return ExportRun(
        range_folder=range_folder,
        files=tuple(_blob_to_local(manifest_path, range_folder, blob) for blob in run.blobs),
        run_id=run.run_id,
        order_key=run.order_key,
        manifest=manifest_path,
        dataset=run.dataset,
        scope=run.scope,
        billing_account_id=run.billing_account_id,
    )


def _runs_without_manifest(range_folder: Path, manifests: list[Path]) -> list[Path]:
    """Run folders holding data parts but no manifest, where other runs of the range have one."""
    if not manifests:
        return []
    with_manifest = {m.parent for m in manifests}
    depths = ["*/" * n for n in range(1, _MAX_MANIFEST_DEPTH + 1)]
    folders = {p.parent for depth in depths for p in range_folder.glob(depth + "*") if p.is_file() and _is_data_file(p)}
    return sorted(folders - with_manifest)


def _unmanifested_runs(range_folder: Path) -> list[ExportRun]:
    """Legacy non-partitioned exports: every data file in the range folder is one run's complete copy."""
    return [
        ExportRun(range_folder=range_folder, files=(f,), run_id=f.name, order_key=("", "", f.stat().st_mtime))
        for f in sorted(range_folder.iterdir())
        if f.is_file() and _is_data_file(f)
    ]


def _manifest_blob(where: Path | str, blob: object) -> ManifestBlob:
    name = blob.get("blobName") if isinstance(blob, dict) else None
    if not isinstance(name, str) or not name:
        raise InputError(where, f"manifest lists an invalid blob {blob!r}", column="blobs")
    size = blob.get("byteCount") if isinstance(blob, dict) else None
    return ManifestBlob(name=name, byte_count=size if isinstance(size, int) and not isinstance(size, bool) else None)


def blob_path(name: str) -> PurePosixPath:
    """A manifest blob name as a path: a URL's path (unquoted), else the name itself."""
    return PurePosixPath(unquote(urlparse(name).path) if "://" in name else name)


def _blob_to_local(manifest_path: Path, range_folder: Path, blob: ManifestBlob) -> Path:
    """Map a manifest blob name (or URL) to the local mirror, refusing names outside the range folder."""
    name = blob.name
    path = blob_path(name)
    parts = path.parts
    if ".." in parts:
        raise InputError(manifest_path, f"manifest blob {name!r} points outside the export folder", column="blobs")
    if range_folder.name in parts:
        relative = parts[len(parts) - parts[::-1].index(range_folder.name) :]
        local = range_folder.joinpath(*relative) if relative else range_folder
    else:
        # Microsoft documents both folder orders: fall back to the run folder the manifest sits in.
        local = manifest_path.parent / path.name
    if not local.is_file():
        raise InputError(manifest_path, f"manifest lists {name!r}, which does not exist at {local}", column="blobs")
    size = blob.byte_count
    if size is not None and size != local.stat().st_size:
        message = f"{local} has {local.stat().st_size} bytes, the manifest says {size} (incomplete download?)"
        raise InputError(manifest_path, message, column="byteCount")
    return local


def _dataset_of_export(folder: Path) -> str | None:
    for run in newest_runs(folder).values():
        if run.dataset:
            return run.dataset
    return _dataset_of_name(folder.name)


def _manifest_dataset(manifest: dict[str, Any]) -> str | None:
    config = _object(manifest.get("exportConfig"))
    kind = config.get("type") or config.get("exportType")
    return _EXPORT_TYPES.get(str(kind).lower()) if kind else None


def _dataset_of_name(name: str) -> str | None:
    tokens = {t.lower() for t in _DATASET_TOKEN.findall(name)}
    return tokens.pop() if len(tokens) == 1 else None


def _scope(resource_id: object) -> str | None:
    """``<scope>/providers/Microsoft.CostManagement/exports/<name>`` -> ``<scope>``, lower-case."""
    if not isinstance(resource_id, str) or not resource_id:
        return None
    return re.sub(r"/providers/microsoft\.costmanagement/exports/[^/]+/?$", "", resource_id.lower()) or None


# An EA enrollment (billing account number) or an MCA billing profile scope, as exportConfig.resourceId names it.
_ACCOUNT_SCOPE = re.compile(
    r"/providers/microsoft\.billing/billingaccounts/(?:(\d+)|[^/]+/billingprofiles/([^/]+))"
    r"(?:/providers/microsoft\.costmanagement/exports/[^/]+)?/?",
    re.IGNORECASE,
)


def _billing_account(resource_id: object) -> str | None:
    """The BillingAccountId an export's rows carry, where its scope names one: an EA enrollment's number, an MCA
    billing profile's id (the rows' billingProfileId); other scopes hold several, or name none."""
    match = _ACCOUNT_SCOPE.fullmatch(resource_id) if isinstance(resource_id, str) else None
    return (match.group(1) or match.group(2)) if match else None


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _subfolders(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def _is_export_folder(folder: Path) -> bool:
    return any(_RANGE.match(p.name) for p in _subfolders(folder))


def _is_data_file(path: Path) -> bool:
    return path.name.lower().endswith(_DATA_SUFFIXES)
