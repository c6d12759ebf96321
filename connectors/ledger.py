"""Writing the sync ledger (its records are ``models.landing``), and atomic file writes for landing.

``<landing>/.gpuledger-ledger.json`` lists the deliveries oldest first (:func:`record_delivery`); it is
rewritten whole through a temp file and a rename, so a crash leaves the previous ledger, never half of one.
:func:`atomic_file` is the same write-verify-rename for landed files: a file that fails verification (or a
crash) never appears under its real name.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from models.errors import InputError
from models.landing import LEDGER_FILE, LEDGER_FORMAT, LedgerEntry, read_ledger

PART_SUFFIX = ".gpuledger-part"


@dataclass(frozen=True, kw_only=True)
class TransferLimits:
    """What a sync holds one export's deliveries to: sizes, counts, attempts and timeouts (shared by connectors)."""

    max_file_bytes: int = 32 * 2**30
    """Largest data file accepted: far above any export part, catches a wrong name or a runaway object."""
    max_files: int = 5_000
    """Most data files one manifest may list."""
    max_attempts: int = 8
    """HTTP attempts per request (throttling, 5xx, dropped connections), with backoff."""
    download_attempts: int = 3
    """Attempts per file when a transfer drops or arrives short or corrupt."""
    connect_timeout: float = 10.0
    read_timeout: float = 60.0

    def check_limits(self, where: str) -> None:
        """Refuse a limit below 1, naming the key (``where`` names the export)."""
        for key in ("max_file_bytes", "max_files", "max_attempts", "download_attempts"):
            if getattr(self, key) < 1:
                raise InputError(where, f"{key!r} must be at least 1", column=key)


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_delivery(landing_dir: Path, entry: LedgerEntry) -> None:
    """Append ``entry`` to the ledger (rewritten atomically)."""
    entries = [*read_ledger(landing_dir), entry]
    document = {"format": LEDGER_FORMAT, "deliveries": [asdict(e) for e in entries]}
    write_atomically(landing_dir / LEDGER_FILE, (json.dumps(document, indent=1) + "\n").encode())


@contextmanager
def atomic_file(path: Path) -> Iterator[BinaryIO]:
    """Write ``path`` through a hidden temp file beside it: renamed on success, deleted if the block raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}{PART_SUFFIX}")
    try:
        with temp.open("wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())  # the rename must never publish bytes still in the page cache
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)


def write_atomically(path: Path, data: bytes) -> None:
    with atomic_file(path) as out:
        out.write(data)


@dataclass(frozen=True)
class SyncResult:
    """What one sync of one export did."""

    export_folder: Path
    """Local export (or dataset) folder to configure as the source's path."""
    pulled: tuple[LedgerEntry, ...]
    """Deliveries landed by this sync (also recorded in the ledger)."""
    unchanged: tuple[str, ...]
    """Periods (AWS), date ranges (Azure) or ``<table>/<YYYY-MM>`` (GCP) whose current delivery was already landed."""

    @property
    def downloaded_bytes(self) -> int:
        return sum(d.downloaded_bytes for d in self.pulled)

    @property
    def downloaded_files(self) -> int:
        return sum(d.downloaded_files for d in self.pulled)

    @property
    def rows(self) -> int:
        return sum(d.rows or 0 for d in self.pulled)
