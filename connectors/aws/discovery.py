"""Find where an AWS export delivers from its definition, and whether it delivered anything since the last sync.

A ``[sources.s3]`` source with ``discover = true`` names its export instead of copying its bucket and prefix out of
the console, so a destination changed in AWS is followed rather than silently synced from the old place:

- Data Exports (formats ``aws-cur2``, ``aws-focus``): ``bcm-data-exports`` ListExports (by name) then GetExport
  give the S3 destination and output settings, and the table the export's query reads, which must be the one the
  source's format normalizes (``COST_AND_USAGE_REPORT`` for CUR 2.0, ``FOCUS_1_*_AWS`` for FOCUS);
- legacy CUR reports (``aws-cur1``): ``cur`` DescribeReportDefinitions.

A bucket, prefix or region also written in the configuration must agree with the definition (a contradiction is
refused, never resolved by guessing), and only Format/Compression pairs that ``connectors.aws.exports`` and the
loader read (gzipped CSV, Parquet) are accepted.

For a Data Export, ListExecutions answers the question a nightly run or a sensor asks every few minutes: has a
delivery succeeded since the newest one landed? If not, S3 is not listed at all (a paginated listing of every
period's manifests otherwise). Legacy CUR has no execution history, so its source is always listed.

Both APIs are served from us-east-1 only. Credentials come from boto3's default chain; the endpoints follow
botocore's own settings (``AWS_ENDPOINT_URL_BCM_DATA_EXPORTS``, ``AWS_ENDPOINT_URL_COST_AND_USAGE_REPORT_SERVICE``,
``AWS_ENDPOINT_URL``, the config file's ``services`` section) unless ``api_endpoint_url`` is given.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from connectors.aws.sync import CREDENTIAL_CHAIN, CREDENTIAL_ERRORS, AwsExportConfig, ExportKind, sync_aws_export
from connectors.ledger import SyncResult, TransferLimits
from models.errors import RemoteError
from models.landing import LedgerEntry, read_ledger

log = logging.getLogger(__name__)

API_REGION = "us-east-1"
"""Data Exports and the CUR API answer in us-east-1 only, whatever region the bucket is in."""
_API_LIMITS = TransferLimits()
"""Attempts and timeouts of the API calls: the same as a sync's S3 requests."""

# The tables each Data Exports format normalizes; FOCUS 1.0 and 1.2 exports are both upgraded to 1.2.
_TABLES: dict[str, tuple[str, ...]] = {
    "aws-cur2": ("COST_AND_USAGE_REPORT",),
    "aws-focus": ("FOCUS_1_0_AWS", "FOCUS_1_2_AWS"),
}
_FROM_TABLE = re.compile(r"\bFROM\s+([A-Za-z0-9_]+)", re.IGNORECASE)
# (Format, Compression) pairs whose files the loader opens: .csv.gz and .snappy.parquet (ZIP is not read).
_READABLE_DATA_EXPORT = {("TEXT_OR_CSV", "GZIP"), ("PARQUET", "PARQUET")}
_READABLE_CUR1 = {("textORcsv", "GZIP"), ("Parquet", "Parquet")}

_DELIVERED = "DELIVERY_SUCCESS"
_RECHECK_WINDOW = timedelta(hours=2)
"""A ledger entry's time is when its download finished, after S3 was listed: an execution that completed while that
sync was downloading (or is stamped by a clock a little off ours) was not seen by it, so executions completed this
long before the newest landing still make the next sync list S3. A false alarm costs one listing, a miss a day."""


@dataclass(frozen=True)
class ExportDestination:
    """Where an export delivers and in what form, as its definition in AWS says."""

    export: str
    kind: ExportKind
    bucket: str
    prefix: str
    region: str | None
    format: str
    compression: str
    versioning: str
    """CREATE_NEW_REPORT or OVERWRITE_REPORT (Data Exports ``Overwrite``, CUR ``ReportVersioning``)."""
    export_arn: str | None = None
    """Data Exports only: the export whose executions tell whether something was delivered since the last sync."""


