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
from typing import cast

from models.config import RemoteConfig, SourceConfig
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
    remote = cast(RemoteConfig, source.remote)
    if backfill and "scope" not in remote.options:
        raise RemoteError(f"source {source.name!r}: --backfill needs an Azure source with a scope (see README)")
    with _exclusive(remote.landing, source.name):
        if remote.kind == "s3":
            return _sync_s3(source, remote, month)
        if remote.kind == "bigquery":
            return _sync_bigquery(source, remote, month)
        if remote.kind == "azure_cost_details":
            return _sync_azure_cost_details(source, remote, month)
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


def _limits(remote: RemoteConfig, *names: str) -> dict[str, int]:
    keys = names or ("max_file_bytes", "max_files")
    return {k: int(cast(int, v)) for k, v in remote.options.items() if k in keys}


def _summary(source: SourceConfig, pulled: Sequence[LedgerEntry], unchanged: Sequence[str]) -> SourceSync:
    deliveries = tuple(PulledDelivery(d.billing_period, d.version, len(d.files), d.downloaded_bytes) for d in pulled)
    return SourceSync(source.name, deliveries, tuple(unchanged))


def _sync_s3(source: SourceConfig, remote: RemoteConfig, month: str | None) -> SourceSync:
    from connectors.aws.sync import AwsExportConfig, sync_aws_export

    options = remote.options
    if options.get("discover") is True:  # the bucket and prefix come from the export's definition in AWS
        from connectors.aws.discovery import sync_discovered_export

        result = sync_discovered_export(
            source.name,
            source.format,
            str(options["export"]),
            remote.landing,
            month=month,
            bucket=cast(str | None, options.get("bucket")),
            prefix=cast(str | None, options.get("prefix")),
            region=cast(str | None, options.get("region")),
            endpoint_url=cast(str | None, options.get("endpoint_url")),
            **_limits(remote),
        )
        return _summary(source, result.pulled, result.unchanged)
    config = AwsExportConfig(
        name=source.name,
        bucket=str(options["bucket"]),
        prefix=str(options.get("prefix", "")),
        export=str(options["export"]),
        kind="cur1" if source.format == "aws-cur1" else "data-export",
        region=cast(str | None, options.get("region")),
        endpoint_url=cast(str | None, options.get("endpoint_url")),
        **_limits(remote),
    )
    result = sync_aws_export(config, remote.landing, month=month)
    return _summary(source, result.pulled, result.unchanged)


def _sync_bigquery(source: SourceConfig, remote: RemoteConfig, month: str | None) -> SourceSync:
    from connectors.gcp.sync import GcpExportConfig, sync_gcp_export

    options = remote.options
    config = GcpExportConfig(
        name=source.name,
        project=str(options["project"]),
        dataset=str(options["dataset"]),
        billing_project=cast(str | None, options.get("billing_project")),
        table=cast(str | None, options.get("table")),
        location=cast(str | None, options.get("location")),
        lookups=bool(options.get("lookups", True)),
        **_limits(remote, "months_back", "max_rows"),
    )
    result = sync_gcp_export(config, remote.landing, month=month)
    summary = _summary(source, result.pulled, result.unchanged)
    if result.lookups is None:
        return summary
    return replace(summary, warnings=result.lookups.warnings, linked_projects=result.lookups.linked_projects)


def _sync_azure_blob(source: SourceConfig, remote: RemoteConfig, month: str | None, backfill: bool) -> SourceSync:
    from connectors.azure.costmanagement import sync_export_with_history
    from connectors.azure.sync import AzureExportConfig, sync_azure_export

    options = remote.options
    exports = cast(tuple[str, ...], options["exports"]) if "exports" in options else (str(options["export"]),)
    pulled: list[LedgerEntry] = []
    unchanged: list[str] = []
    if not {"container", "directory"} <= set(options):  # with a scope: taken from the exports' definitions in ARM
        from connectors.azure.costmanagement import sync_discovered_exports

        results = sync_discovered_exports(
            source.name,
            str(options["scope"]),
            exports,
            remote.landing,
            account_url=cast(str | None, options.get("account_url")),
            connection_string_env=cast(str | None, options.get("connection_string_env")),
            container=cast(str | None, options.get("container")),
            directory=cast(str | None, options.get("directory")),
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
            container=str(options["container"]),
            export_path=f"{str(options['directory']).strip('/')}/{export}",
            account_url=cast(str | None, options.get("account_url")),
            connection_string_env=cast(str | None, options.get("connection_string_env")),
            **_limits(remote),
        )
        if "scope" in options:  # only runs the export's ARM run history reports Completed
            scope = str(options["scope"])
            result = sync_export_with_history(config, scope, remote.landing, month=month, backfill=backfill)
        else:
            result = sync_azure_export(config, remote.landing, month=month)
        pulled += result.pulled
        unchanged += [f"{export} {r}" for r in result.unchanged]
    return _summary(source, pulled, unchanged)


def _sync_azure_cost_details(source: SourceConfig, remote: RemoteConfig, month: str | None) -> SourceSync:
    from connectors.azure.costmanagement import CostDetailsConfig, sync_cost_details

    options = remote.options
    config = CostDetailsConfig(
        name=source.name,
        scope=str(options["scope"]),
        source_format=source.format,
        months_back=int(cast(int, options.get("months_back", 2))),
    )
    result = sync_cost_details(config, remote.landing, month=month)
    return _summary(source, result.pulled, result.unchanged)
