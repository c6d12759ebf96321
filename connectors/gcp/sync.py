"""Pull GCP Cloud Billing export rows from BigQuery into the local extract layout ``connectors.gcp.exports`` reads.

``<landing>/<dataset>/<table>/invoice_month=YYYYMM/export_time=<ISO UTC>/part-*.parquet``: the dataset folder
(:attr:`SyncResult.export_folder`) is a source's ``path`` and is discovered and loaded exactly like
extracts made by hand. Per export table of the dataset (discovered with ``tables.list``; the detailed
``resource_v1`` table wins over the standard one of the same account, as in the local reader):

1. one query ``SELECT invoice.month, MAX(export_time) ... WHERE DATE(_PARTITIONTIME) >= @since GROUP BY 1``;
   ``@since`` is the first day of the month ``months_back`` before the current (or requested) invoice month.
   Whether ``_PARTITIONTIME`` is the usage or the export day is unconfirmed (provider-exports §2.3), so the
   bound is generous;
2. every invoice month whose newest export time is later than the newest landed ``export_time=`` folder of
   that month (or that has none) gets one more query for the rows appended since, with explicit columns (the
   top-level fields the loader knows from ``models.gcp`` that the table has): ``WHERE invoice.month = @month
   AND export_time > @previous AND export_time <= @until``. The rows query has no partition filter: an
   invoice month's corrections may sit in any partition. BigQuery bills the bytes of the selected columns;
   :attr:`GcpExportConfig.maximum_bytes_billed` caps a query;
3. the rows arrive as Arrow (no JSON round-trip) and are written as Parquet into a hidden
   ``_writing-...`` folder beside the target, which is then renamed to ``export_time=<@until>``: a crash
   never leaves a folder the loader counts. The delivery is recorded in the ledger (:mod:`connectors.ledger`).

The export table is append-only and ``export_time`` increases with every append, so the union of a month's
folders is the month; a row appended later with an ``export_time`` at or below a landed folder's would be
missed (BigQuery's export does not do that as documented, but a full re-extract of the month fixes it).

Credentials: Application Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud auth
application-default login``, an attached service account). Queries run as jobs in ``billing_project``
(default: ``project``). Retries: the client's default retry (429 ``rateLimitExceeded`` and 5xx, dropped
connections) with exponential backoff up to :attr:`GcpExportConfig.retry_deadline`; every request has a timeout.

Afterwards (``lookups``, default on) :mod:`connectors.gcp.billing` lands the Cloud Billing lookups beside the
tables (account names, project links, SKU list prices the rows lack); their failures are warnings, never errors.
"""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import hashlib
import logging
import re
import shutil
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
from google.api_core import exceptions as api_exceptions
from google.api_core.retry import Retry
from google.auth import exceptions as auth_exceptions
from google.cloud import bigquery
from google.cloud.bigquery.table import RowIterator

from connectors.gcp.billing import BillingClients, BillingLookups, land_lookups
from connectors.gcp.exports import EXPORT_TABLE_NAME, discover_table
from connectors.ledger import SyncResult, atomic_file, now_utc, record_delivery
from connectors.progress import transfer
from models.billing_month import BillingMonth
from models.errors import InputError, RemoteError
from models.gcp import BQ_ARRAYS, BQ_FIELDS, BQ_KEY_VALUE_LISTS, BQ_OBJECTS, GCP_INVOICE_TIME_ZONE
from models.landing import LedgerEntry, LedgerFile, read_ledger

log = logging.getLogger(__name__)

PROVIDER = "gcp"
CREDENTIAL_CHAIN = (
    "Application Default Credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service account key file,"
    " run `gcloud auth application-default login`, or run on Google Cloud with an attached service account"
)
ROLES = "roles/bigquery.dataViewer on the dataset and roles/bigquery.jobUser on the job (billing) project"
_SCOPES = ("https://www.googleapis.com/auth/bigquery",)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_PROJECT = re.compile(r"^[a-z][a-z0-9.:-]{3,}[a-z0-9]$")
_DATASET = re.compile(r"^[A-Za-z0-9_]{1,1024}$")
_PERIOD = re.compile(r"^(?P<year>\d{4})-(?P<month>0[1-9]|1[0-2])$")
# Table kinds holding the billing export rows the ``gcp-bq`` loader reads; the detailed one first.
_ROW_KINDS = ("resource_v1", "v1")
# The top-level columns the loader reads (models.gcp): every other column is left in BigQuery.
LOADER_COLUMNS: frozenset[str] = frozenset(
    path.split(".")[0]
    for path in (*(f.path for f in BQ_FIELDS), *BQ_KEY_VALUE_LISTS, *BQ_OBJECTS, *BQ_ARRAYS, "tags", "credits")
)


