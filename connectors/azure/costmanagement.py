"""Azure Cost Management through ARM: export run history and backfills, and the Cost Details API.

Every call goes through ``azure.mgmt.costmanagement.CostManagementClient`` (credential: DefaultAzureCredential;
:attr:`ArmSettings.base_url` points it elsewhere, e.g. at a test server).

1. **Export run history** (``[sources.azure_blob]`` with ``scope``): a manifest in Blob is written last, but
   ARM is the service's word on a run: a run can fail or time out after parts (and even a manifest) were
   written. :func:`sync_export_with_history` reads the export (``exports.get``), refuses it unless its storage
   destination is the configured container and directory (else the history would vouch for another folder's
   runs), reads ``exports.get_execution_history`` and pulls only runs it reports ``Completed``
   (:func:`connectors.azure.sync.sync_azure_export`'s ``accept_run``). A run is matched by its id (the history
   entry's name, the manifest's ``runInfo.runId``) or its manifest path (``manifestFile``); a run the history no
   longer lists is not pulled: land older months with ``--backfill``.
   A source that leaves out ``container`` and/or ``directory`` takes them from the definition
   (:func:`sync_discovered_exports`: ``deliveryInfo.destination.container`` and ``rootFolderPath``), provided
   its storage account (``resourceId`` or ``storageAccount``) is the one ``account_url`` or the connection string
   reaches; an export name ARM does not know is refused with the names ``exports.list`` finds at the scope.
2. **Backfill**: ``exports.execute`` for one month, then the history is polled with backoff (bounded by
   :attr:`ArmSettings.max_wait`) until the new run is Completed; a Failed or Timeout run is an error.
3. **Cost Details API** (``[sources.azure_cost_details]``): per month and metric,
   ``generate_cost_details_report.begin_create_operation`` (the LRO poller honours Retry-After; the pipeline
   retries 429/503 honouring it), then every ``manifest.blobs[].blob_link`` is downloaded with
   ``BlobClient.from_blob_url``, size- and MD5-checked, and landed as a cost-details export run the local reader
   (:mod:`connectors.azure.exports`) already knows::

       <landing>/cost-details/<ActualCost|AmortizedCost>/<YYYYMM01-YYYYMMDD>/<operation id>/part_0_0001.csv
       <landing>/cost-details/<ActualCost|AmortizedCost>/<YYYYMM01-YYYYMMDD>/<operation id>/manifest.json

   The manifest is synthesized (written last) in the improved exports' format; its ``exportConfig.resourceId``
   carries the scope so an EA enrollment becomes the billing account as for an export. A report is regenerated
   on every call: when its parts' MD5s equal those of the period's landed run, nothing new is recorded.

Blob links are SAS URLs: their query string is a secret. Only host and path are ever logged or put in an error,
and urllib3's debug lines (which print the request line) are redacted while links are downloaded.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import Enum
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlparse

from azure.core.credentials import TokenCredential
from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    DecodeError,
    HttpResponseError,
    IncompleteReadError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.mgmt.costmanagement import CostManagementClient
from azure.mgmt.costmanagement.models import (
    CostDetailsOperationResults,
    CostDetailsTimePeriod,
    ErrorDetails,
    ExportRun,
    ExportRunRequest,
    ExportTimePeriod,
    GenerateCostDetailsReportRequestDefinition,
)
from azure.storage.blob import BlobClient, ExponentialRetry

from connectors.azure.exports import RunManifest, blob_path
from connectors.azure.sync import CREDENTIAL_CHAIN, AzureExportConfig, sync_azure_export
from connectors.ledger import SyncResult, TransferLimits, atomic_file, now_utc, record_delivery
from connectors.progress import transfer
from models.billing_month import BillingMonth
from models.errors import InputError, RemoteError
from models.formats import FORMATS
from models.landing import LedgerEntry, LedgerFile, read_ledger

log = logging.getLogger(__name__)

PROVIDER = "azure"
ARM_URL = "https://management.azure.com"
_ARM_SCOPE = "https://management.azure.com/.default"
COST_DETAILS_FOLDER = "cost-details"
"""Folder under a cost-details source's landing mirror holding one export folder per metric."""


def metrics_of(source_format: str) -> tuple[str, ...]:
    """The Cost Details metrics a format reads (a combined format: those of the formats it combines); each metric
    lands as an export folder of that name."""
    fmt = FORMATS[source_format]
    parts = [FORMATS[name] for name in fmt.combines] or [fmt]
    return tuple(str(part.cost_metric) for part in parts)


