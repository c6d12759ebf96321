"""The source configuration file (``<home>/gpuledger.toml``): where each provider's exports are.

Holds no secrets: credentials come only from the providers' standard credential chains.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from models.advice import AdviceConfig, parse_advice
from models.allocation import AllocationConfig, parse_allocation
from models.currencies import ISO_4217_CODES
from models.errors import InputError
from models.formats import FORMATS, RemoteKind
from models.landing import read_ledger
from models.telemetry import RUN_GROUP_SOURCES

CONFIG_FILE = "gpuledger.toml"


LANDING_FOLDER = "landing"
"""``<home>/landing/<source name>/``: where ``gpuledger sync`` mirrors a remote source's bucket or container."""

# Remote kinds: (required keys, optional keys); values are strings unless listed below. The formats each kind
# delivers are registered with the formats (models.formats).
_REMOTE_KINDS: dict[RemoteKind, tuple[frozenset[str], frozenset[str]]] = {
    "s3": (
        frozenset({"bucket"}),
        frozenset({"prefix", "export", "region", "endpoint_url", "discover", "max_file_bytes", "max_files"}),
    ),
    "azure_blob": (
        frozenset({"container", "directory"}),
        frozenset(
            {"export", "exports", "account_url", "connection_string_env", "scope", "max_file_bytes", "max_files"}
        ),
    ),
    # the Cost Details API (connectors/azure/costmanagement.py): one report per month and metric
    "azure_cost_details": (frozenset({"scope"}), frozenset({"months_back"})),
    "bigquery": (
        frozenset({"project", "dataset"}),
        frozenset({"billing_project", "table", "location", "months_back", "max_rows", "lookups"}),
    ),
}
_REMOTE_INTEGERS = frozenset({"max_file_bytes", "max_files", "months_back", "max_rows"})
# bigquery ``lookups``: land the Cloud Billing lookups (connectors.gcp.billing) after the rows; default true.
_REMOTE_BOOLEANS = frozenset({"lookups"})


@dataclass(frozen=True, kw_only=True)
class _Remote:
    landing: Path
    """The local mirror of the bucket or container (``<home>/landing/<source name>``)."""


@dataclass(frozen=True, kw_only=True)
class _TransferLimits:
    max_file_bytes: int | None = None
    """Largest data file accepted; None: the connector's default."""
    max_files: int | None = None
    """Most data files one manifest may list; None: the connector's default."""


@dataclass(frozen=True, kw_only=True)
class S3Remote(_TransferLimits, _Remote):
    """``[sources.s3]``: a CUR 1 report or Data Export in an S3 bucket (credentials: the standard AWS chain)."""

    kind: ClassVar[RemoteKind] = "s3"
    export: str
    """The report or export name (default: the source's name)."""
    bucket: str | None = None
    """None only with ``discover``: from the export's definition in AWS."""
    prefix: str | None = None
    """Key prefix of the export; None: the bucket's root, or with ``discover`` the definition's."""
    region: str | None = None
    endpoint_url: str | None = None
    """An S3-compatible server instead of AWS."""
    discover: bool = False
    """Take the bucket and prefix from the export's definition (Data Exports / CUR API)."""


@dataclass(frozen=True, kw_only=True)
class AzureBlobRemote(_TransferLimits, _Remote):
    """``[sources.azure_blob]``: Cost Management export runs in a storage container."""

    kind: ClassVar[RemoteKind] = "azure_blob"
    container: str | None = None
    """None only with ``scope``: from the export's definition in ARM (as is ``directory``)."""
    directory: str | None = None
    export: str | None = None
    """The export's name; ``exports`` instead for a combined format (an ActualCost and an AmortizedCost export)."""
    exports: tuple[str, ...] | None = None
    account_url: str | None = None
    """The account's blob URL (credentials: DefaultAzureCredential); or ``connection_string_env``."""
    connection_string_env: str | None = None
    """The NAME of the variable holding a connection string, never the string."""
    scope: str | None = None
    """ARM scope of the export: only runs its run history reports Completed; can name container and directory."""

    @property
    def export_names(self) -> tuple[str, ...]:
        return self.exports if self.exports is not None else (str(self.export),)


@dataclass(frozen=True, kw_only=True)
class CostDetailsRemote(_Remote):
    """``[sources.azure_cost_details]``: Azure's Cost Details API, one report per month and metric."""

    kind: ClassVar[RemoteKind] = "azure_cost_details"
    scope: str
    months_back: int = 2
    """Months before the current one re-requested each sync (at most 12: what the API serves)."""


