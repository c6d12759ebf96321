"""The source configuration file (``<home>/gpuledger.toml``): where each provider's exports are.

Holds no secrets: credentials come only from the providers' standard credential chains.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from gpuledger.errors import InputError
from models.allocation import AllocationConfig, parse_allocation
from models.currencies import ISO_4217_CODES
from models.delivery import SOURCE_FORMATS

CONFIG_FILE = "gpuledger.toml"


@dataclass(frozen=True)
class SourceConfig:
    """One export to ingest."""

    name: str
    """Unique name, shown in status and delivery records."""
    format: str
    """Export format: one of ``models.delivery.SOURCE_FORMATS``."""
    path: Path
    """Local folder laid out like the export bucket (the report/export folder); relative to home."""

    @property
    def provider(self) -> str:
        return self.format.split("-", 1)[0]


TELEMETRY_KINDS = ("slurm", "prometheus", "files")
# Keys each telemetry kind accepts besides name, kind and cluster; path-valued ones are relative to home.
_TELEMETRY_KEYS = {
    "slurm": {"path", "timezone"},
    "prometheus": {"url", "node_label", "instance_label", "token_env", "step_seconds"},
    "files": {"jobs", "samples", "checkpoints", "egress"},
}
_TELEMETRY_PATHS = {"path", "jobs", "samples", "checkpoints", "egress"}
_TELEMETRY_REQUIRED = {"slurm": {"path"}, "prometheus": {"url"}, "files": set()}


@dataclass(frozen=True)
class TelemetryConfig:
    """One telemetry source: a scheduler's accounting, a metrics server, or plain files."""

    name: str
    """Unique name, recorded on every job and activity row it produces."""
    kind: str
    """``slurm`` (sacct --parsable2 output files), ``prometheus`` (DCGM metrics) or ``files``."""
    cluster: str
    """Cluster the jobs and nodes belong to; node names are unique within it."""
    paths: dict[str, Path]
    """slurm: ``path``; files: ``jobs``, ``samples``, ``checkpoints``, ``egress`` (each a file or folder)."""
    options: dict[str, str | int]
    """prometheus: ``url``, ``node_label``, ``instance_label``, ``token_env``, ``step_seconds``; slurm: ``timezone``."""


@dataclass(frozen=True)
class ReportingConfig:
    """Optional conversion of showback into one reporting currency, at dated rates the user provides."""

    currency: str | None = None
    """ISO 4217 code to convert showback into; None keeps every currency separate (never summed)."""
    rates: Path | None = None
    """CSV of ``date, currency, rate``: units of the reporting currency per unit of ``currency`` on ``date``."""


@dataclass(frozen=True)
class Config:
    sources: tuple[SourceConfig, ...]
    telemetry: tuple[TelemetryConfig, ...] = ()
    allocation: AllocationConfig = field(default_factory=AllocationConfig)
    reporting: ReportingConfig = field(default_factory=ReportingConfig)


def load_config(home: Path) -> Config:
    """Read and validate ``<home>/gpuledger.toml``; a missing file means no sources."""
    path = home / CONFIG_FILE
    if not path.exists():
        return Config(sources=())
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, f"unreadable configuration: {exc}") from exc
    sources = []
    for index, entry in enumerate(data.get("sources", []), start=1):
        where = f"[[sources]] #{index}"
        if not isinstance(entry, dict):
            raise InputError(path, f"{where} is not a table")
        unknown = set(entry) - {"name", "format", "path"}
        if unknown:
            raise InputError(path, f"{where}: unknown key(s) {sorted(unknown)}", column=sorted(unknown)[0])
        for key in ("name", "format", "path"):
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise InputError(path, f"{where}: {key!r} must be a non-empty string", column=key)
        if entry["format"] not in SOURCE_FORMATS:
            raise InputError(path, f"{where}: format must be one of {', '.join(SOURCE_FORMATS)}", column="format")
        sources.append(SourceConfig(entry["name"], entry["format"], home / entry["path"]))
    names = [s.name for s in sources]
    if len(names) != len(set(names)):
        raise InputError(path, "source names must be unique", column="name")
    telemetry = _telemetry(path, home, data.get("telemetry", []))
    return Config(
        sources=tuple(sources),
        telemetry=telemetry,
        allocation=parse_allocation(path, data),
        reporting=_reporting(path, home, data.get("reporting", {})),
    )


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
            if not isinstance(entry.get(key), str) or not entry[key]:
                raise InputError(path, f"{where}: {key!r} must be a non-empty string", column=key)
        options = {k: v for k, v in entry.items() if k in _TELEMETRY_KEYS[kind] - _TELEMETRY_PATHS}
        for key, value in options.items():
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise InputError(path, f"{where}: {key!r} must be a string or integer", column=key)
        paths = {k: home / v for k, v in entry.items() if k in _TELEMETRY_PATHS and isinstance(v, str)}
        configs.append(TelemetryConfig(entry["name"], kind, entry["cluster"], paths, options))
    if len({c.name for c in configs}) != len(configs):
        raise InputError(path, "telemetry names must be unique", column="name")
    return tuple(configs)