MAX_MONTHS_BACK = 12
"""The Cost Details API serves the last 13 months: the current one and 12 before it."""
_FAILED_RUNS = {"failed", "timeout", "datanotavailable", "newdatanotavailable"}
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_STORAGE_ACCOUNT_ID = re.compile(r"/providers/microsoft\.storage/storageaccounts/([^/]+)", re.IGNORECASE)
_TRANSFER_ERRORS = (ServiceResponseError, IncompleteReadError, DecodeError)


@dataclass(frozen=True, kw_only=True)
class ArmSettings:
    """How to reach ARM and how long to wait on it (not in gpuledger.toml: production uses the defaults)."""

    base_url: str = ARM_URL
    connection_verify: bool | str = True
    """A CA bundle path for a server with a private certificate (tests); never False in production."""
    max_attempts: int = 8
    """HTTP attempts per request: the pipeline retries 408/429/5xx, honouring Retry-After."""
    poll_interval: float = 10.0
    """First delay between polls when the service sends no Retry-After; export runs double it up to a minute."""
    max_wait: float = 1800.0
    """Longest total wait for one report or one backfill run, in seconds."""

    def __post_init__(self) -> None:
        if self.max_attempts < 1 or self.poll_interval <= 0 or self.max_wait <= 0:
            raise InputError("ARM settings", "max_attempts, poll_interval and max_wait must be positive")


@dataclass(frozen=True)
class CostDetailsConfig(TransferLimits):
    """One scope whose cost details are pulled with the Cost Details API, per month and metric."""

    name: str
    """Source name, recorded on every ledger entry."""
    scope: str
    """ARM scope: ``subscriptions/<id>`` or ``providers/Microsoft.Billing/billingAccounts/<id>[/billingProfiles/<id>]``
    (a leading slash is allowed)."""
    source_format: str
    """``azure-actual``, ``azure-amortized`` or ``azure-cost-details`` (both metrics, paired by the reader)."""
    months_back: int = 2
    """Months before the current one pulled on a plain sync (the current month always is); at most 12."""
    arm: ArmSettings = field(default_factory=ArmSettings)
    backoff_seconds: float = 1.0
    """First retry delay of a blob download (Storage's ExponentialRetry)."""

    def __post_init__(self) -> None:
        where = f"Azure cost details {self.name!r}"
        _check_scope(where, self.scope)
        if re.search(r"/(resourcegroups|managementgroups)/", f"/{self.scope.lower()}"):
            raise InputError(where, "the Cost Details API does not serve resource group or management group scopes")
        served = [name for name, f in FORMATS.items() if "azure_cost_details" in f.remotes]
        if self.source_format not in served:
            raise InputError(where, f"format must be one of {', '.join(served)}", column="format")
        if not 0 <= self.months_back <= MAX_MONTHS_BACK:
            raise InputError(where, f"'months_back' must be 0 to {MAX_MONTHS_BACK}", column="months_back")
        self.check_limits(where)

    @property
    def export_folder(self) -> str:
        """Landing-relative folder the source's ``path`` is (``models.config`` computes the same)."""
        metrics = metrics_of(self.source_format)
        return COST_DETAILS_FOLDER if len(metrics) > 1 else f"{COST_DETAILS_FOLDER}/{metrics[0]}"


# --- 1 and 2: export run history and backfill -------------------------------------------------------------------


@dataclass(frozen=True)
class CompletedRuns:
    """The runs ARM reports Completed for one export, to narrow a Blob sync to them (``accept_run``)."""

    export: str
    run_ids: frozenset[str]
    """Lower-case run ids (history entry names)."""
    manifests: frozenset[str]
    """Lower-case manifest paths below the container (``manifestFile``)."""
    statuses: dict[str, str]
    """Lower-case run id -> status, for the log line of a refused run."""

    def accepts(self, manifest_name: str, run: RunManifest) -> bool:
        run_id = run.run_id.lower()
        if run_id in self.run_ids or manifest_name.lower() in self.manifests:
            return True
        status = self.statuses.get(run_id, "not in the export's run history")
        log.info("%s: run %s has a manifest but ARM reports %s, not pulled", self.export, run.run_id, status)
        return False


def sync_export_with_history(
    config: AzureExportConfig,
    scope: str,
    landing_dir: Path,
    *,
    month: str | None = None,
    backfill: bool = False,
    arm: ArmSettings | None = None,
    credential: TokenCredential | None = None,
) -> SyncResult:
    """Sync an export's runs from Blob, only those ARM reports Completed; with ``backfill``, run ``month`` first."""
    arm = arm or ArmSettings()
    _check_scope(f"Azure export {config.name!r}", scope)
    directory, _, export_name = config.export_path.strip("/").rpartition("/")
    where = f"Azure export {export_name!r} at {scope.strip('/')}"
    with _arm_errors(where, arm), _client(arm, credential) as client:
        destination = _destination(client, scope, export_name, where)
        _check_configured(destination, config.container, directory, where)
        accept = _history_filter(client, config, scope, export_name, month, backfill, arm, where)
    return sync_azure_export(config, landing_dir, month=month, credential=credential, accept_run=accept)


