"""Errors that reach users: each names the file, and the row and column where there is one."""

from __future__ import annotations

from pathlib import Path


class GpuledgerError(Exception):
    """Base class for errors shown to users without a traceback."""


class InputError(GpuledgerError):
    """Bad input: a file, row and column that the pipeline refuses, with the reason."""

    def __init__(self, file: Path | str, message: str, *, row: int | None = None, column: str | None = None) -> None:
        self.file = str(file)
        self.row = row
        self.column = column
        self.reason = message
        where = [self.file]
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(f"{', '.join(where)}: {message}")


class ReconciliationError(GpuledgerError):
    """Normalized sums differ from the source's: money would be lost or invented."""


class RemoteError(GpuledgerError):
    """A provider's service could not be used: missing credentials, a refused request, a failed download."""
