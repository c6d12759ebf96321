"""Pull Azure Cost Management export runs from Blob Storage into the local mirror ``connectors.azure.exports`` reads.

``<landing>/<container>/<blob name>`` mirrors each blob, so the export folder
``<landing>/<container>/<directory>/<export>`` (:attr:`SyncResult.export_folder`) is a source's ``path``
and is discovered and loaded exactly like a container downloaded by hand. Per date-range folder:

1. list the export's blobs once; every ``manifest.json`` (or legacy ``_manifest.json``) at
   ``<range>/[<run time>/]<run id>/`` is a run; pick the newest complete one with the same rule as the local
   reader (:func:`connectors.azure.exports.run_manifest`); parts without a manifest are not a delivery yet;
2. reject blob names outside ``<directory>/<export>/<range>/``, blobs missing from the listing, sizes that
   differ from the manifest's ``byteCount``, and the per-file size and file-count limits, before anything
   is downloaded;
3. download what is not landed yet (same name, size and ETag) to a hidden temp file beside its target,
   pinned to the listed ETag, verify its size and Content-MD5 (when the service has one), rename;
4. write the manifest last, so locally a run only counts once all its parts are there, then record the
   delivery in the ledger (:mod:`connectors.ledger`).

Credentials: the connection string in the environment variable named by
:attr:`AzureExportConfig.connection_string_env`, else ``DefaultAzureCredential`` for
:attr:`AzureExportConfig.account_url`. Neither the string nor a key is ever logged or put in an error.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from azure.core import MatchConditions
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
from azure.storage.blob import BlobProperties, ContainerClient, ExponentialRetry

from connectors.azure.exports import (
    RunManifest,
    blob_path,
    is_run_manifest,
    parse_manifest,
    period_of_range,
    run_manifest,
)
from connectors.ledger import SyncResult, TransferLimits, atomic_file, now_utc, record_delivery
from connectors.progress import transfer
from models.config import url_carries_secret
from models.errors import InputError, RemoteError
from models.landing import LedgerEntry, LedgerFile, read_ledger

log = logging.getLogger(__name__)

PROVIDER = "azure"
_STORAGE_SCOPE = "https://storage.azure.com/.default"
_MANIFEST_MAX_BYTES = 64 * 2**20  # a manifest lists parts and config: kilobytes even for huge exports
CREDENTIAL_CHAIN = (
    "DefaultAzureCredential's chain: AZURE_TENANT_ID/AZURE_CLIENT_ID with AZURE_CLIENT_SECRET or"
    " AZURE_CLIENT_CERTIFICATE_PATH, workload identity, managed identity, Azure CLI (az login),"
    " Azure PowerShell, Azure Developer CLI"
)
# Transfer failures worth another attempt: a dropped connection, a short or undecodable body.
_TRANSFER_ERRORS = (ServiceResponseError, IncompleteReadError, DecodeError)


@dataclass(frozen=True)
class AzureExportConfig(TransferLimits):
    """One Cost Management export to pull: where its runs are in Blob Storage, and the limits a sync holds them to."""

    name: str
    """Source name, recorded on every ledger entry."""
    container: str
    export_path: str
    """``<directory>/<export name>`` inside the container (the export's root folder path and name)."""
    account_url: str | None = None
    """``https://<account>.blob.core.windows.net``: authenticated with DefaultAzureCredential."""
    connection_string_env: str | None = None
    """Name of the environment variable holding a storage connection string (never the string itself)."""
    backoff_seconds: float = 1.0
    """First retry delay; retry n waits backoff_seconds + 2**n seconds (Storage's ExponentialRetry), +-3 s jitter."""

    def __post_init__(self) -> None:
        where = f"Azure export {self.name!r}"
        for key in ("name", "container", "export_path"):
            if not isinstance(getattr(self, key), str) or not getattr(self, key).strip("/"):
                raise InputError(where, f"{key!r} must be a non-empty string", column=key)
        if "/" in self.container:
            raise InputError(where, "container must be a name, not a path", column="container")
        if any(part in ("", ".", "..") for part in self.export_path.strip("/").split("/")):
            raise InputError(where, f"export_path {self.export_path!r} has empty, '.' or '..' segments", "export_path")
        if (self.account_url is None) == (self.connection_string_env is None):
            raise InputError(where, "set exactly one of account_url and connection_string_env", column="account_url")
        if self.account_url is not None and url_carries_secret(self.account_url):
            # A SAS token or user info in the URL would be a secret in the config file.
            raise InputError(where, "account_url must not carry a SAS token or credentials", column="account_url")
        self.check_limits(where)

    @property
    def export_prefix(self) -> str:
        """``<directory>/<export>/``: every blob of the export starts with it."""
        return self.export_path.strip("/") + "/"


@dataclass(frozen=True)
class _RemoteRun:
    range_name: str
    manifest: BlobProperties
    data: bytes
    """The manifest's bytes, landed as they were read."""
    run: RunManifest


class _TransferError(Exception):
    """A download that arrived short, long or with the wrong MD5."""


def sync_azure_export(
    config: AzureExportConfig,
    landing_dir: Path,
    *,
    month: str | None = None,
    credential: TokenCredential | None = None,
    accept_run: Callable[[str, RunManifest], bool] | None = None,
) -> SyncResult:
    """Land the newest complete run of every date range (or only ``month``, ``YYYY-MM``) under ``landing_dir``.

    ``accept_run(manifest blob name, run)`` narrows which complete runs count, e.g. to those the export's ARM run
    history reports Completed (:mod:`connectors.azure.costmanagement`); a refused run is never pulled.
    """
    entries = read_ledger(landing_dir)
    pulled: list[LedgerEntry] = []
    unchanged: list[str] = []
    with _remote_errors(config), _container_client(config, credential) as client:
        listing = {blob.name: blob for blob in client.list_blobs(name_starts_with=config.export_prefix)}
        for range_name, remote in sorted(_newest_runs(client, config, listing, accept_run).items()):
            if month is not None and period_of_range(range_name) != month:
                continue
            if any(_is_same_run(entry, config, remote) for entry in entries):
                log.info("%s %s: run %s already landed", config.name, range_name, remote.run.run_id)
                unchanged.append(range_name)
                continue
            entry = _pull(client, config, landing_dir, remote, listing, entries)
            # Recorded per run: a failure in a later range keeps what already landed.
            record_delivery(landing_dir, entry)
            entries.append(entry)
            pulled.append(entry)
    export_folder = landing_dir / config.container / config.export_path.strip("/")
    return SyncResult(export_folder, tuple(pulled), tuple(unchanged))


@contextmanager
def _container_client(config: AzureExportConfig, credential: TokenCredential | None) -> Iterator[ContainerClient]:
    settings = {
        # Storage's own policy (not azure-core's RetryPolicy, which the Storage pipeline cannot run): it retries
        # 408, 5xx (Storage throttles with 503 ServerBusy, not 429) and dropped connections.
        "retry_policy": ExponentialRetry(
            initial_backoff=config.backoff_seconds, increment_base=2, retry_total=config.max_attempts - 1
        ),
        "connection_timeout": config.connect_timeout,
        "read_timeout": config.read_timeout,
    }
    where = f"Azure export {config.name!r}"
    if config.connection_string_env is not None:
        connection_string = os.environ.get(config.connection_string_env)
        if not connection_string:
            raise RemoteError(
                f"{where}: environment variable {config.connection_string_env} (the storage connection string)"
                " is not set"
            )
        try:
            client = ContainerClient.from_connection_string(connection_string, config.container, **settings)
        except ValueError:
            # The SDK's message may quote the string: name the variable only.
            raise RemoteError(f"{where}: {config.connection_string_env} is not a valid connection string") from None
    else:
        from azure.identity import DefaultAzureCredential  # imported late: it pulls in msal, unused with a string

        credential = credential or DefaultAzureCredential()
        # Fail fast: inside the client a missing credential would be retried like a throttled request.
        credential.get_token(_STORAGE_SCOPE)
        try:
            client = ContainerClient(str(config.account_url), config.container, credential=credential, **settings)
        except ValueError as exc:  # e.g. a token credential over plain http
            raise RemoteError(f"{where}: cannot use account_url {config.account_url}: {exc}") from None
    with client:
        yield client


@contextmanager
def _remote_errors(config: AzureExportConfig) -> Iterator[None]:
    """Turn SDK failures into one line naming the export and what to fix; never the credential itself."""
    where = f"Azure export {config.name!r} ({config.container}/{config.export_prefix})"
    try:
        yield
    except ClientAuthenticationError as exc:
        if exc.status_code in (401, 403):
            raise RemoteError(
                f"{where}: the storage account refused the credential (HTTP {exc.status_code} {exc.error_code}):"
                " it needs the Storage Blob Data Reader role on the container, or a valid connection string"
            ) from None
        hint = f"or set connection_string_env to a variable holding a connection string: {CREDENTIAL_CHAIN}"
        raise RemoteError(f"{where}: no Azure credential found by DefaultAzureCredential, {hint}") from None
    except ResourceNotFoundError as exc:
        raise RemoteError(f"{where}: not found ({exc.error_code or exc.status_code})") from None
    except HttpResponseError as exc:
        raise RemoteError(f"{where}: the storage service answered HTTP {exc.status_code} {exc.error_code}") from None
    except ServiceRequestError as exc:
        raise RemoteError(f"{where}: cannot reach the storage account: {exc.message}") from None
    except AzureError as exc:
        raise RemoteError(f"{where}: {type(exc).__name__}: {exc.message}") from None


def _newest_runs(
    client: ContainerClient,
    config: AzureExportConfig,
    listing: dict[str, BlobProperties],
    accept_run: Callable[[str, RunManifest], bool] | None = None,
) -> dict[str, _RemoteRun]:
    """Date-range folder name -> its newest complete run (the rule of ``connectors.azure.exports.newest_runs``)."""
    complete: dict[str, list[_RemoteRun]] = {}
    for name, props in sorted(listing.items()):
        range_name, _, below = name[len(config.export_prefix) :].partition("/")
        relative = PurePosixPath(below) if below else None
        if relative is None or not is_run_manifest(relative):
            continue
        if period_of_range(range_name) is None:
            log.warning("%s: not a monthly date range, skipped", name)
            continue
        if props.size > _MANIFEST_MAX_BYTES:
            raise InputError(_where(config, name), f"manifest has {props.size} bytes, more than a manifest can be")
        data = _download_verified(client, config, props, None)[0]
        manifest = parse_manifest(data, _where(config, name))
        run = run_manifest(manifest, _where(config, name), relative, props.last_modified.timestamp())
        if run is not None and (accept_run is None or accept_run(name, run)):
            complete.setdefault(range_name, []).append(_RemoteRun(range_name, props, data, run))
    return {name: max(runs, key=lambda r: r.run.order_key) for name, runs in complete.items()}


def _is_same_run(entry: LedgerEntry, config: AzureExportConfig, remote: _RemoteRun) -> bool:
    return (
        entry.provider == PROVIDER
        and entry.export == config.export_path.strip("/")
        and entry.manifest == remote.manifest.name
        and entry.manifest_etag == remote.manifest.etag
    )


def _pull(
    client: ContainerClient,
    config: AzureExportConfig,
    landing_dir: Path,
    remote: _RemoteRun,
    listing: dict[str, BlobProperties],
    entries: list[LedgerEntry],
) -> LedgerEntry:
    where = _where(config, remote.manifest.name)
    if len(remote.run.blobs) > config.max_files:
        raise InputError(where, f"manifest lists {len(remote.run.blobs)} parts, more than max_files={config.max_files}")
    parts: list[BlobProperties] = []
    for blob in remote.run.blobs:
        name = _blob_name(config, remote.range_name, blob.name, where)
        props = listing.get(name)
        if props is None:
            raise InputError(where, f"manifest lists {name!r}, which is not in the container", column="blobs")
        if blob.byte_count is not None and blob.byte_count != props.size:
            raise InputError(where, f"{name} has {props.size} bytes, the manifest says {blob.byte_count}", "byteCount")
        if props.size > config.max_file_bytes:
            raise InputError(where, f"{name} has {props.size} bytes, more than max_file_bytes={config.max_file_bytes}")
        parts.append(props)
    landed = {(f.name, f.etag): f for entry in entries if entry.provider == PROVIDER for f in entry.files}
    files: list[LedgerFile] = []
    downloaded: list[LedgerFile] = []
    for props in parts:
        target = landing_dir / config.container / props.name
        known = landed.get((props.name, props.etag))
        if known is not None and target.is_file() and target.stat().st_size == props.size:
            files.append(known)
            continue
        md5 = _download_verified(client, config, props, target)[1]
        files.append(LedgerFile(name=props.name, bytes=props.size, etag=props.etag, md5=md5))
        downloaded.append(files[-1])
    manifest_path = landing_dir / config.container / remote.manifest.name
    with atomic_file(manifest_path) as out:
        out.write(remote.data)
    modified = remote.manifest.last_modified.timestamp()
    # The local reader breaks ties between runs by the manifest's mtime: keep the service's.
    os.utime(manifest_path, (modified, modified))
    log.info("%s %s: landed run %s, %d of %d parts downloaded", config.name, remote.range_name, remote.run.run_id,
             len(downloaded), len(files))  # fmt: skip
    return LedgerEntry(
        provider=PROVIDER,
        source=config.name,
        export=config.export_path.strip("/"),
        billing_period=period_of_range(remote.range_name),
        version=remote.run.run_id,
        manifest=remote.manifest.name,
        manifest_etag=remote.manifest.etag,
        files=tuple(files),
        bytes=sum(f.bytes for f in files),
        rows=remote.run.rows,
        downloaded_files=len(downloaded),
        downloaded_bytes=sum(f.bytes for f in downloaded),
        synced_at=now_utc(),
    )


def _blob_name(config: AzureExportConfig, range_name: str, raw: str, where: str) -> str:
    """A manifest's blob name (or URL) as a name in the container, refused unless it lies in the run's range."""
    parts = [p for p in blob_path(raw).parts if p != "/"]
    if "://" in raw and config.container in parts[:2]:
        # https://<account>.blob.core.windows.net/<container>/... (Azurite: /<account>/<container>/...)
        parts = parts[parts.index(config.container) + 1 :]
    name = "/".join(parts)
    allowed = f"{config.export_prefix}{range_name}/"
    if ".." in parts or "." in parts or not name.startswith(allowed):
        message = f"manifest blob {raw!r} points outside the export prefix {config.container}/{allowed}"
        raise InputError(where, message, column="blobs")
    return name


def _download_verified(
    client: ContainerClient, config: AzureExportConfig, props: BlobProperties, target: Path | None
) -> tuple[bytes, str]:
    """Download one blob (pinned to its listed ETag) and its hex MD5; retried on dropped, short or corrupt transfers.

    With ``target`` the bytes land there atomically and ``b""`` is returned; without, they are returned.
    """
    last: Exception | None = None
    for attempt in range(1, config.download_attempts + 1):
        try:
            if target is None:
                buffer = io.BytesIO()
                md5 = _copy_verified(client, props, buffer)
                return buffer.getvalue(), md5
            with atomic_file(target) as out:
                md5 = _copy_verified(client, props, out)
            return b"", md5
        except (_TransferError, *_TRANSFER_ERRORS) as exc:
            last = exc
            log.warning("%s: download attempt %d of %d failed: %s", _where(config, props.name), attempt,
                        config.download_attempts, exc)  # fmt: skip
    raise RemoteError(f"{_where(config, props.name)}: download failed {config.download_attempts} times: {last}")


def _copy_verified(client: ContainerClient, props: BlobProperties, out: BinaryIO) -> str:
    """Stream the blob into ``out``; its hex MD5, or _TransferError when size or Content-MD5 disagree."""
    digest = hashlib.md5(usedforsecurity=False)
    size = 0
    stream = client.download_blob(props.name, etag=props.etag, match_condition=MatchConditions.IfNotModified)
    with transfer(f"azure://{client.container_name}/{props.name}", props.size) as advance:
        for chunk in stream.chunks():
            size += len(chunk)
            if size > props.size:
                raise _TransferError(f"more than the listed {props.size} bytes arrived")
            digest.update(chunk)
            out.write(chunk)
            advance(len(chunk))
    if size != props.size:
        raise _TransferError(f"{size} of {props.size} bytes arrived")
    expected = props.content_settings.content_md5
    if expected and bytes(expected) != digest.digest():
        raise _TransferError("the bytes do not match the blob's Content-MD5")
    return digest.hexdigest()


def _where(config: AzureExportConfig, name: str) -> str:
    return f"azure://{config.container}/{name}"