@dataclass(frozen=True)
class ExportDestination:
    """Where an export delivers, as its definition in ARM says (``properties.deliveryInfo.destination``)."""

    export: str
    container: str
    directory: str
    """``rootFolderPath`` without leading or trailing slashes (empty: the container's root)."""
    storage_account: str | None
    """The account named by ``resourceId`` (``.../storageAccounts/<name>``) or ``storageAccount``; None if neither."""

    @property
    def export_path(self) -> str:
        """``<directory>/<export>``: :attr:`AzureExportConfig.export_path`."""
        return f"{self.directory}/{self.export}".strip("/")


def sync_discovered_exports(
    source: str,
    scope: str,
    exports: Sequence[str],
    landing_dir: Path,
    *,
    account_url: str | None = None,
    connection_string_env: str | None = None,
    container: str | None = None,
    directory: str | None = None,
    month: str | None = None,
    backfill: bool = False,
    arm: ArmSettings | None = None,
    credential: TokenCredential | None = None,
    **limits: int,
) -> tuple[SyncResult, ...]:
    """:func:`sync_export_with_history` for exports whose container and directory come from their definitions.

    A ``container`` or ``directory`` also given must agree with the definition, whose storage account must be the
    one ``account_url`` or the connection string reaches (else the definition would vouch for another account's
    blobs); the exports of one source (an ActualCost/AmortizedCost pair) must deliver to one folder. Every
    definition and run history is read (and backfills run) before Blob is listed; one result per export, in order.
    ``limits`` are :class:`AzureExportConfig`'s.
    """
    arm = arm or ArmSettings()
    _check_scope(f"Azure source {source!r}", scope)
    account = _configured_account(source, account_url, connection_string_env)
    plans: list[tuple[AzureExportConfig, Callable[[str, RunManifest], bool]]] = []
    first: ExportDestination | None = None
    with _arm_errors(f"Azure source {source!r} at {scope.strip('/')}", arm), _client(arm, credential) as client:
        for export in exports:
            where = f"Azure export {export!r} at {scope.strip('/')}"
            with _arm_errors(where, arm):
                destination = _destination(client, scope, export, where)
                _check_configured(destination, container, directory, where)
                _check_account(destination, account, where)
                if first is not None and (first.container, first.directory) != (
                    destination.container,
                    destination.directory,
                ):
                    raise RemoteError(
                        f"{where}: delivers to {destination.container}/{destination.directory}, but {first.export!r}"
                        f" to {first.container}/{first.directory}: the exports of one source must share a folder"
                    )
                first = first or destination
                log.info("%s: ARM says the export delivers to %s/%s in storage account %s", where,
                         destination.container, destination.directory, destination.storage_account)  # fmt: skip
                config = AzureExportConfig(
                    name=source,
                    container=destination.container,
                    export_path=destination.export_path,
                    account_url=account_url,
                    connection_string_env=connection_string_env,
                    **limits,
                )
                plans.append((config, _history_filter(client, config, scope, export, month, backfill, arm, where)))
    return tuple(
        sync_azure_export(config, landing_dir, month=month, credential=credential, accept_run=accept)
        for config, accept in plans
    )


def _history_filter(
    client: CostManagementClient,
    config: AzureExportConfig,
    scope: str,
    export_name: str,
    month: str | None,
    backfill: bool,
    arm: ArmSettings,
    where: str,
) -> Callable[[str, RunManifest], bool]:
    """With ``backfill``, run ``month`` first; then the filter accepting the runs the history reports Completed."""
    if backfill:
        if month is None:
            raise InputError(where, "--backfill needs --month YYYY-MM", column="month")
        _run_export(client, scope, export_name, month, arm, where)
    return _completed_runs(client, scope, export_name, config.container, where).accepts