@dataclass(frozen=True)
class GcpExportConfig:
    """One BigQuery billing export dataset to pull, and the limits a sync holds it to."""

    name: str
    """Source name, recorded on every ledger entry."""
    project: str
    """Project holding the export dataset."""
    dataset: str
    billing_project: str | None = None
    """Project the query jobs run (and are billed) in; default ``project``."""
    table: str | None = None
    """One export table (``gcp_billing_export_[resource_]v1_<ACCOUNT>``); default: discover them in the dataset."""
    location: str | None = None
    """The dataset's location (``US``, ``europe-west1``) for the query jobs; default: BigQuery finds it."""
    months_back: int = 3
    """Invoice months before the current one whose partitions are checked for appended rows."""
    max_rows: int = 50_000_000
    """Most rows one pull of one invoice month may bring: checked before any row is transferred."""
    rows_per_file: int = 1_000_000
    """Rows per landed Parquet part."""
    maximum_bytes_billed: int | None = None
    """BigQuery refuses a query that would bill more bytes (None: the project's default)."""
    timeout: float = 60.0
    """Seconds per HTTP request."""
    job_timeout: float = 1800.0
    """Seconds to wait for one query to finish and its rows to arrive."""
    retry_deadline: float = 600.0
    """Seconds the client keeps retrying a throttled (429) or failed (5xx) request, with exponential backoff."""
    lookups: bool = True
    """After the rows, land the Cloud Billing lookups (:mod:`connectors.gcp.billing`) in the dataset folder."""

    def __post_init__(self) -> None:
        where = f"GCP export {self.name!r}"
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(where, "'name' must be a non-empty string", column="name")
        for key in ("project", "billing_project"):
            value = getattr(self, key)
            if (value is not None or key == "project") and not (isinstance(value, str) and _PROJECT.match(value)):
                raise InputError(where, f"{key} {value!r} is not a Google Cloud project ID", column=key)
        if not isinstance(self.dataset, str) or not _DATASET.match(self.dataset):
            raise InputError(where, f"dataset {self.dataset!r} is not a BigQuery dataset name", column="dataset")
        if self.table is not None:
            match = EXPORT_TABLE_NAME.match(self.table) if isinstance(self.table, str) else None
            if match is None or match["kind"] not in _ROW_KINDS:
                message = f"table {self.table!r} is not a billing export table (gcp_billing_export_[resource_]v1_...)"
                raise InputError(where, message, column="table")
        if self.months_back < 0:
            raise InputError(where, "'months_back' must be at least 0", column="months_back")
        for key in ("max_rows", "rows_per_file", "timeout", "job_timeout", "retry_deadline"):
            if getattr(self, key) <= 0:
                raise InputError(where, f"{key!r} must be positive", column=key)
        if self.maximum_bytes_billed is not None and self.maximum_bytes_billed < 1:
            raise InputError(where, "'maximum_bytes_billed' must be at least 1", column="maximum_bytes_billed")
        if not isinstance(self.lookups, bool):
            raise InputError(where, "'lookups' must be true or false", column="lookups")

    @property
    def job_project(self) -> str:
        return self.billing_project or self.project


@dataclass(frozen=True)
class GcpSyncResult(SyncResult):
    """A sync's deliveries, plus what its Cloud Billing lookups landed (the CLI reports their warnings)."""

    lookups: BillingLookups | None = None
    """What the Cloud Billing lookups landed and their warnings; None when they did not run."""