@dataclass(frozen=True, kw_only=True)
class BigQueryRemote(_Remote):
    """``[sources.bigquery]``: the Cloud Billing export dataset (credentials: Application Default Credentials)."""

    kind: ClassVar[RemoteKind] = "bigquery"
    project: str
    dataset: str
    billing_project: str | None = None
    """The project that runs (and pays for) the query jobs; None: ``project``."""
    table: str | None = None
    """One export table; None: every billing export table of the dataset."""
    location: str | None = None
    months_back: int | None = None
    """Invoice months re-checked each sync; None: the connector's default."""
    max_rows: int | None = None
    lookups: bool = True
    """Land the Cloud Billing lookups (account names, project links, SKU list prices) after the rows."""


RemoteConfig = S3Remote | AzureBlobRemote | CostDetailsRemote | BigQueryRemote
"""Where ``gpuledger sync`` pulls a source's deliveries from (never a secret: credential chains only)."""
_REMOTE_TYPES: dict[RemoteKind, type[RemoteConfig]] = {
    t.kind: t for t in (S3Remote, AzureBlobRemote, CostDetailsRemote, BigQueryRemote)
}


@dataclass(frozen=True)
class SourceConfig:
    """One export to ingest."""

    name: str
    """Unique name, shown in status and delivery records."""
    format: str
    """Export format: a name registered in ``models.formats.FORMATS``."""
    path: Path
    """Local folder laid out like the export bucket (the report/export folder); relative to home. For a remote
    source, the export folder inside its landing mirror."""
    remote: RemoteConfig | None = None
    supersedes: tuple[str, ...] = ()
    """Sources whose slices this one may take over (a migration, e.g. CUR 1 -> CUR 2.0): without it, a slice
    delivered by another source is refused."""

    @property
    def provider(self) -> str:
        """The provider's key (``models.formats.PROVIDERS``)."""
        return FORMATS[self.format].provider.key


TELEMETRY_KINDS = ("slurm", "prometheus", "files")
# Keys each telemetry kind accepts besides name, kind and cluster; path-valued ones are relative to home.
_TELEMETRY_KEYS = {
    "slurm": {"path", "timezone", "run_group_from", "gpu_map"},
    "prometheus": {"url", "node_label", "instance_label", "token_env", "step_seconds"},
    "files": {"jobs", "samples", "checkpoints", "egress"},
}
_TELEMETRY_PATHS = {"path", "gpu_map", "jobs", "samples", "checkpoints", "egress"}
_TELEMETRY_LISTS = {"run_group_from": RUN_GROUP_SOURCES}
"""Options that are lists, and the values they may hold."""
_TELEMETRY_REQUIRED = {"slurm": {"path"}, "prometheus": {"url"}, "files": set()}
_CLUSTER_FROM_ROWS = {"slurm"}
"""Kinds whose rows may name their cluster (sacct's Cluster column): ``cluster`` is then optional."""


@dataclass(frozen=True)
class TelemetryConfig:
    """One telemetry source: a scheduler's accounting, a metrics server, or plain files."""

    name: str
    """Unique name, recorded on every job and activity row it produces."""
    kind: str
    """``slurm`` (sacct --parsable2 output files), ``prometheus`` (DCGM metrics) or ``files``."""
    cluster: str | None
    """Cluster the jobs and nodes belong to; node names are unique within it. None (slurm only): each row's Cluster."""
    paths: dict[str, Path]
    """slurm: ``path``, ``gpu_map`` (a prolog's CSV of job_id, node, gpus); files: ``jobs``, ``samples``,
    ``checkpoints``, ``egress`` (each a file or folder)."""
    options: dict[str, str | int | tuple[str, ...]]
    """prometheus: ``url``, ``node_label``, ``instance_label``, ``token_env``, ``step_seconds``; slurm: ``timezone``,
    ``run_group_from`` (ordered, some of ``RUN_GROUP_SOURCES``)."""


@dataclass(frozen=True)
class ReportingConfig:
    """Optional conversion of showback into one reporting currency, at dated rates the user provides."""

    currency: str | None = None
    """ISO 4217 code to convert showback into; None keeps every currency separate (never summed)."""
    rates: Path | None = None
    """CSV of ``date, currency, rate``: units of the reporting currency per unit of ``currency`` on ``date``."""