def _destination(client: CostManagementClient, scope: str, export_name: str, where: str) -> ExportDestination:
    """The export's storage destination; an export ARM does not know is refused with the names it lists."""
    try:
        export = client.exports.get(_scope_path(scope), export_name)
    except ResourceNotFoundError:
        found = client.exports.list(_scope_path(scope)).value or []
        names = ", ".join(sorted(str(e.name) for e in found if e.name)) or "none"
        raise RemoteError(
            f"{where}: Cost Management has no export of that name at the scope (exports there: {names}):"
            " fix the export name in gpuledger.toml"
        ) from None
    destination = export.delivery_info.destination if export.delivery_info else None
    if destination is None or not destination.container:
        raise RemoteError(f"{where}: ARM gives no storage container for the export's destination")
    match = _STORAGE_ACCOUNT_ID.search(str(destination.resource_id or ""))
    account = match.group(1) if match else (str(destination.storage_account or "") or None)
    return ExportDestination(
        export=export_name,
        container=str(destination.container),
        directory=str(destination.root_folder_path or "").strip("/"),
        storage_account=account.lower() if account else None,
    )


def _check_configured(destination: ExportDestination, container: str | None, directory: str | None, where: str) -> None:
    """A container or directory the source also gives must be the definition's (None: not given)."""
    given = {"container": container, "directory": None if directory is None else directory.strip("/")}
    wrong = [key for key, value in given.items() if value is not None and value != getattr(destination, key)]
    if wrong:
        configured = "/".join(given[key] or getattr(destination, key) for key in ("container", "directory"))
        raise RemoteError(
            f"{where}: ARM says the export delivers to {destination.container}/{destination.directory}, but the"
            f" source is configured for {configured}: fix {' and '.join(wrong)} in gpuledger.toml (or leave"
            " container and directory out to take them from ARM)"
        )


def _check_account(destination: ExportDestination, account: str | None, where: str) -> None:
    """The definition's storage account must be the configured one; both must be known to follow the definition."""
    if destination.storage_account is None:
        raise RemoteError(
            f"{where}: ARM names no storage account for the export's destination (neither resourceId nor"
            " storageAccount), so its container cannot be matched to account_url: set container and directory"
        )
    if account is None:
        raise RemoteError(
            f"{where}: the storage account behind account_url or the connection string cannot be told, so the"
            f" export's account {destination.storage_account!r} cannot be checked: set container and directory"
        )
    if account != destination.storage_account:
        raise RemoteError(
            f"{where}: the export delivers to storage account {destination.storage_account!r}, but the source"
            f" reads account {account!r}: fix account_url or connection_string_env"
        )


def _configured_account(source: str, account_url: str | None, connection_string_env: str | None) -> str | None:
    """The storage account ``account_url`` or the connection string reaches (lower case); None if it cannot be told.

    Never puts the connection string in an error: only the variable's name.
    """
    if account_url is not None:
        return _url_account(account_url)
    if connection_string_env is None:
        return None
    connection_string = os.environ.get(connection_string_env)
    if not connection_string:
        raise RemoteError(
            f"Azure source {source!r}: environment variable {connection_string_env} (the storage connection"
            " string) is not set"
        )
    settings = {
        key.strip().lower(): value.strip()
        for key, _, value in (part.partition("=") for part in connection_string.split(";"))
        if value
    }
    if settings.get("accountname"):
        return settings["accountname"].lower()
    if settings.get("usedevelopmentstorage", "").lower() == "true":
        return "devstoreaccount1"  # the emulator's well-known account
    return _url_account(settings["blobendpoint"]) if settings.get("blobendpoint") else None


def _url_account(url: str) -> str | None:
    """``https://<account>.blob.core.windows.net`` (any cloud, privatelink too) or an emulator's
    ``http://<host>:<port>/<account>``; None for a custom domain."""
    parts = urlparse(url)
    host = (parts.hostname or "").lower()
    labels = host.split(".")
    if len(labels) > 2 and "blob" in labels[1:]:
        return labels[0]
    with suppress(ValueError):
        ipaddress.ip_address(host)
        host = "emulator"  # an IP address: the account is the path's first segment
    segment = parts.path.strip("/").split("/")[0]
    return segment.lower() if "." not in host and segment else None


def _completed_runs(
    client: CostManagementClient, scope: str, export_name: str, container: str, where: str
) -> CompletedRuns:
    runs = client.exports.get_execution_history(_scope_path(scope), export_name).value or []
    statuses = {_run_key(run): _text(run.status) or "unknown" for run in runs if _run_key(run)}
    completed = [run for run in runs if _text(run.status).lower() == "completed"]
    manifests = {_manifest_key(str(run.manifest_file), container) for run in completed if run.manifest_file}
    log.info("%s: %d of %d runs in the history are Completed", where, len(completed), len(runs))
    return CompletedRuns(
        export=where,
        run_ids=frozenset(key for run in completed if (key := _run_key(run))),
        manifests=frozenset(manifests),
        statuses=statuses,
    )