def sync_gcp_export(
    config: GcpExportConfig,
    landing_dir: Path,
    *,
    month: str | None = None,
    client: bigquery.Client | None = None,
    billing: BillingClients | None = None,
    now: dt.datetime | None = None,
) -> GcpSyncResult:
    """Land the rows appended since the last sync of every invoice month (or only ``month``, ``YYYY-MM``).

    ``now`` (default: the clock) sets the current invoice month the ``months_back`` window counts from. The
    lookups run with ``billing``, or with default clients when the BigQuery ``client`` is the default one too: a
    caller injecting its own BigQuery client (a test against a stub) injects the billing clients or gets none.
    """
    wanted = _invoice_month(config, month) if month is not None else None
    since = _since(config, wanted, now or dt.datetime.now(dt.UTC))
    export_folder = landing_dir / config.dataset
    read_ledger(landing_dir)  # an unreadable ledger stops the sync before anything is queried
    pulled: list[LedgerEntry] = []
    unchanged: list[str] = []
    default_clients = client is None
    with _remote_errors(config):
        client = client or _default_client(config)
        for table in _export_tables(client, config):
            remote = _remote_months(client, config, table, since)
            landed = _landed_versions(export_folder / table)
            columns: list[str] | None = None
            for invoice_month, until in sorted(remote.items()):
                if wanted is not None and invoice_month != wanted:
                    continue
                period = f"{invoice_month[:4]}-{invoice_month[4:]}"
                previous = landed.get(period)
                if previous is not None and until <= previous:
                    log.info("%s %s %s: rows up to %s already landed", config.name, table, period, _iso(previous))
                    unchanged.append(f"{table}/{period}")
                    continue
                columns = columns or _columns(client, config, table)
                entry = _pull(client, config, landing_dir, table, columns, invoice_month, previous, until)
                if entry is not None:
                    # Recorded per month: a failure in a later month keeps what already landed.
                    record_delivery(landing_dir, entry)
                    pulled.append(entry)
    lookups = None
    if config.lookups and (billing is not None or default_clients):
        lookups = land_lookups(config.name, export_folder, landing_dir, pulled, billing, timeout=config.timeout)
    return GcpSyncResult(export_folder, tuple(pulled), tuple(unchanged), lookups)


def _invoice_month(config: GcpExportConfig, month: str) -> str:
    match = _PERIOD.match(month)
    if match is None:
        raise InputError(f"GCP export {config.name!r}", f"month {month!r} is not YYYY-MM", column="month")
    return match["year"] + match["month"]


def _since(config: GcpExportConfig, wanted: str | None, now: dt.datetime) -> dt.date:
    """First day of the month ``months_back`` before the requested, or the current US/Pacific, invoice month."""
    if wanted is not None:
        invoice_month = BillingMonth(int(wanted[:4]), int(wanted[4:]))
    else:
        invoice_month = BillingMonth.of_day(now.astimezone(ZoneInfo(GCP_INVOICE_TIME_ZONE)).date())
    return invoice_month.shifted(-config.months_back).first_day


def _default_client(config: GcpExportConfig) -> bigquery.Client:
    import google.auth  # the credential chain is only needed when no client is given

    try:
        credentials, _ = google.auth.default(scopes=_SCOPES)
    except auth_exceptions.DefaultCredentialsError as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise RemoteError(
            f"GCP export {config.name!r}: no Google credentials found ({detail}); {CREDENTIAL_CHAIN}"
        ) from None
    return bigquery.Client(project=config.job_project, credentials=credentials, location=config.location)


@contextmanager
def _remote_errors(config: GcpExportConfig) -> Iterator[None]:
    """Turn client failures into one line naming the export and what to fix; never a credential."""
    where = f"GCP export {config.name!r} ({config.project}.{config.dataset})"
    try:
        yield
    except (auth_exceptions.DefaultCredentialsError, auth_exceptions.RefreshError) as exc:
        raise RemoteError(
            f"{where}: the Google credentials cannot be used ({type(exc).__name__}); {CREDENTIAL_CHAIN}"
        ) from None
    except (api_exceptions.Unauthorized, api_exceptions.Forbidden) as exc:
        raise RemoteError(
            f"{where}: BigQuery refused the request (HTTP {exc.code}: {exc.message}); it needs {ROLES}"
        ) from None
    except api_exceptions.NotFound as exc:
        raise RemoteError(f"{where}: not found (HTTP 404: {exc.message})") from None
    except api_exceptions.RetryError as exc:
        cause = exc.cause.message if isinstance(exc.cause, api_exceptions.GoogleAPICallError) else exc.cause
        raise RemoteError(
            f"{where}: BigQuery still failing after {config.retry_deadline:g} s of retries: {cause}"
        ) from None
    except api_exceptions.GoogleAPICallError as exc:
        raise RemoteError(f"{where}: BigQuery answered HTTP {exc.code}: {exc.message}") from None
    except concurrent.futures.TimeoutError:
        raise RemoteError(f"{where}: a query did not finish within job_timeout={config.job_timeout:g} s") from None
    except auth_exceptions.TransportError as exc:
        raise RemoteError(f"{where}: cannot reach Google: {exc}") from None