def sync_discovered_export(
    source: str,
    source_format: str,
    export: str,
    landing_dir: Path,
    *,
    month: str | None = None,
    bucket: str | None = None,
    prefix: str | None = None,
    region: str | None = None,
    endpoint_url: str | None = None,
    api_endpoint_url: str | None = None,
    session: boto3.Session | None = None,
    **limits: int,
) -> SyncResult:
    """Sync ``source`` from wherever its export's definition delivers; S3 is not listed when nothing new was delivered.

    ``bucket``/``prefix``/``region`` (optional) must agree with the definition; ``endpoint_url`` is the S3
    endpoint, ``api_endpoint_url`` the Data Exports / CUR one; ``limits`` are :class:`AwsExportConfig`'s.
    """
    session = session or boto3.Session()
    destination = discover_destination(
        source,
        source_format,
        export,
        bucket=bucket,
        prefix=prefix,
        region=region,
        session=session,
        api_endpoint_url=api_endpoint_url,
    )
    config = AwsExportConfig(
        name=source,
        bucket=destination.bucket,
        prefix=destination.prefix,
        export=destination.export,
        kind=destination.kind,
        region=destination.region,
        endpoint_url=endpoint_url,
        **limits,
    )
    export_folder = landing_dir / config.export_prefix.rstrip("/")
    if destination.export_arn is not None:
        landed = [e for e in read_ledger(landing_dir) if _is_landed_delivery(e, export, month)]
        if landed and not delivered_since(
            source, destination.export_arn, landed[-1], session=session, api_endpoint_url=api_endpoint_url
        ):
            log.info("%s: no execution of %r delivered since the last sync; S3 not listed", source, export)
            return SyncResult(export_folder, (), tuple(sorted({e.billing_period or "-" for e in landed})))
    return sync_aws_export(config, landing_dir, month=month, session=session)


def discover_destination(
    source: str,
    source_format: str,
    export: str,
    *,
    bucket: str | None = None,
    prefix: str | None = None,
    region: str | None = None,
    session: boto3.Session | None = None,
    api_endpoint_url: str | None = None,
) -> ExportDestination:
    """The destination of the export (Data Exports) or report (``aws-cur1``) named ``export``, checked against the
    source's format and against any ``bucket``/``prefix``/``region`` the configuration also gives."""
    session = session or boto3.Session()
    if source_format == "aws-cur1":
        destination = _cur1_destination(source, export, session, api_endpoint_url)
    elif source_format in _TABLES:
        destination = _data_export_destination(source, source_format, export, session, api_endpoint_url)
    else:
        raise RemoteError(f"source {source!r}: format {source_format} has no AWS export definition to discover")
    configured = {"bucket": bucket, "prefix": None if prefix is None else prefix.strip("/"), "region": region}
    for key, value in configured.items():
        if value is not None and value != getattr(destination, key):
            raise RemoteError(
                f"source {source!r}: {key} {value!r} contradicts the definition of {export!r}, which delivers to"
                f" s3://{destination.bucket}/{destination.prefix} in {destination.region or 'an unnamed region'}"
                f" (drop {key!r} or fix it)"
            )
    log.info(
        "%s: %r delivers to s3://%s/%s (%s, %s, %s)",
        source,
        export,
        destination.bucket,
        destination.prefix,
        destination.format,
        destination.compression,
        destination.versioning,
    )
    return destination


def delivered_since(
    source: str,
    export_arn: str,
    landed: LedgerEntry,
    *,
    session: boto3.Session | None = None,
    api_endpoint_url: str | None = None,
) -> bool:
    """Whether an execution of the export reached DELIVERY_SUCCESS after ``landed`` (within the recheck window)."""
    since = datetime.fromisoformat(landed.synced_at) - _RECHECK_WINDOW
    client = _client(session or boto3.Session(), "bcm-data-exports", source, api_endpoint_url)
    with _api_errors(source, "Data Exports"):
        for page in client.get_paginator("list_executions").paginate(ExportArn=export_arn):
            for execution in page.get("Executions", []):
                status = execution.get("ExecutionStatus", {})
                completed = status.get("CompletedAt") or status.get("LastUpdatedAt")
                if status.get("StatusCode") == _DELIVERED and completed is not None and completed > since:
                    return True
    return False


def _is_landed_delivery(entry: LedgerEntry, export: str, month: str | None) -> bool:
    """A delivery of ``export`` that a sync of ``month`` (None: every period) would compare with."""
    return entry.provider == "aws" and entry.export == export and month in (None, entry.billing_period)