def _run_export(
    client: CostManagementClient, scope: str, export_name: str, month: str, arm: ArmSettings, where: str
) -> None:
    """Run the export for ``month`` now and wait for ARM to report the new run Completed."""
    billing_month = _billing_month(month, where)
    scope_path = _scope_path(scope)
    before = {_run_key(run) for run in client.exports.get_execution_history(scope_path, export_name).value or []}
    start, end = billing_month.first_day, billing_month.last_day
    period = ExportTimePeriod(
        from_property=datetime(start.year, start.month, start.day, tzinfo=UTC),
        to=datetime(end.year, end.month, end.day, tzinfo=UTC),
    )
    client.exports.execute(scope_path, export_name, ExportRunRequest(time_period=period))
    log.info("%s: export run for %s requested, waiting for it", where, month)
    for _ in _polls(arm):
        history = client.exports.get_execution_history(scope_path, export_name).value or []
        # The run execute started: ARM returns no id for it, so it is the on-demand run the history did not list.
        new = [run for run in history if _run_key(run) not in before and _on_demand(run)]
        if not new:
            continue
        run = max(new, key=lambda r: r.submitted_time or datetime.min.replace(tzinfo=UTC))
        status = _text(run.status)
        if status.lower() == "completed":
            log.info("%s: export run %s for %s completed", where, _run_key(run), month)
            return
        if status.lower() in _FAILED_RUNS:
            detail = _error_detail(run.error)
            raise RemoteError(f"{where}: the export run {_run_key(run)} for {month} ended {status}{detail}")
    raise RemoteError(f"{where}: the export run for {month} did not complete within {arm.max_wait:g} s; sync later")


def _polls(arm: ArmSettings) -> Iterator[None]:
    """Yield before each poll, sleeping with doubling delays (at most a minute) until ``max_wait`` is spent."""
    deadline = time.monotonic() + arm.max_wait
    delay = arm.poll_interval
    yield
    while time.monotonic() + delay <= deadline:
        time.sleep(delay)
        delay = min(delay * 2, 60.0)
        yield


def _on_demand(run: ExportRun) -> bool:
    """Not a scheduled run (which could start beside ours): OnDemand, or a run whose type ARM does not state."""
    return (_text(run.execution_type) or "OnDemand").lower() == "ondemand"


def _run_key(run: ExportRun) -> str:
    return str(run.name or str(run.id or "").rsplit("/", 1)[-1]).lower()


def _manifest_key(path: str, container: str) -> str:
    """``manifestFile`` as a name below the container: a URL's path, with or without the container in front."""
    parts = [p for p in blob_path(path).parts if p != "/"]
    if container in parts[:2]:
        parts = parts[parts.index(container) + 1 :]
    return "/".join(parts).lower()


# --- 3: the Cost Details API ---------------------------------------------------------------------------------------


def sync_cost_details(
    config: CostDetailsConfig,
    landing_dir: Path,
    *,
    month: str | None = None,
    credential: TokenCredential | None = None,
    today: date | None = None,
) -> SyncResult:
    """Generate and land the cost details of every recent month (or only ``month``) for each metric of the format."""
    where = f"Azure cost details {config.name!r} at {config.scope.strip('/')}"
    today = today or datetime.now(UTC).date()
    current = BillingMonth.of_day(today)
    months = (
        [_billing_month(month, where)] if month else [current.shifted(-k) for k in range(config.months_back, -1, -1)]
    )
    for billing_month in months:  # refused before any call: the API would answer 400 after a long wait
        if billing_month > current:
            raise InputError(where, f"{billing_month} has not started yet", column="month")
        if billing_month.months_until(current) > MAX_MONTHS_BACK:
            oldest = current.shifted(-MAX_MONTHS_BACK)
            message = f"{billing_month} is older than the Cost Details API serves (13 months: {oldest} onwards)"
            raise InputError(where, message, column="month")
    entries = read_ledger(landing_dir)
    pulled: list[LedgerEntry] = []
    unchanged: list[str] = []
    with _arm_errors(where, config.arm), _client(config.arm, credential) as client:
        for billing_month in months:
            for metric in metrics_of(config.source_format):
                report = _generate(client, config, metric, billing_month, today, where)
                entry = _land_report(config, landing_dir, metric, billing_month, report, entries, where)
                if entry is None:
                    unchanged.append(f"{metric} {_range_name(billing_month)}")
                    continue
                record_delivery(landing_dir, entry)
                entries.append(entry)
                pulled.append(entry)
    return SyncResult(landing_dir / config.export_folder, tuple(pulled), tuple(unchanged))