def _export_tables(client: bigquery.Client, config: GcpExportConfig) -> list[str]:
    """The configured table, or the dataset's billing export tables, the detailed one per account."""
    if config.table is not None:
        return [config.table]
    listed = client.list_tables(f"{config.project}.{config.dataset}", retry=_retry(config), timeout=config.timeout)
    by_account: dict[str, dict[str, str]] = {}
    for item in listed:
        match = EXPORT_TABLE_NAME.match(item.table_id)
        if match is None:
            continue
        if match["kind"] not in _ROW_KINDS:
            log.info("%s: %s is not a billing export row table, skipped", config.name, item.table_id)
            continue
        by_account.setdefault(match["account"], {})[match["kind"]] = item.table_id
    if not by_account:
        raise InputError(
            f"GCP export {config.name!r}",
            f"no billing export table (gcp_billing_export_[resource_]v1_<ACCOUNT>) in"
            f" {config.project}.{config.dataset}",
            column="dataset",
        )
    chosen = []
    for kinds in by_account.values():
        kind = next(k for k in _ROW_KINDS if k in kinds)
        if len(kinds) > 1:
            log.info("%s: the detailed table %s holds the same costs as %s; using it", config.name, kinds[kind],
                     kinds["v1"])  # fmt: skip
        chosen.append(kinds[kind])
    return sorted(chosen)


def _retry(config: GcpExportConfig) -> Retry:
    return bigquery.DEFAULT_RETRY.with_deadline(config.retry_deadline)


def _table_path(config: GcpExportConfig, table: str) -> str:
    return f"`{config.project}.{config.dataset}.{table}`"


def _run(
    client: bigquery.Client, config: GcpExportConfig, sql: str, parameters: Sequence[bigquery.ScalarQueryParameter]
) -> RowIterator:
    job_config = bigquery.QueryJobConfig(
        query_parameters=list(parameters), maximum_bytes_billed=config.maximum_bytes_billed
    )
    job = client.query(
        sql,
        job_config=job_config,
        project=config.job_project,
        location=config.location,
        retry=_retry(config),
        timeout=config.timeout,
    )
    return job.result(retry=_retry(config), timeout=config.job_timeout)


def _remote_months(
    client: bigquery.Client, config: GcpExportConfig, table: str, since: dt.date
) -> dict[str, dt.datetime]:
    """Invoice month ``YYYYMM`` -> its newest export time, over the partitions since ``since``."""
    sql = (
        # BigQuery takes no table parameters: the configured dataset and a listed export table, backquoted
        "SELECT invoice.month AS invoice_month, MAX(export_time) AS max_export_time"  # noqa: S608
        f" FROM {_table_path(config, table)} WHERE DATE(_PARTITIONTIME) >= @since GROUP BY 1"
    )
    rows = _run(client, config, sql, [bigquery.ScalarQueryParameter("since", "DATE", since)])
    months: dict[str, dt.datetime] = {}
    for row in rows:
        month, newest = row["invoice_month"], row["max_export_time"]
        if not (isinstance(month, str) and re.fullmatch(r"\d{4}(0[1-9]|1[0-2])", month)) or newest is None:
            log.warning("%s %s: invoice month %r (newest export %s) skipped", config.name, table, month, newest)
            continue
        months[month] = newest.astimezone(dt.UTC)
    return months


def _landed_versions(table_folder: Path) -> dict[str, dt.datetime]:
    """``YYYY-MM`` -> the newest export time landed for it, read with the loader's own rules."""
    if not table_folder.is_dir():
        return {}
    return {
        str(d.billing_period): dt.datetime.fromisoformat(d.version)
        for d in discover_table(table_folder, "gcp-bq")
        if d.billing_period and d.version
    }


