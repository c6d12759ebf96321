"""The landing ledger's records: what connectors write for every delivery they land, and what configuration and
freshness read back. ``<landing>/.gpuledger-ledger.json`` lists the deliveries oldest first; it is written by
``connectors.ledger``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from models.errors import InputError

LEDGER_FILE = ".gpuledger-ledger.json"
LEDGER_FORMAT = 1


@dataclass(frozen=True)
class LedgerFile:
    """One landed file: its remote name (key / blob name), size, the service's ETag and the MD5 of its bytes."""

    name: str
    bytes: int
    etag: str
    md5: str
    """Hex MD5 of the landed bytes, computed while downloading."""


@dataclass(frozen=True)
class LedgerEntry:
    """One pulled delivery: one export run (or execution) of one billing period."""

    provider: str
    source: str
    export: str
    billing_period: str | None
    version: str
    """The provider's run identity: Azure runInfo.runId, AWS assemblyId / executionId."""
    manifest: str
    manifest_etag: str
    files: tuple[LedgerFile, ...]
    bytes: int
    rows: int | None
    """Data rows as the manifest states them (None when it does not)."""
    downloaded_files: int
    downloaded_bytes: int
    """What this sync transferred: files already landed by an earlier delivery are not downloaded again."""
    synced_at: str
    """ISO 8601 UTC."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LedgerEntry:
        return cls(**{**data, "files": tuple(LedgerFile(**f) for f in data["files"])})


def read_ledger(landing_dir: Path) -> list[LedgerEntry]:
    """Every delivery recorded in ``landing_dir``, oldest first (empty when nothing was synced)."""
    path = landing_dir / LEDGER_FILE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != LEDGER_FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {LEDGER_FORMAT}")
        return [LedgerEntry.from_json(entry) for entry in data["deliveries"]]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(path, f"unreadable sync ledger: {exc}") from exc