# Days after a billing month ends until its provider's charges are final: AWS finalizes its bill in the first
# weeks (CUR restates until then), Azure closes on the 5th, GCP issues the invoice month early in the next month.
DEFAULT_CLOSE_AFTER_DAYS = {"aws": 14, "azure": 5, "gcp": 5, "focus": 14}


@dataclass(frozen=True)
class MonthsConfig:
    """When a billing month closes (docs/decisions/0009)."""

    close_after_days: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_CLOSE_AFTER_DAYS))
    """Per provider (aws, azure, gcp, focus): days after the month's end until its charges are final. A month
    closes once every provider with charges in it is past its window; its exchange rates are locked then."""


@dataclass(frozen=True)
class IngestConfig:
    """How strict the ingestion contract is and what it holds back for a person to accept (``[ingest]``,
    docs/decisions/0011). A held delivery is loaded and checked but not published until ``gpuledger accept``."""

    strict: bool = False
    """Also reject a delivery in which a descriptive value had to be repaired (``x_SourceChanges``)."""
    hold_empty_slice: bool = True
    """Hold a delivery that would empty a slice holding charges: an empty export is more often a broken one."""
    hold_closed_month_change: Decimal = Decimal("0.05")
    """Hold a restatement moving a closed month's slice total (billed or effective, per currency) by more than
    this share of it; the first delivery of a slice and small restatements go through."""
    hold_open_month_change: Decimal = Decimal("0.5")
    """Hold a delivery of an open month that shrinks a slice's money on the days already published to
    (1 - this share) of it or less, or inflates it to 1 / (1 - this share) or more (0.5: halved or doubled), in any
    currency."""
    hold_usage_outside_period: bool = True
    """Hold a delivery charging usage more than a month outside its billing period (corrections aside)."""
    supersedes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Source name -> the sources whose slices it may take over (``supersedes`` of ``[[sources]]``)."""


@dataclass(frozen=True)
class WarehouseConfig:
    """``[warehouse]``: where the warehouse is (docs/decisions/0020). Without it, the DuckDB file
    ``<home>/warehouse.duckdb`` with one writer; with a ``catalog``, a DuckLake several machines write at once."""

    catalog: str | None = None
    """A DuckLake catalog: ``ducklake:postgres:dbname=... host=...`` (the password from the libpq environment:
    ``PGPASSWORD``, ``PGPASSFILE``, never this file) or ``ducklake:<path>`` for a DuckDB-file catalog."""
    data_path: str | None = None
    """Where the lake writes its Parquet data files: ``s3://bucket/prefix/`` (credentials from the AWS chain:
    environment, profile, instance role) or a folder (relative to the home). Required with ``catalog``."""
    s3_endpoint_url: str | None = None
    """An S3-compatible server instead of AWS, as ``http(s)://host:port`` (path-style addressing)."""
    s3_region: str | None = None
    """The bucket's region; None: the credential chain's."""
    workers: int = 1
    """Ingestion partitions (billing month x provider) ``gpuledger run`` loads at once, each in a process of its
    own, and the parts of one delivery each load stages at once; more than 1 needs a lake (a DuckDB file takes one
    writing process). Allocation and publish wait for all."""
    part_size_mb: int = 1024
    """A delivery's files are staged in parts of at least this many megabytes of files (0: a part per file), each
    in a transaction of its own, then audited and published as one; what its rows are does not depend on it."""

    @property
    def is_lake(self) -> bool:
        return self.catalog is not None

    @property
    def catalog_file(self) -> Path | None:
        """The DuckDB file of a file catalog; None for a catalog on a database server, or no lake."""
        target = _catalog_file(self.catalog) if self.catalog else None
        return Path(target) if target else None

    @property
    def data_folder(self) -> Path | None:
        """The local folder of the data files; None on object storage, or no lake."""
        return Path(self.data_path) if self.data_path and not _is_url(self.data_path) else None


@dataclass(frozen=True)
class Config:
    sources: tuple[SourceConfig, ...]
    telemetry: tuple[TelemetryConfig, ...] = ()
    allocation: AllocationConfig = field(default_factory=AllocationConfig)
    reporting: ReportingConfig = field(default_factory=ReportingConfig)
    months: MonthsConfig = field(default_factory=MonthsConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)
    advice: AdviceConfig = field(default_factory=AdviceConfig)
    warehouse: WarehouseConfig = field(default_factory=WarehouseConfig)