def _data_export_destination(
    source: str, source_format: str, export: str, session: boto3.Session, endpoint_url: str | None
) -> ExportDestination:
    client = _client(session, "bcm-data-exports", source, endpoint_url)
    with _api_errors(source, "Data Exports"):
        found = [e for page in client.get_paginator("list_exports").paginate() for e in page.get("Exports", [])]
        arn = next((e["ExportArn"] for e in found if e.get("ExportName") == export), None)
        if arn is None:
            raise RemoteError(_unknown(source, "Data Export", export, [str(e.get("ExportName")) for e in found]))
        response = client.get_export(ExportArn=arn)
    definition = response["Export"]
    status = response.get("ExportStatus", {})
    if status.get("StatusCode") == "UNHEALTHY":
        reason = status.get("StatusReason") or "no reason given"
        log.warning("%s: AWS export %r is UNHEALTHY (%s); its deliveries may have stopped", source, export, reason)
    query = definition.get("DataQuery", {})
    match = _FROM_TABLE.search(query.get("QueryStatement", ""))
    tables = [match.group(1).upper()] if match else list(query.get("TableConfigurations", {}))
    if len(tables) != 1 or tables[0] not in _TABLES[source_format]:
        table = tables[0] if len(tables) == 1 else "an unrecognized table"
        reads = next((fmt for fmt, names in _TABLES.items() if table in names), None)
        raise RemoteError(
            f"source {source!r}: format {source_format} reads {' or '.join(_TABLES[source_format])}, but export"
            f" {export!r} queries {table}" + (f" (format {reads})" if reads else " (not read by gpuledger)")
        )
    s3 = definition["DestinationConfigurations"]["S3Destination"]
    output = s3.get("S3OutputConfigurations", {})
    pair = (output.get("Format", ""), output.get("Compression", ""))
    if pair not in _READABLE_DATA_EXPORT:
        raise RemoteError(_unreadable(source, export, pair, _READABLE_DATA_EXPORT))
    return ExportDestination(
        export=export,
        kind="data-export",
        bucket=s3["S3Bucket"],
        prefix=s3.get("S3Prefix", "").strip("/"),
        region=s3.get("S3Region") or None,
        format=pair[0],
        compression=pair[1],
        versioning=output.get("Overwrite", ""),
        export_arn=arn,
    )


def _cur1_destination(source: str, report: str, session: boto3.Session, endpoint_url: str | None) -> ExportDestination:
    client = _client(session, "cur", source, endpoint_url)
    with _api_errors(source, "Cost and Usage Report"):
        pages = client.get_paginator("describe_report_definitions").paginate()
        found = [d for page in pages for d in page.get("ReportDefinitions", [])]
    definition = next((d for d in found if d.get("ReportName") == report), None)
    if definition is None:
        raise RemoteError(_unknown(source, "Cost and Usage Report", report, [str(d.get("ReportName")) for d in found]))
    pair = (definition.get("Format", ""), definition.get("Compression", ""))
    if pair not in _READABLE_CUR1:
        raise RemoteError(_unreadable(source, report, pair, _READABLE_CUR1))
    if "ATHENA" in definition.get("AdditionalArtifacts", []):
        # Athena integration delivers under <report>/year=/month= folders [unconfirmed], outside the period
        # folders whose manifests the sync and the reader follow.
        raise RemoteError(
            f"source {source!r}: report {report!r} is integrated with Athena, a layout gpuledger does not read;"
            " create a report without Athena integration or a CUR 2.0 Data Export"
        )
    return ExportDestination(
        export=report,
        kind="cur1",
        bucket=definition["S3Bucket"],
        prefix=definition.get("S3Prefix", "").strip("/"),
        region=definition.get("S3Region") or None,
        format=pair[0],
        compression=pair[1],
        versioning=definition.get("ReportVersioning", ""),
    )


def _unknown(source: str, what: str, name: str, found: list[str]) -> str:
    known = ", ".join(sorted(found)) or "none"
    return f"source {source!r}: no {what} named {name!r} in this account (found: {known}); set 'export' to one of them"


def _unreadable(source: str, export: str, pair: tuple[str, str], readable: set[tuple[str, str]]) -> str:
    accepted = " or ".join(f"{fmt}/{compression}" for fmt, compression in sorted(readable))
    return (
        f"source {source!r}: export {export!r} delivers {pair[0] or '?'}/{pair[1] or '?'} files, which gpuledger does"
        f" not read (Format/Compression {accepted})"
    )


def _client(session: boto3.Session, service: str, source: str, endpoint_url: str | None) -> Any:
    # Checked up front, as for S3: otherwise the first call fails deep in botocore with a generic message.
    if session.get_credentials() is None:
        raise RemoteError(f"source {source!r}: no AWS credentials found by {CREDENTIAL_CHAIN}")
    retries: Any = {"mode": "standard", "max_attempts": _API_LIMITS.max_attempts}
    config = Config(retries=retries, connect_timeout=_API_LIMITS.connect_timeout, read_timeout=_API_LIMITS.read_timeout)
    return session.client(service, region_name=API_REGION, endpoint_url=endpoint_url, config=config)


@contextmanager
def _api_errors(source: str, api: str) -> Iterator[None]:
    """botocore's errors as one line naming the source and the API (credentials never appear in them)."""
    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code, message = error.get("Code", "?"), error.get("Message", "")
        raise RemoteError(f"source {source!r}: AWS {api} {exc.operation_name} refused: {code} {message}") from None
    except BotoCoreError as exc:
        if isinstance(exc, CREDENTIAL_ERRORS):
            raise RemoteError(f"source {source!r}: {exc}; credentials come from {CREDENTIAL_CHAIN}") from None
        raise RemoteError(f"source {source!r}: AWS {api}: {exc}") from None