def _generate(
    client: CostManagementClient,
    config: CostDetailsConfig,
    metric: str,
    billing_month: BillingMonth,
    today: date,
    where: str,
) -> CostDetailsOperationResults:
    start, end = billing_month.first_day, billing_month.last_day
    request = GenerateCostDetailsReportRequestDefinition(
        metric=metric, time_period=CostDetailsTimePeriod(start=start.isoformat(), end=min(end, today).isoformat())
    )
    poller = client.generate_cost_details_report.begin_create_operation(
        _scope_path(config.scope), request, polling_interval=config.arm.poll_interval
    )
    poller.wait(config.arm.max_wait)
    if not poller.done():
        raise RemoteError(f"{where}: the {metric} report for {billing_month} was not ready within"
                          f" {config.arm.max_wait:g} s; sync later")  # fmt: skip
    report = poller.result()
    status = _text(report.status) or "without a status"
    if status.lower() != "completed":
        detail = _error_detail(report.error)
        raise RemoteError(f"{where}: the {metric} report for {billing_month} ended {status}{detail}")
    return report


def _land_report(
    config: CostDetailsConfig,
    landing_dir: Path,
    metric: str,
    billing_month: BillingMonth,
    report: CostDetailsOperationResults,
    entries: list[LedgerEntry],
    where: str,
) -> LedgerEntry | None:
    """Download the report's blobs into a new run folder and write its manifest; None when there is nothing new."""
    manifest = report.manifest
    blobs = list(manifest.blobs or []) if manifest else []
    data_format = (_text(manifest.data_format) or "Csv") if manifest else "no manifest"
    if manifest is None or data_format.lower() != "csv":
        raise RemoteError(f"{where}: the {metric} report is not CSV ({data_format})")
    if len(blobs) > config.max_files:
        raise InputError(where, f"the {metric} report has {len(blobs)} blobs, more than max_files={config.max_files}")
    for blob in blobs:
        if not blob.blob_link:
            raise RemoteError(f"{where}: the {metric} report lists a blob without a link")
        if (blob.byte_count or 0) > config.max_file_bytes:
            message = f"{_public(blob.blob_link)} has {blob.byte_count} bytes, more than max_file_bytes"
            raise InputError(where, f"{message}={config.max_file_bytes}")
    export = f"{COST_DETAILS_FOLDER}/{metric}"
    range_name = _range_name(billing_month)
    if not blobs:  # nothing was charged at the scope in the period: no run to land
        log.info("%s %s %s: the report has no blobs, nothing landed", where, metric, range_name)
        return None
    run_id = report.name if report.name and _RUN_ID.match(report.name) else uuid.uuid4().hex
    run_folder = landing_dir / export / range_name / run_id
    if run_folder.exists():
        raise InputError(run_folder, "a run folder of this report operation already exists")
    suffix = ".csv.gz" if manifest.compress_data else ".csv"
    try:
        files = []
        with _sas_redacted_logging():
            for number, blob in enumerate(blobs, start=1):
                name = f"{export}/{range_name}/{run_id}/part_0_{number:04d}{suffix}"
                files.append(_download(config, str(blob.blob_link), blob.byte_count, landing_dir, name, where))
        previous = _landed(entries, config.name, export, str(billing_month), landing_dir)
        if previous is not None and sorted(f.md5 for f in previous.files) == sorted(f.md5 for f in files):
            log.info("%s %s %s: the regenerated report equals landed run %s", where, metric, range_name,
                     previous.version)  # fmt: skip
            _remove_run(run_folder)
            return None
        data = _manifest(config, metric, billing_month, run_id, report, files)
        with atomic_file(run_folder / "manifest.json") as out:  # last: the run counts once its parts are there
            out.write(data)
    except BaseException:
        _remove_run(run_folder)
        raise
    log.info("%s %s %s: landed run %s, %d parts", where, metric, range_name, run_id, len(files))
    return LedgerEntry(
        provider=PROVIDER,
        source=config.name,
        export=export,
        billing_period=str(billing_month),
        version=run_id,
        manifest=f"{export}/{range_name}/{run_id}/manifest.json",
        manifest_etag=hashlib.md5(data, usedforsecurity=False).hexdigest(),
        files=tuple(files),
        bytes=sum(f.bytes for f in files),
        rows=None,
        downloaded_files=len(files),
        downloaded_bytes=sum(f.bytes for f in files),
        synced_at=now_utc(),
    )


def _landed(entries: list[LedgerEntry], source: str, export: str, period: str, landing_dir: Path) -> LedgerEntry | None:
    """The period's newest recorded run whose manifest is still on disk."""
    for entry in reversed(entries):
        if (entry.provider, entry.source, entry.export, entry.billing_period) == (PROVIDER, source, export, period):
            return entry if (landing_dir / entry.manifest).is_file() else None
    return None


