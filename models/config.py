"""The source configuration file (``<home>/gpuledger.toml``): where each provider's exports are.

Holds no secrets: credentials come only from the providers' standard credential chains.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from gpuledger.errors import InputError
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


@dataclass(frozen=True)
class Config:
    sources: tuple[SourceConfig, ...]


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
    return Config(sources=tuple(sources))