def _read_toml(path: Path) -> dict[str, object]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, f"unreadable configuration: {exc}") from exc


def load_warehouse_config(home: Path) -> WarehouseConfig:
    """``[warehouse]`` of ``<home>/gpuledger.toml`` alone (every command opening the warehouse reads it)."""
    path = home / CONFIG_FILE
    table = _read_toml(path).get("warehouse", {}) if path.exists() else {}
    return _warehouse(path, home, table)


# Sections only the split, showback, the reports and the advice read: changing one reloads no billing data.
_READ_AFTER_INGESTION = frozenset(
    {"telemetry", "allocation", "runs", "teams", "checkpoints", "nodes", "reporting", "advice"}
)


def ingestion_settings(home: Path, provider: str) -> dict[str, object]:
    """What loading ``provider``'s deliveries reads of ``<home>/gpuledger.toml``, as written: its ``[[sources]]`` and
    every other section but those read only after ingestion (a team renamed reloads nothing); an unknown section
    counts, so a section added later makes loads stale rather than skipped."""
    path = home / CONFIG_FILE
    data = _read_toml(path) if path.exists() else {}
    sources = data.get("sources", [])
    return {
        **{key: value for key, value in data.items() if key not in _READ_AFTER_INGESTION | {"sources"}},
        "sources": [s for s in sources if not isinstance(s, dict) or _source_provider(s) in (provider, None)]
        if isinstance(sources, list)
        else sources,
    }


def _source_provider(entry: dict[str, object]) -> str | None:
    """The provider of a ``[[sources]]`` entry as written; None when its format is not one (invalid either way)."""
    fmt = entry.get("format")
    return FORMATS[fmt].provider.key if isinstance(fmt, str) and fmt in FORMATS else None