def _columns(client: bigquery.Client, config: GcpExportConfig, table: str) -> list[str]:
    """The table's top-level columns the loader reads, in the table's order."""
    schema = client.get_table(
        f"{config.project}.{config.dataset}.{table}", retry=_retry(config), timeout=config.timeout
    ).schema
    columns = [field.name for field in schema if field.name in LOADER_COLUMNS]
    missing = {"billing_account_id", "invoice", "cost", "export_time"} - set(columns)
    if missing:
        raise InputError(
            f"bigquery://{config.project}.{config.dataset}.{table}",
            f"not a billing export table: no column {', '.join(sorted(missing))}",
        )
    return columns


def _pull(
    client: bigquery.Client,
    config: GcpExportConfig,
    landing_dir: Path,
    table: str,
    columns: list[str],
    invoice_month: str,
    previous: dt.datetime | None,
    until: dt.datetime,
) -> LedgerEntry | None:
    where = f"bigquery://{config.project}.{config.dataset}.{table} invoice_month={invoice_month}"
    sql = (
        # columns the loader reads (models/gcp.py) and the table path, backquoted: BigQuery binds values only
        f"SELECT {', '.join(f'`{c}`' for c in columns)} FROM {_table_path(config, table)}"  # noqa: S608
        " WHERE invoice.month = @month AND export_time > @previous AND export_time <= @until"
    )
    parameters = [
        bigquery.ScalarQueryParameter("month", "STRING", invoice_month),
        bigquery.ScalarQueryParameter("previous", "TIMESTAMP", previous or _EPOCH),
        bigquery.ScalarQueryParameter("until", "TIMESTAMP", until),
    ]
    rows = _run(client, config, sql, parameters)
    if rows.total_rows is not None and rows.total_rows > config.max_rows:
        raise InputError(where, f"{rows.total_rows} appended rows, more than max_rows={config.max_rows}")
    batches = []
    with transfer(where, rows.total_rows, unit="rows") as advance:
        for batch in rows.to_arrow_iterable():  # page by page, so a long pull shows progress
            batches.append(batch)
            advance(batch.num_rows)
    data = pa.Table.from_batches(batches) if batches else pa.table({})
    if data.num_rows == 0:
        log.warning("%s: no rows up to export time %s, nothing landed", where, _iso(until))
        return None
    month_folder = landing_dir / config.dataset / table / f"invoice_month={invoice_month}"
    files, folder = _publish(month_folder, f"export_time={_iso(until)}", data, config.rows_per_file)
    period = f"{invoice_month[:4]}-{invoice_month[4:]}"
    log.info("%s %s %s: landed %d rows appended after %s in %s", config.name, table, period, data.num_rows,
             _iso(previous) if previous else "the start", folder.name)  # fmt: skip
    ledger_files = tuple(
        LedgerFile(name=f.relative_to(landing_dir).as_posix(), bytes=f.stat().st_size, etag="", md5=_md5(f))
        for f in files
    )
    total = sum(f.bytes for f in ledger_files)
    return LedgerEntry(
        provider=PROVIDER,
        source=config.name,
        export=f"{config.project}.{config.dataset}.{table}",
        billing_period=period,
        version=_iso(until),
        manifest=folder.relative_to(landing_dir).as_posix(),
        manifest_etag=rows.job_id or "",
        files=ledger_files,
        bytes=total,
        rows=data.num_rows,
        downloaded_files=len(ledger_files),
        downloaded_bytes=total,
        synced_at=now_utc(),
    )


def _publish(month_folder: Path, name: str, data: pa.Table, rows_per_file: int) -> tuple[list[Path], Path]:
    """Write ``data`` as Parquet parts in a hidden folder, then rename it to ``name``: all or nothing appears."""
    target = month_folder / name
    if target.exists():
        raise InputError(target, "an extract with this export time is already landed")
    temp = month_folder / f"_writing-{name}-{uuid.uuid4().hex[:8]}"
    temp.mkdir(parents=True)
    try:
        for index, start in enumerate(range(0, data.num_rows, rows_per_file)):
            with atomic_file(temp / f"part-{index:05d}.parquet") as out:
                pq.write_table(data.slice(start, rows_per_file), out, compression="zstd")
        temp.rename(target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return sorted(target.glob("part-*.parquet")), target


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(2**20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _iso(moment: dt.datetime) -> str:
    """``2026-12-08T21:14:09.318207Z``: the loader's version spelling, and the landed folder's name."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