def _manifest(
    config: CostDetailsConfig,
    metric: str,
    billing_month: BillingMonth,
    run_id: str,
    report: CostDetailsOperationResults,
    files: list[LedgerFile],
) -> bytes:
    """A manifest in the improved exports' format (connectors.azure.exports parses it) for a landed report."""
    start, end = billing_month.first_day, billing_month.last_day
    manifest = report.manifest
    document: dict[str, Any] = {
        "exportConfig": {
            "exportName": metric,
            # Not an export: the reader takes the scope from here (an EA enrollment is the billing account).
            "resourceId": f"/{_scope_path(config.scope)}/providers/Microsoft.CostManagement/exports/{metric}",
            "dataVersion": manifest.manifest_version if manifest else None,
            "type": metric,
            "timeFrame": "Custom",
            "granularity": "Daily",
        },
        "deliveryConfig": {
            "partitionData": True,
            "dataOverwriteBehavior": "CreateNewReport",
            "fileFormat": "Csv",
            "compressionMode": "gzip" if manifest and manifest.compress_data else "none",
        },
        "runInfo": {
            "executionType": "OnDemand",
            "runId": run_id,
            # Orders runs of a period (newest wins): microseconds, so two syncs in one second still order.
            "submittedTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "startDate": f"{start.isoformat()}T00:00:00",
            "endDate": f"{end.isoformat()}T00:00:00",
        },
        "source": "generateCostDetailsReport",
        "blobCount": len(files),
        "byteCount": sum(f.bytes for f in files),
        "blobs": [{"blobName": f.name, "byteCount": f.bytes} for f in files],
    }
    return (json.dumps(document, indent=1) + "\n").encode()


def _download(
    config: CostDetailsConfig, link: str, byte_count: int | None, landing_dir: Path, name: str, where: str
) -> LedgerFile:
    """Download a SAS link to ``landing_dir/name`` atomically, checking size and Content-MD5; retried if cut short."""
    public = _public(link)
    client = BlobClient.from_blob_url(
        link,
        connection_verify=config.arm.connection_verify,
        retry_policy=ExponentialRetry(
            initial_backoff=config.backoff_seconds, increment_base=2, retry_total=config.max_attempts - 1
        ),
        connection_timeout=config.connect_timeout,
        read_timeout=config.read_timeout,
    )
    last = ""
    with client:
        for attempt in range(1, config.download_attempts + 1):
            try:
                with atomic_file(landing_dir / name) as out:
                    size, md5, etag = _copy(client, public, byte_count, out, config.max_file_bytes)
                return LedgerFile(name=name, bytes=size, etag=etag, md5=md5)
            except _TransferError as exc:
                last = str(exc)
            except _TRANSFER_ERRORS as exc:
                last = type(exc).__name__  # the SDK's message may quote the URL with its SAS
            except HttpResponseError as exc:
                code = exc.error_code or getattr(exc.error, "code", None) or ""
                raise RemoteError(f"{where}: {public}: the storage service answered HTTP {exc.status_code} {code}"
                                  " (the report's links expire: sync again)") from None  # fmt: skip
            except AzureError as exc:
                raise RemoteError(f"{where}: {public}: {type(exc).__name__} (cannot download the report)") from None
            log.warning("%s: %s: download attempt %d of %d failed: %s", where, public, attempt,
                        config.download_attempts, last)  # fmt: skip
    raise RemoteError(f"{where}: {public}: download failed {config.download_attempts} times: {last}")


class _TransferError(Exception):
    """A download that arrived short, long or with the wrong MD5."""


def _copy(client: BlobClient, public: str, byte_count: int | None, out: BinaryIO, limit: int) -> tuple[int, str, str]:
    """Stream the blob into ``out``: (size, hex MD5, ETag); _TransferError when it disagrees with what was stated."""
    stream = client.download_blob()
    expected = byte_count if byte_count is not None else stream.size
    if stream.size != expected:
        raise _TransferError(f"the blob has {stream.size} bytes, the report says {byte_count}")
    if expected > limit:
        raise _TransferError(f"{expected} bytes, more than max_file_bytes={limit}")
    digest = hashlib.md5(usedforsecurity=False)
    size = 0
    with transfer(public, expected) as advance:
        for chunk in stream.chunks():
            size += len(chunk)
            if size > expected:
                raise _TransferError(f"more than the stated {expected} bytes arrived")
            digest.update(chunk)
            out.write(chunk)
            advance(len(chunk))
    if size != expected:
        raise _TransferError(f"{size} of {expected} bytes arrived")
    content_md5 = stream.properties.content_settings.content_md5
    if content_md5 and bytes(content_md5) != digest.digest():
        raise _TransferError("the bytes do not match the blob's Content-MD5")
    return size, digest.hexdigest(), str(stream.properties.etag or "")