def load_config(home: Path) -> Config:
    """Read and validate ``<home>/gpuledger.toml``; a missing file means no sources."""
    path = home / CONFIG_FILE
    if not path.exists():
        return Config(sources=())
    data = _read_toml(path)
    sources = []
    for index, entry in enumerate(data.get("sources", []), start=1):
        where = f"[[sources]] #{index}"
        if not isinstance(entry, dict):
            raise InputError(path, f"{where} is not a table")
        remotes = sorted(set(entry) & set(_REMOTE_KINDS))
        unknown = set(entry) - {"name", "format", "path", "supersedes", *_REMOTE_KINDS}
        if unknown:
            raise InputError(path, f"{where}: unknown key(s) {sorted(unknown)}", column=sorted(unknown)[0])
        # a remote source's folder is its landing mirror: a path of its own would be a second truth
        for key in ("name", "format") if remotes else ("name", "format", "path"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise InputError(path, f"{where}: {key!r} must be a non-empty string", column=key)
        if entry["format"] not in FORMATS:
            raise InputError(path, f"{where}: format must be one of {', '.join(FORMATS)}", column="format")
        supersedes = _names(path, f"{where} supersedes", entry.get("supersedes", []), "supersedes")
        if not remotes:
            sources.append(SourceConfig(entry["name"], entry["format"], home / entry["path"], supersedes=supersedes))
            continue
        if len(remotes) > 1 or "path" in entry:
            message = f"{where}: give one remote ({' or '.join(_REMOTE_KINDS)}) or a path"
            raise InputError(path, message, column=remotes[0])
        remote = _remote(path, where, home / LANDING_FOLDER / entry["name"], entry["format"], remotes[0], entry)
        folder = _export_folder(remote, entry["format"])
        sources.append(SourceConfig(entry["name"], entry["format"], folder, remote, supersedes))
    names = [s.name for s in sources]
    if len(names) != len(set(names)):
        raise InputError(path, "source names must be unique", column="name")
    telemetry = _telemetry(path, home, data.get("telemetry", []))
    return Config(
        sources=tuple(sources),
        telemetry=telemetry,
        allocation=parse_allocation(path, data),
        reporting=_reporting(path, home, data.get("reporting", {})),
        months=_months(path, data.get("months", {})),
        ingest=_ingest(path, data.get("ingest", {}), sources),
        advice=parse_advice(path, home, data.get("advice", {})),
        warehouse=_warehouse(path, home, data.get("warehouse", {})),
    )


_WAREHOUSE_KEYS = ("catalog", "data_path", "s3_endpoint_url", "s3_region")
_WAREHOUSE_NUMBERS = ("workers", "part_size_mb")
_MAX_WORKERS = 64


WAREHOUSE_ENVIRONMENT = {"catalog": "GPULEDGER_WAREHOUSE_CATALOG", "data_path": "GPULEDGER_WAREHOUSE_DATA_PATH"}
"""Where ``[warehouse]`` does not say, these environment variables give ``catalog`` and ``data_path`` (containers
are configured by their environment)."""


def _warehouse(path: Path, home: Path, table: object) -> WarehouseConfig:
    if not isinstance(table, dict):
        raise InputError(path, "[warehouse] must be a table", column="warehouse")
    table = {key: os.environ[name] for key, name in WAREHOUSE_ENVIRONMENT.items() if os.environ.get(name)} | table
    unknown = sorted(set(table) - {*_WAREHOUSE_KEYS, *_WAREHOUSE_NUMBERS})
    if unknown:
        raise InputError(path, f"[warehouse]: unknown key(s) {unknown}", column=f"warehouse.{unknown[0]}")
    for key in _WAREHOUSE_KEYS:
        if key in table and (not isinstance(table[key], str) or not table[key]):
            raise InputError(path, f"[warehouse] {key} must be a non-empty string", column=f"warehouse.{key}")
    workers = table.get("workers", 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= _MAX_WORKERS:
        raise InputError(path, f"[warehouse] workers must be 1 to {_MAX_WORKERS}", column="warehouse.workers")
    part_size_mb = table.get("part_size_mb", WarehouseConfig.part_size_mb)
    if isinstance(part_size_mb, bool) or not isinstance(part_size_mb, int) or part_size_mb < 0:
        raise InputError(
            path, "[warehouse] part_size_mb must be a whole number, 0 or more", column="warehouse.part_size_mb"
        )
    if not set(table) - set(_WAREHOUSE_NUMBERS):
        if workers > 1:
            raise InputError(path, "[warehouse] workers > 1 needs a lake catalog", column="warehouse.workers")
        return WarehouseConfig(part_size_mb=part_size_mb)
    catalog, data_path = table.get("catalog"), table.get("data_path")
    if not isinstance(catalog, str) or not catalog.startswith("ducklake:"):
        raise InputError(
            path, "[warehouse] catalog must be a DuckLake catalog (ducklake:...)", column="warehouse.catalog"
        )
    if not isinstance(data_path, str):
        raise InputError(path, "[warehouse] data_path is required with a catalog", column="warehouse.data_path")
    endpoint = table.get("s3_endpoint_url")
    if isinstance(endpoint, str) and not endpoint.startswith(("http://", "https://")):
        raise InputError(
            path, "[warehouse] s3_endpoint_url must be http(s)://host:port", column="warehouse.s3_endpoint_url"
        )
    file = _catalog_file(catalog)
    if file and workers > 1:
        raise InputError(
            path,
            f"[warehouse] workers = {workers} needs a catalog on a database server: a DuckDB-file catalog ({file})"
            " takes one writing process, so parallel loads would fail on its lock; set workers = 1 or use a"
            " Postgres catalog (ducklake:postgres:...)",
            column="warehouse.workers",
        )
    return WarehouseConfig(
        catalog=f"ducklake:{home / file}" if file else catalog,
        data_path=data_path if _is_url(data_path) else str(home / data_path),
        s3_endpoint_url=endpoint if isinstance(endpoint, str) else None,
        s3_region=str(table["s3_region"]) if "s3_region" in table else None,
        workers=workers,
        part_size_mb=part_size_mb,
    )


def _catalog_file(catalog: str) -> str | None:
    """The path of a DuckDB-file catalog (``ducklake:<path>``, relative to the home as written); None for a catalog on
    a database server (``ducklake:postgres:...``, ``sqlite:``, ``mysql:``)."""
    target = catalog.removeprefix("ducklake:")
    return None if ":" in target else target


def _is_url(location: str) -> bool:
    """Object storage (``s3://...``) rather than a folder."""
    return "://" in location


def _names(path: Path, where: str, value: object, column: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(path, f"{where} must be a list of names", column=column)
    return tuple(value)


_INGEST_SWITCHES = ("strict", "hold_empty_slice", "hold_usage_outside_period")
_INGEST_SHARES = {"hold_closed_month_change": False, "hold_open_month_change": True}
"""``[ingest]`` shares, and whether each must stay below 1."""


def _ingest(path: Path, table: object, sources: list[SourceConfig]) -> IngestConfig:
    """``[ingest]``: the contract's switches and hold threshold; ``supersedes`` comes from ``[[sources]]``."""
    if not isinstance(table, dict):
        raise InputError(path, "[ingest] must be a table", column="ingest")
    unknown = sorted(set(table) - {*_INGEST_SWITCHES, *_INGEST_SHARES})
    if unknown:
        raise InputError(path, f"[ingest]: unknown key(s) {unknown}", column=f"ingest.{unknown[0]}")
    switches = {}
    for key in _INGEST_SWITCHES:
        value = table.get(key, getattr(IngestConfig, key))
        if not isinstance(value, bool):
            raise InputError(path, f"[ingest] {key} must be true or false", column=f"ingest.{key}")
        switches[key] = value
    shares = {key: _share(path, table, key, below_one) for key, below_one in _INGEST_SHARES.items()}
    # a superseded source may be gone from the file already (the migration is done): any name goes
    supersedes = {s.name: s.supersedes for s in sources if s.supersedes}
    return IngestConfig(**switches, **shares, supersedes=supersedes)


def _share(path: Path, table: dict[str, object], key: str, below_one: bool) -> Decimal:
    """An ``[ingest]`` share: a number >= 0 (and < 1 where its complement divides)."""
    value = table.get(key, getattr(IngestConfig, key))
    try:
        if isinstance(value, bool):
            raise InvalidOperation
        share = Decimal(str(value))
    except InvalidOperation:
        share = Decimal(-1)
    if not (share >= 0 and (share < 1 or not below_one)):
        bound = "between 0 and 1 (excluded)" if below_one else ">= 0"
        raise InputError(path, f"[ingest] {key} must be a share {bound}", column=f"ingest.{key}")
    return share


def _remote(
    path: Path, where: str, landing: Path, fmt: str, kind: RemoteKind, entry: dict[str, object]
) -> RemoteConfig:
    table = entry[kind]
    required, optional = _REMOTE_KINDS[kind]
    where = f"{where} {kind}"
    if not isinstance(table, dict):
        raise InputError(path, f"{where} must be a table", column=kind)
    if kind not in FORMATS[fmt].remotes:
        serves = ", ".join(name for name, f in FORMATS.items() if kind in f.remotes)
        raise InputError(path, f"{where} delivers {serves}, not {fmt}", column="format")
    unknown = sorted(set(table) - required - optional)
    if unknown:
        raise InputError(path, f"{where}: unknown key(s) {unknown}", column=f"{kind}.{unknown[0]}")
    options: dict[str, object] = {}
    for key, value in table.items():
        if key in _REMOTE_INTEGERS:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(path, f"{where}: {key!r} must be a positive integer", column=f"{kind}.{key}")
            options[key] = value
        elif key in _REMOTE_BOOLEANS:
            if not isinstance(value, bool):
                raise InputError(path, f"{where}: {key!r} must be true or false", column=f"{kind}.{key}")
            options[key] = value
        elif key == "exports":
            if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
                raise InputError(path, f"{where}: 'exports' must be a list of names", column=f"{kind}.exports")
            options[key] = tuple(value)
        elif key == "discover":
            if not isinstance(value, bool):
                raise InputError(path, f"{where}: 'discover' must be true or false", column=f"{kind}.discover")
            options[key] = value
        elif not isinstance(value, str) or (not value and key != "prefix"):
            raise InputError(path, f"{where}: {key!r} must be a non-empty string", column=f"{kind}.{key}")
        else:
            options[key] = value
    # discover = true reads the bucket (and prefix) from the export's definition in AWS: connectors.aws.discovery
    discovered = {"bucket"} if options.get("discover") is True else set()
    if kind == "azure_blob" and "scope" in options:  # from the definition in ARM: connectors.azure.costmanagement
        discovered = {"container", "directory"}
    missing = sorted(required - set(options) - discovered)
    if missing:
        hint = " (or set 'scope' to take it from the export's definition)" if kind == "azure_blob" else ""
        raise InputError(path, f"{where}: {missing[0]!r} is required{hint}", column=f"{kind}.{missing[0]}")
    if kind == "s3":
        options.setdefault("export", str(entry["name"]))  # the report or export is usually named like the source
    if kind == "azure_cost_details" and int(options.get("months_back", 2)) > 12:  # the current month and 12 before
        raise InputError(path, f"{where}: 'months_back' must be at most 12", column=f"{kind}.months_back")
    if kind == "azure_blob":
        # the combined format reads an ActualCost and an AmortizedCost export side by side
        wanted = "exports" if fmt == "azure-cost-details" else "export"
        if wanted not in options or ({"export", "exports"} - {wanted}) & set(options):
            raise InputError(path, f"{where}: format {fmt} takes {wanted!r}", column=f"{kind}.{wanted}")
        if ("account_url" in options) == ("connection_string_env" in options):
            message = f"{where}: set one of 'account_url' and 'connection_string_env'"
            raise InputError(path, message, column=f"{kind}.account_url")
        if url_carries_secret(str(options.get("account_url", ""))):  # never echoed: the token is a secret
            message = (
                f"{where}: account_url carries a SAS token or credentials, a secret this file must not hold; give the"
                " account's URL alone (https://<account>.blob.core.windows.net) with DefaultAzureCredential, or the"
                " name of an environment variable holding a connection string as connection_string_env"
            )
            raise InputError(path, message, column=f"{kind}.account_url")
    return _REMOTE_TYPES[kind](landing=landing, **options)  # keys are the fields, checked above


def url_carries_secret(url: str) -> bool:
    """Whether ``url`` holds more than a location: a query (a SAS token), a fragment or user info."""
    parts = urlsplit(url)
    return bool(parts.query or parts.fragment or parts.username or parts.password)


def _export_folder(remote: RemoteConfig, fmt: str) -> Path:
    """The export folder the remote's connector lands deliveries in, which discovery then reads."""
    match remote:
        case BigQueryRemote():  # a dataset folder: one folder per billing export table
            return remote.landing / remote.dataset
        case S3Remote(discover=True, prefix=None):
            return _discovered_export_folder(remote, fmt)
        case S3Remote():
            prefix = (remote.prefix or "").strip("/")
            return remote.landing.joinpath(*prefix.split("/"), remote.export)
        case CostDetailsRemote():  # costmanagement.COST_DETAILS_FOLDER: one export folder per metric
            return remote.landing / "cost-details" / (FORMATS[fmt].cost_metric or "")
        case AzureBlobRemote(container=str(container), directory=str(directory)):
            folder = remote.landing / container / directory.strip("/")
            return folder if fmt == "azure-cost-details" else folder / str(remote.export)
        case AzureBlobRemote():
            return _discovered_azure_folder(remote, fmt)


def _discovered_azure_folder(remote: AzureBlobRemote, fmt: str) -> Path:
    """An Azure export folder whose container or directory comes from the export's definition in ARM.

    As for a discovered AWS export, configuration loading does not call the cloud: the folder is the one the
    newest landed run of the source's export(s) is in, the same mirror (``<landing>/<container>/<directory>``) an
    explicit container and directory give. The ledger records each run's ``<directory>/<export>`` and manifest
    blob name; the container is the landing folder holding that manifest. Before a first sync,
    ``<landing>/<export>``: absent, so the run finds no delivery yet, as for any remote source not synced.
    """
    exports = remote.export_names
    given = remote.directory.strip("/") if remote.directory is not None else None
    containers = [remote.container] if remote.container is not None else None
    for entry in reversed(read_ledger(remote.landing)):
        directory, _, export = entry.export.rpartition("/")
        if entry.provider != "azure" or export not in exports or given not in (None, directory):
            continue
        if containers is None:
            containers = sorted(p.name for p in remote.landing.iterdir() if p.is_dir() and p.name[:1] != ".")
        for container in containers:
            if (remote.landing / container / entry.manifest).is_file():
                folder = remote.landing.joinpath(container, *directory.split("/") if directory else ())
                return folder if fmt == "azure-cost-details" else folder / export
    return remote.landing / str(exports[0])


def _discovered_export_folder(remote: S3Remote, fmt: str) -> Path:
    """A discovered export's folder: its prefix is the one the export's definition gave the newest landed delivery.

    The prefix is known only from AWS, and configuration loading must not call it: the ledger recorded each landed
    manifest's key (CUR 1 ``<prefix>/<report>/<range>/<manifest>``, Data Exports
    ``<prefix>/<export>/metadata/<period>/<manifest>``). Before a first sync, ``<landing>/<export>``: absent, so
    the run finds no delivery yet, as for any remote source not synced.
    """
    export = remote.export
    depth = 2 if fmt == "aws-cur1" else 3
    for entry in reversed(read_ledger(remote.landing)):
        parts = entry.manifest.split("/")
        if entry.provider == "aws" and entry.export == export and parts[:-depth][-1:] == [export]:
            return remote.landing.joinpath(*parts[:-depth])
    return remote.landing / export


def _months(path: Path, table: object) -> MonthsConfig:
    if not isinstance(table, dict):
        raise InputError(path, "[months] must be a table", column="months")
    unknown = sorted(set(table) - {"close_after_days"})
    if unknown:
        raise InputError(path, f"[months]: unknown key(s) {unknown}", column=f"months.{unknown[0]}")
    days = table.get("close_after_days", {})
    if not isinstance(days, dict):
        raise InputError(path, "[months] close_after_days must be a table of provider = days", column="months")
    for provider, value in days.items():
        column = f"months.close_after_days.{provider}"
        if provider not in DEFAULT_CLOSE_AFTER_DAYS:
            raise InputError(path, f"unknown provider; one of {', '.join(DEFAULT_CLOSE_AFTER_DAYS)}", column=column)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 366:
            raise InputError(path, "must be a whole number of days from 0 to 366", column=column)
    return MonthsConfig({**DEFAULT_CLOSE_AFTER_DAYS, **days})


def _reporting(path: Path, home: Path, table: object) -> ReportingConfig:
    if not isinstance(table, dict):
        raise InputError(path, "[reporting] must be a table", column="reporting")
    unknown = sorted(set(table) - {"currency", "rates"})
    if unknown:
        raise InputError(path, f"[reporting]: unknown key(s) {unknown}", column=f"reporting.{unknown[0]}")
    currency, rates = table.get("currency"), table.get("rates")
    if currency is None:
        if rates is not None:
            raise InputError(path, "[reporting] rates need a reporting currency", column="reporting.currency")
        return ReportingConfig()
    if currency not in ISO_4217_CODES:
        raise InputError(path, f"{currency!r} is not an ISO 4217 currency code", column="reporting.currency")
    if rates is not None and (not isinstance(rates, str) or not rates):
        raise InputError(path, "[reporting] rates must be a path to a CSV file", column="reporting.rates")
    return ReportingConfig(currency=currency, rates=home / rates if rates else None)


def _telemetry(path: Path, home: Path, entries: object) -> tuple[TelemetryConfig, ...]:
    if not isinstance(entries, list):
        raise InputError(path, "[[telemetry]] must be an array of tables", column="telemetry")
    configs = []
    for index, entry in enumerate(entries, start=1):
        where = f"[[telemetry]] #{index}"
        if not isinstance(entry, dict):
            raise InputError(path, f"{where} is not a table")
        kind = entry.get("kind")
        if kind not in TELEMETRY_KINDS:
            raise InputError(path, f"{where}: kind must be one of {', '.join(TELEMETRY_KINDS)}", column="kind")
        unknown = sorted(set(entry) - {"name", "kind", "cluster"} - _TELEMETRY_KEYS[kind])
        if unknown:
            raise InputError(path, f"{where}: unknown key(s) {unknown} for kind {kind!r}", column=unknown[0])
        for key in ("name", "cluster", *sorted(_TELEMETRY_REQUIRED[kind])):
            if key == "cluster" and kind in _CLUSTER_FROM_ROWS and key not in entry:
                continue  # the reader refuses a file whose rows do not name it either
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise InputError(path, f"{where}: {key!r} must be a non-empty string", column=key)
        options: dict[str, str | int | tuple[str, ...]] = {}
        for key, value in entry.items():
            if key not in _TELEMETRY_KEYS[kind] - _TELEMETRY_PATHS:
                continue
            if key in _TELEMETRY_LISTS:
                allowed = _TELEMETRY_LISTS[key]
                if not isinstance(value, list) or not all(isinstance(v, str) and v in allowed for v in value):
                    raise InputError(path, f"{where}: {key!r} must be a list of {', '.join(allowed)}", column=key)
                options[key] = tuple(value)
            elif isinstance(value, bool) or not isinstance(value, str | int):
                raise InputError(path, f"{where}: {key!r} must be a string or integer", column=key)
            else:
                options[key] = value
        paths = {k: home / v for k, v in entry.items() if k in _TELEMETRY_PATHS and isinstance(v, str)}
        configs.append(TelemetryConfig(entry["name"], kind, entry.get("cluster"), paths, options))
    if len({c.name for c in configs}) != len(configs):
        raise InputError(path, "telemetry names must be unique", column="name")
    return tuple(configs)
