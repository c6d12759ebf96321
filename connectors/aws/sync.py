"""Pull AWS CUR 1 and Data Exports deliveries from S3 into the local mirror that ``connectors.aws.exports`` reads.

``<landing>/<key>`` mirrors each S3 key, so the export folder ``<landing>/<prefix>/<name>``
(:attr:`SyncResult.export_folder`) is a source's ``path`` and is discovered and loaded exactly like a
folder downloaded by hand. Per billing period:

1. list the period's manifest (CUR 1 ``<prefix>/<report>/<yyyymmdd-yyyymmdd>/<report>-Manifest.json``,
   Data Exports ``<prefix>/<export>/metadata/BILLING_PERIOD=YYYY-MM/<export>-Manifest.json``); a data
   folder without one is not a delivery yet;
2. read the manifest, reject any key outside the period's data folder, HEAD every listed file and apply
   the per-file size and file-count limits before anything is downloaded;
3. download what is not landed yet to a hidden temp file beside its target, verify its size (and MD5
   where the ETag is a plain MD5), rename (:func:`connectors.ledger.atomic_file`);
4. write the manifest last, so locally a delivery only counts once all its files are there, then record
   it in the shared sync ledger (:mod:`connectors.ledger`, provider ``aws``).

Credentials come only from boto3's default chain; ``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3`` (read
natively by botocore) or :attr:`AwsExportConfig.endpoint_url` point it at an S3-compatible endpoint.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    CredentialRetrievalError,
    HTTPClientError,
    IncompleteReadError,
    NoCredentialsError,
    PartialCredentialsError,
    ProfileNotFound,
)

from connectors.aws.exports import BILLING_PERIOD_FOLDER, CUR1_RANGE_FOLDER
from connectors.ledger import SyncResult, TransferLimits, atomic_file, now_utc, record_delivery, write_atomically
from connectors.progress import transfer
from models.errors import InputError, RemoteError
from models.landing import LedgerEntry, LedgerFile, read_ledger

log = logging.getLogger(__name__)

PROVIDER = "aws"
_MANIFEST_MAX_BYTES = 64 * 2**20  # a manifest lists columns and keys: a few MB even for huge exports
_CHUNK_BYTES = 2**20
_PLAIN_MD5_ETAG = re.compile(r'^"?([0-9a-fA-F]{32})"?$')
# SSE-KMS objects' ETags are not the MD5 of their bytes, even for single-part uploads.
_KMS_ENCRYPTION = ("aws:kms", "aws:kms:dsse")
CREDENTIAL_CHAIN = (
    "boto3's default credential chain: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE"
    " (~/.aws/credentials, ~/.aws/config, SSO), web identity, or a container/EC2 instance role"
)

CREDENTIAL_ERRORS = (NoCredentialsError, PartialCredentialsError, CredentialRetrievalError, ProfileNotFound)

ExportKind = Literal["cur1", "data-export"]
_MANIFEST_FILES_FIELD: dict[str, str] = {"cur1": "reportKeys", "data-export": "dataFiles"}
_MANIFEST_VERSION_FIELD: dict[str, str] = {"cur1": "assemblyId", "data-export": "executionId"}


@dataclass(frozen=True)
class AwsExportConfig(TransferLimits):
    """One AWS export to pull: where its deliveries are in S3, and the limits a sync holds them to."""

    name: str
    """Source name, recorded on every ledger entry."""
    bucket: str
    prefix: str
    """S3 prefix the report/export was configured with ('' for none)."""
    export: str
    """CUR 1 report name or Data Exports export name."""
    kind: ExportKind
    region: str | None = None
    """Bucket region; None: the configured default (botocore follows S3's region redirects)."""
    endpoint_url: str | None = None
    """S3-compatible endpoint; None: AWS_ENDPOINT_URL(_S3) or the config file, else AWS."""

    def __post_init__(self) -> None:
        where = f"AWS export {self.name!r}"
        for key in ("name", "bucket", "export"):
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise InputError(where, f"{key!r} must be a non-empty string", column=key)
        if self.kind not in _MANIFEST_FILES_FIELD:
            raise InputError(where, "kind must be 'cur1' or 'data-export'", column="kind")
        if "/" in self.export or self.export in (".", ".."):
            raise InputError(where, "export must be a name, not a path", column="export")
        if any(part in ("", ".", "..") for part in self.prefix.strip("/").split("/")) and self.prefix.strip("/"):
            raise InputError(where, f"prefix {self.prefix!r} has empty, '.' or '..' segments", column="prefix")
        self.check_limits(where)

    @property
    def export_prefix(self) -> str:
        """``<prefix>/<export>/``: every key of the export starts with it."""
        return "/".join(p for p in (self.prefix.strip("/"), self.export) if p) + "/"


@dataclass(frozen=True)
class _Object:
    key: str
    size: int
    etag: str
    modified: float | None = None
    """LastModified (POSIX seconds) where the listing gave it."""


@dataclass(frozen=True)
class _ManifestRef:
    obj: _Object
    billing_period: str
    data_prefix: str
    """Keys the manifest may list start with this: the period's data folder."""


class _TransferError(Exception):
    """A download that arrived short, long or with the wrong MD5."""


def sync_aws_export(
    config: AwsExportConfig,
    landing_dir: Path,
    *,
    month: str | None = None,
    session: boto3.Session | None = None,
) -> SyncResult:
    """Land every billing period's current delivery (or only ``month``, ``YYYY-MM``) under ``landing_dir``."""
    entries = read_ledger(landing_dir)
    pulled: list[LedgerEntry] = []
    unchanged: list[str] = []
    with _remote_errors(config):
        client = _s3_client(config, session)
        for ref in _list_manifests(client, config):
            if month is not None and ref.billing_period != month:
                continue
            if _already_landed(landing_dir, entries, config, ref):
                log.info("%s %s: manifest unchanged, nothing to pull", config.name, ref.billing_period)
                unchanged.append(ref.billing_period)
                continue
            delivery = _pull(client, config, landing_dir, ref, entries)
            # Recorded per delivery: a failure in a later period keeps what already landed.
            record_delivery(landing_dir, delivery)
            entries.append(delivery)
            pulled.append(delivery)
    return SyncResult(landing_dir / config.export_prefix.rstrip("/"), tuple(pulled), tuple(unchanged))


def _s3_client(config: AwsExportConfig, session: boto3.Session | None) -> Any:
    session = session or boto3.Session()
    # Checked up front: otherwise the first request fails deep in botocore with a generic message.
    if session.get_credentials() is None:
        raise RemoteError(f"AWS export {config.name!r}: no AWS credentials found by {CREDENTIAL_CHAIN}")
    retries: Any = {"mode": "standard", "max_attempts": config.max_attempts}
    client_config = Config(retries=retries, connect_timeout=config.connect_timeout, read_timeout=config.read_timeout)
    return session.client("s3", region_name=config.region, endpoint_url=config.endpoint_url, config=client_config)


@contextmanager
def _remote_errors(config: AwsExportConfig) -> Iterator[None]:
    """botocore's errors as one line naming the export (credentials never appear in them)."""
    where = f"s3://{config.bucket}/{config.export_prefix}"
    try:
        yield
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code = error.get("Code", "?")
        hint = " (an object changed while syncing; sync again)" if code in ("PreconditionFailed", "412") else ""
        raise RemoteError(f"{where}: {exc.operation_name} refused: {code} {error.get('Message', '')}{hint}") from None
    except BotoCoreError as exc:
        if isinstance(exc, CREDENTIAL_ERRORS):
            raise RemoteError(f"AWS export {config.name!r}: {exc}; credentials come from {CREDENTIAL_CHAIN}") from None
        raise RemoteError(f"{where}: {exc}") from None


def _list(client: Any, bucket: str, prefix: str, delimiter: str = "") -> tuple[list[_Object], list[str]]:
    """Objects and (with a delimiter) sub-folders under ``prefix``."""
    objects: list[_Object] = []
    folders: list[str] = []
    kwargs = {"Bucket": bucket, "Prefix": prefix} | ({"Delimiter": delimiter} if delimiter else {})
    for page in client.get_paginator("list_objects_v2").paginate(**kwargs):
        objects.extend(
            _Object(o["Key"], o["Size"], o["ETag"], o["LastModified"].timestamp()) for o in page.get("Contents", [])
        )
        folders.extend(p["Prefix"] for p in page.get("CommonPrefixes", []))
    return objects, folders


def _list_manifests(client: Any, config: AwsExportConfig) -> list[_ManifestRef]:
    lister = _cur1_manifests if config.kind == "cur1" else _data_export_manifests
    return sorted(lister(client, config), key=lambda ref: ref.billing_period)


def _cur1_manifests(client: Any, config: AwsExportConfig) -> list[_ManifestRef]:
    root = config.export_prefix
    _, folders = _list(client, config.bucket, root, "/")
    refs = []
    for folder in folders:
        match = CUR1_RANGE_FOLDER.match(folder[len(root) :].rstrip("/"))
        if not match:
            continue
        # Delimited: the period folder's own objects, not every assembly's data files.
        objects, _ = _list(client, config.bucket, folder, "/")
        manifest = next((o for o in objects if o.key == f"{folder}{config.export}-Manifest.json"), None)
        if manifest is None:
            log.info("s3://%s/%s: no manifest yet, not a delivery", config.bucket, folder)
            continue
        refs.append(_ManifestRef(manifest, f"{match.group(1)}-{match.group(2)}", folder))
    return refs


def _data_export_manifests(client: Any, config: AwsExportConfig) -> list[_ManifestRef]:
    root = config.export_prefix
    objects, _ = _list(client, config.bucket, f"{root}metadata/")
    refs = []
    for obj in objects:
        parts = obj.key[len(root) :].split("/")
        match = BILLING_PERIOD_FOLDER.match(parts[1]) if len(parts) == 3 else None
        if match and parts[2] == f"{config.export}-Manifest.json":
            refs.append(_ManifestRef(obj, match.group(1), f"{root}data/{parts[1]}/"))
    _, data_folders = _list(client, config.bucket, f"{root}data/", "/")
    for folder in sorted(set(data_folders) - {ref.data_prefix for ref in refs}):
        log.info("s3://%s/%s: data without a manifest, not a delivery yet", config.bucket, folder)
    return refs


def _already_landed(landing_dir: Path, entries: list[LedgerEntry], config: AwsExportConfig, ref: _ManifestRef) -> bool:
    """The same manifest version was pulled and its files are still in place."""
    last = next(
        (e for e in reversed(entries) if _is_export_entry(e, config) and e.manifest == ref.obj.key),
        None,
    )
    return (
        last is not None
        and last.manifest_etag == ref.obj.etag
        and _is_landed(landing_dir / ref.obj.key, ref.obj.size)
        and all(_is_landed(landing_dir / f.name, f.bytes) for f in last.files)
    )


def _is_export_entry(entry: LedgerEntry, config: AwsExportConfig) -> bool:
    return entry.provider == PROVIDER and entry.export == config.export


def _is_landed(path: Path, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size


def _pull(
    client: Any, config: AwsExportConfig, landing_dir: Path, ref: _ManifestRef, entries: list[LedgerEntry]
) -> LedgerEntry:
    manifest_uri = f"s3://{config.bucket}/{ref.obj.key}"
    if ref.obj.size > _MANIFEST_MAX_BYTES:
        raise InputError(manifest_uri, f"manifest of {ref.obj.size} bytes, over the {_MANIFEST_MAX_BYTES} limit")
    buffer = io.BytesIO()
    _fetch(client, config, ref.obj, buffer)
    manifest_bytes = buffer.getvalue()
    manifest = _parse_manifest(manifest_uri, manifest_bytes)
    field = _MANIFEST_FILES_FIELD[config.kind]
    listed = manifest.get(field)
    if not isinstance(listed, list):
        raise InputError(manifest_uri, f"manifest field {field!r} missing or not a list", column=field)
    if len(listed) > config.max_files:
        raise InputError(manifest_uri, f"manifest lists {len(listed)} files, over the limit of {config.max_files}")
    keys = [_bucket_key(config, manifest_uri, ref.data_prefix, raw) for raw in listed]
    if len(set(keys)) != len(keys):
        raise InputError(manifest_uri, "manifest lists a file twice")
    # Every file is checked against the limits before any byte is downloaded.
    remotes = [_head(client, config, manifest_uri, key) for key in keys]
    landed = {(f.name, f.etag, f.bytes): f for e in entries if _is_export_entry(e, config) for f in e.files}
    files: list[LedgerFile] = []
    downloaded: list[LedgerFile] = []
    for remote in remotes:
        target = landing_dir / remote.key
        known = landed.get((remote.key, remote.etag, remote.size))
        if known is not None and _is_landed(target, remote.size):
            files.append(known)
            continue
        with atomic_file(target) as out:
            md5 = _fetch(client, config, remote, out)
        files.append(LedgerFile(name=remote.key, bytes=remote.size, etag=remote.etag, md5=md5))
        downloaded.append(files[-1])
    # The manifest goes last: until it is in place the period's previous delivery (or none) is what counts.
    write_atomically(landing_dir / ref.obj.key, manifest_bytes)
    if ref.obj.modified is not None:  # AWS manifests carry no time: S3's orders the deliveries of a period
        os.utime(landing_dir / ref.obj.key, (ref.obj.modified, ref.obj.modified))
    version = manifest.get(_MANIFEST_VERSION_FIELD[config.kind])
    delivery = LedgerEntry(
        provider=PROVIDER,
        source=config.name,
        export=config.export,
        billing_period=ref.billing_period,
        version=str(version) if version not in (None, "") else "",
        manifest=ref.obj.key,
        manifest_etag=ref.obj.etag,
        files=tuple(files),
        bytes=sum(f.bytes for f in files),
        rows=None,  # neither CUR 1 nor Data Exports manifests state a row count
        downloaded_files=len(downloaded),
        downloaded_bytes=sum(f.bytes for f in downloaded),
        synced_at=now_utc(),
    )
    log.info(
        "%s %s: delivery %s landed, %d file(s), %d downloaded (%d bytes)",
        config.name,
        ref.billing_period,
        delivery.version or "-",
        len(files),
        delivery.downloaded_files,
        delivery.downloaded_bytes,
    )
    return delivery


def _parse_manifest(uri: str, data: bytes) -> dict[str, Any]:
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(uri, f"unreadable manifest: {exc}") from exc
    if not isinstance(manifest, dict):
        raise InputError(uri, "manifest is not a JSON object")
    return manifest


def _bucket_key(config: AwsExportConfig, manifest_uri: str, data_prefix: str, raw: object) -> str:
    """The bucket key of a manifest entry (a key or an ``s3://`` URI), refusing anything outside ``data_prefix``."""
    if not isinstance(raw, str) or not raw:
        raise InputError(manifest_uri, f"manifest lists an invalid key {raw!r}")
    bucket, key = config.bucket, raw
    if raw.startswith("s3://"):
        bucket, _, key = raw.removeprefix("s3://").partition("/")
    if (
        bucket != config.bucket
        or not key.startswith(data_prefix)
        or any(part in ("", ".", "..") for part in key.split("/"))
        or "\\" in key
        or "\0" in key
    ):
        raise InputError(
            manifest_uri,
            f"manifest key {raw!r} points outside the export prefix s3://{config.bucket}/{data_prefix}",
        )
    return key


def _head(client: Any, config: AwsExportConfig, manifest_uri: str, key: str) -> _Object:
    try:
        response = client.head_object(Bucket=config.bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            raise InputError(manifest_uri, f"manifest lists s3://{config.bucket}/{key}, which does not exist") from None
        raise
    obj = _Object(key, int(response["ContentLength"]), response["ETag"])
    if obj.size > config.max_file_bytes:
        raise InputError(
            f"s3://{config.bucket}/{key}",
            f"{obj.size} bytes, over the per-file limit of {config.max_file_bytes} (max_file_bytes)",
        )
    return obj


def _fetch(client: Any, config: AwsExportConfig, obj: _Object, out: BinaryIO) -> str:
    """Stream ``obj`` into ``out``, starting over (``out`` emptied) when a transfer drops or arrives wrong.

    Returns the hex MD5 of the bytes written.
    """
    uri = f"s3://{config.bucket}/{obj.key}"
    for attempt in range(1, config.download_attempts + 1):
        out.seek(0)
        out.truncate()
        try:
            return _copy_verified(client, config.bucket, obj, out)
        except (HTTPClientError, IncompleteReadError, _TransferError) as exc:
            if attempt == config.download_attempts:
                raise RemoteError(f"{uri}: download failed after {attempt} attempt(s): {exc}") from None
            log.warning("%s: attempt %d of %d failed (%s); retrying", uri, attempt, config.download_attempts, exc)
    raise AssertionError("unreachable: download_attempts is at least 1")


def _copy_verified(client: Any, bucket: str, obj: _Object, out: BinaryIO) -> str:
    """Stream ``obj`` into ``out``; its hex MD5, or _TransferError when its size or plain-MD5 ETag disagree."""
    # IfMatch: an object replaced since it was listed fails (412) instead of mixing versions.
    response = client.get_object(Bucket=bucket, Key=obj.key, IfMatch=obj.etag)
    digest = hashlib.md5(usedforsecurity=False)
    received = 0
    with transfer(f"s3://{bucket}/{obj.key}", obj.size) as advance:
        for chunk in response["Body"].iter_chunks(_CHUNK_BYTES):
            received += len(chunk)
            if received > obj.size:
                raise _TransferError(f"more than the {obj.size} bytes listed")
            digest.update(chunk)
            out.write(chunk)
            advance(len(chunk))
    if received != obj.size:
        raise _TransferError(f"received {received} of {obj.size} bytes")
    expected = _PLAIN_MD5_ETAG.match(obj.etag)
    encrypted = response.get("ServerSideEncryption") in _KMS_ENCRYPTION or "SSECustomerAlgorithm" in response
    if expected and not encrypted and digest.hexdigest() != expected.group(1).lower():
        raise _TransferError(f"MD5 {digest.hexdigest()} differs from the ETag {obj.etag}")
    return digest.hexdigest()
