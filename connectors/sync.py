"""``gpuledger sync``: pull each remote source's new deliveries into its landing mirror, with the provider's SDK.

A remote source (``[sources.s3]``, ``[sources.azure_blob]`` in ``gpuledger.toml``) lands under
``<home>/landing/<source name>/``; its export folder there is the source's ``path``, so the nightly run
discovers and loads synced deliveries exactly like folders copied by hand.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from models.config import AzureBlobRemote, BigQueryRemote, CostDetailsRemote, S3Remote, SourceConfig
from models.errors import RemoteError
from models.landing import LedgerEntry

LOCK_FILE = ".gpuledger-sync.lock"


class SyncBusy(RemoteError):
    """Another sync of the source holds its landing folder: a later attempt will do."""


@dataclass(frozen=True)
class PulledDelivery:
    """One delivery a sync landed, as ``gpuledger sync`` reports it."""

    billing_period: str | None
    version: str | None
    files: int
    downloaded_bytes: int


@dataclass(frozen=True)
class SourceSync:
    source: str
    pulled: tuple[PulledDelivery, ...]
    unchanged: tuple[str, ...]
    """Periods (AWS) or date ranges (Azure) whose current delivery was already landed."""
    warnings: tuple[str, ...] = ()
    """Optional steps that failed without failing the sync (GCP billing lookups), one line each."""
    linked_projects: tuple[str, ...] = ()
    """GCP: projects billed to the synced billing accounts (from the billing lookups), for the team check."""


def remote_sources(sources: Sequence[SourceConfig], name: str | None = None) -> list[SourceConfig]:
    """The sources ``gpuledger sync`` pulls: every remote one, or the one named (which must be remote)."""
    chosen = [s for s in sources if s.remote is not None and (name is None or s.name == name)]
    if name is not None and not chosen:
        known = ", ".join(s.name for s in sources if s.remote is not None) or "none"
        raise ValueError(f"no remote source named {name!r} (remote sources: {known})")
    return chosen


def sync_source(source: SourceConfig, month: str | None = None, *, backfill: bool = False) -> SourceSync:
    """Land ``source``'s new deliveries (every period, or only ``month``); one sync per source at a time.

    ``backfill`` first has Azure generate ``month`` (an export run, or a Cost Details report, which every sync does).
    """
    remote = source.remote
    if remote is None:
        raise RemoteError(f"source {source.name!r} is not remote: it has a path, nothing to sync")
    if backfill and getattr(remote, "scope", None) is None:
        raise RemoteError(f"source {source.name!r}: --backfill needs an Azure source with a scope (see README)")
    with _exclusive(remote.landing, source.name):
        match remote:
            case S3Remote():
                return _sync_s3(source, remote, month)
            case BigQueryRemote():
                return _sync_bigquery(source, remote, month)
            case CostDetailsRemote():
                return _sync_azure_cost_details(source, remote, month)
            case AzureBlobRemote():
                return _sync_azure_blob(source, remote, month, backfill)


@contextmanager
def _exclusive(landing: Path, name: str) -> Iterator[None]:
    """Hold the landing folder's lock: two syncs into one mirror would race on its files and ledger."""
    landing.mkdir(parents=True, exist_ok=True)
    with open(landing / LOCK_FILE, "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SyncBusy(f"source {name!r}: another sync of it is running; try again when it ends") from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _limits(remote: S3Remote | AzureBlobRemote) -> dict[str, int]:
    """The transfer limits the source sets; the connector's defaults for the others."""
    given = {"max_file_bytes": remote.max_file_bytes, "max_files": remote.max_files}
    return {key: value for key, value in given.items() if value is not None}


def _summary(source: SourceConfig, pulled: Sequence[LedgerEntry], unchanged: Sequence[str]) -> SourceSync:
    deliveries = tuple(PulledDelivery(d.billing_period, d.version, len(d.files), d.downloaded_bytes) for d in pulled)
    return SourceSync(source.name, deliveries, tuple(unchanged))


def _sync_s3(source: SourceConfig, remote: S3Remote, month: str | None) -> SourceSync:
    from connectors.aws.sync import AwsExportConfig, sync_aws_export

    if remote.discover:  # the bucket and prefix come from the export's definition in AWS
        from connectors.aws.discovery import sync_discovered_export

        result = sync_discovered_export(
            source.name,
            source.format,
            remote.export,
            remote.landing,
            month=month,
            bucket=remote.bucket,
            prefix=remote.prefix,
            region=remote.region,
            endpoint_url=remote.endpoint_url,
            **_limits(remote),
        )
        return _summary(source, result.pulled, result.unchanged)
    config = AwsExportConfig(
        name=source.name,
        bucket=str(remote.bucket),
        prefix=remote.prefix or "",
        export=remote.export,
        kind="cur1" if source.format == "aws-cur1" else "data-export",
        region=remote.region,
        endpoint_url=remote.endpoint_url,
        **_limits(remote),
    )
    result = sync_aws_export(config, remote.landing, month=month)
    return _summary(source, result.pulled, result.unchanged)


def _sync_bigquery(source: SourceConfig, remote: BigQueryRemote, month: str | None) -> SourceSync:
    from connectors.gcp.sync import GcpExportConfig, sync_gcp_export

    limits = {"months_back": remote.months_back, "max_rows": remote.max_rows}
    config = GcpExportConfig(
        name=source.name,
        project=remote.project,
        dataset=remote.dataset,
        billing_project=remote.billing_project,
        table=remote.table,
        location=remote.location,
        lookups=remote.lookups,
        **{key: value for key, value in limits.items() if value is not None},
    )
    result = sync_gcp_export(config, remote.landing, month=month)
    summary = _summary(source, result.pulled, result.unchanged)
    if result.lookups is None:
        return summary
    return replace(summary, warnings=result.lookups.warnings, linked_projects=result.lookups.linked_projects)


def _sync_azure_blob(source: SourceConfig, remote: AzureBlobRemote, month: str | None, backfill: bool) -> SourceSync:
    from connectors.azure.costmanagement import sync_export_with_history
    from connectors.azure.sync import AzureExportConfig, sync_azure_export

    exports = remote.export_names
    pulled: list[LedgerEntry] = []
    unchanged: list[str] = []
    if remote.container is None or remote.directory is None:  # with a scope: from the exports' definitions in ARM
        from connectors.azure.costmanagement import sync_discovered_exports

        results = sync_discovered_exports(
            source.name,
            str(remote.scope),
            exports,
            remote.landing,
            account_url=remote.account_url,
            connection_string_env=remote.connection_string_env,
            container=remote.container,
            directory=remote.directory,
            month=month,
            backfill=backfill,
            **_limits(remote),
        )
        for export, result in zip(exports, results, strict=True):
            pulled += result.pulled
            unchanged += [f"{export} {r}" for r in result.unchanged]
        return _summary(source, pulled, unchanged)
    for export in exports:
        config = AzureExportConfig(
            name=source.name,
            container=remote.container,
            export_path=f"{remote.directory.strip('/')}/{export}",
            account_url=remote.account_url,
            connection_string_env=remote.connection_string_env,
            **_limits(remote),
        )
        if remote.scope is not None:  # only runs the export's ARM run history reports Completed
            result = sync_export_with_history(config, remote.scope, remote.landing, month=month, backfill=backfill)
        else:
            result = sync_azure_export(config, remote.landing, month=month)
        pulled += result.pulled
        unchanged += [f"{export} {r}" for r in result.unchanged]
    return _summary(source, pulled, unchanged)


def _sync_azure_cost_details(source: SourceConfig, remote: CostDetailsRemote, month: str | None) -> SourceSync:
    from connectors.azure.costmanagement import CostDetailsConfig, sync_cost_details

    config = CostDetailsConfig(
        name=source.name, scope=remote.scope, source_format=source.format, months_back=remote.months_back
    )
    result = sync_cost_details(config, remote.landing, month=month)
    return _summary(source, result.pulled, result.unchanged)