def _remove_run(run_folder: Path) -> None:
    """Remove a run folder this sync created (and its range folder when that leaves it empty)."""
    shutil.rmtree(run_folder, ignore_errors=True)
    with suppress(OSError):
        run_folder.parent.rmdir()


def _public(link: str) -> str:
    """A SAS link without its query string (the secret) and without user info: safe to log."""
    parts = urlparse(link)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"


class _SasFilter(logging.Filter):
    """Redacts query strings from urllib3's debug lines, which print each request line with its SAS."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "sig=" in message:
            record.msg, record.args = re.sub(r"\?[^\s\"']*", "?<SAS redacted>", message), ()
        return True


@contextmanager
def _sas_redacted_logging() -> Iterator[None]:
    urllib3_log = logging.getLogger("urllib3.connectionpool")
    sas_filter = _SasFilter()
    urllib3_log.addFilter(sas_filter)
    try:
        yield
    finally:
        urllib3_log.removeFilter(sas_filter)


# --- shared ----------------------------------------------------------------------------------------------------------


@contextmanager
def _client(arm: ArmSettings, credential: TokenCredential | None) -> Iterator[CostManagementClient]:
    if credential is None:
        from azure.identity import DefaultAzureCredential  # imported late: it pulls in msal

        credential = DefaultAzureCredential()
    # Fail fast: inside the client a missing credential would be retried like a throttled request.
    credential.get_token(_ARM_SCOPE)
    client = CostManagementClient(
        credential,
        base_url=arm.base_url,
        connection_verify=arm.connection_verify,
        retry_total=arm.max_attempts - 1,
        polling_interval=arm.poll_interval,
    )
    with client:
        yield client


@contextmanager
def _arm_errors(where: str, arm: ArmSettings) -> Iterator[None]:
    """Turn SDK failures into one line with the HTTP status and ARM error code; never a token or a SAS."""
    try:
        yield
    except ClientAuthenticationError as exc:
        if exc.status_code in (401, 403):
            raise RemoteError(f"{where}: ARM refused the credential (HTTP {exc.status_code} {_code(exc)})") from None
        raise RemoteError(f"{where}: no Azure credential found by {CREDENTIAL_CHAIN}") from None
    except HttpResponseError as exc:
        hint = ""
        if exc.status_code == 403:
            hint = ": needs Cost Management Reader at the scope (Cost Management Contributor to run an export)"
        raise RemoteError(f"{where}: Cost Management answered HTTP {exc.status_code} {_code(exc)}{hint}") from None
    except ServiceRequestError:
        raise RemoteError(f"{where}: cannot reach {arm.base_url}") from None
    except AzureError as exc:
        raise RemoteError(f"{where}: {type(exc).__name__}: {_one_line(exc.message)}") from None


def _code(exc: HttpResponseError) -> str:
    return str(getattr(exc.error, "code", None) or exc.error_code or exc.reason or "")


def _text(value: object) -> str:
    """An SDK enum's wire value (``str()`` of one gives its Python name), or the string as sent."""
    return str(value.value) if isinstance(value, Enum) else str(value or "")


def _error_detail(error: ErrorDetails | None) -> str:
    """``: <code> <message>`` of a failed run or report, on one line; empty when ARM gave none."""
    return f": {error.code} {_one_line(error.message)}".rstrip() if error and (error.code or error.message) else ""


def _one_line(text: object) -> str:
    return " ".join(str(text or "").split())[:300]


def _check_scope(where: str, scope: str) -> None:
    if not isinstance(scope, str) or not scope.strip("/"):
        raise InputError(where, "'scope' must be an ARM scope such as subscriptions/<id>", column="scope")
    if any(p in ("", ".", "..") for p in scope.strip("/").split("/")) or re.search(r"[?#\s]", scope):
        raise InputError(where, f"'scope' {scope!r} is not an ARM scope path", column="scope")


def _scope_path(scope: str) -> str:
    """The SDK puts the scope after a slash: give it without one."""
    return scope.strip("/")


def _billing_month(month: str, where: str) -> BillingMonth:
    try:
        return BillingMonth.parse(month)
    except ValueError:
        raise InputError(where, f"month {month!r} is not YYYY-MM", column="month") from None


def _range_name(month: BillingMonth) -> str:
    """The date-range folder of a whole month, inclusive end as Azure writes it (``20261101-20261130``)."""
    return f"{month.first_day:%Y%m%d}-{month.last_day:%Y%m%d}"
