"""Errors that reach users: each names the file, and the row and column where there is one, on one line."""

from __future__ import annotations

import re
from pathlib import Path

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LONGEST_VALUE = 200
# Lines of DuckDB's multi-line errors that are advice or echo, not the reason.
_NOISE = ("Possible fix", "Possible Solution", "* ", "file = ", "delimiter = ", "quote = ", "escape = ",
          "new_line = ", "header = ", "skip_rows = ", "comment = ", "strict_mode = ", "date_format = ",
          "timestamp_format = ", "null_padding = ", "sample_size = ", "ignore_errors = ", "all_varchar = ",
          "Original Line:", "The search space used was:", "Delimiter Candidates", "Quote/Escape Candidates",
          "Comment Candidates", "Encoding:", "LINE ")  # fmt: skip


def printable(text: str, limit: int = _LONGEST_VALUE) -> str:
    """``text`` safe for a terminal: control and direction characters escaped, at most ``limit`` characters."""
    safe = _CONTROL.sub(_escape, text)
    return safe if len(safe) <= limit else f"{safe[: limit - 1]}… ({len(text):,} characters)"


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def describe_error(exc: BaseException) -> str:
    """A library's (multi-line) error as one line: the reason, without advice and echoed input."""
    lines = [line.strip() for line in str(exc).strip().splitlines()]
    kept = [line for line in lines if line and not line.startswith(_NOISE)]
    return printable("; ".join(kept) or type(exc).__name__, limit=400)


class GpuledgerError(Exception):
    """Base class for errors shown to users without a traceback."""


class InputError(GpuledgerError):
    """Bad input: a file, row and column that the pipeline refuses, with the reason."""

    def __init__(self, file: Path | str, message: str, *, row: int | None = None, column: str | None = None) -> None:
        self.file = str(file)
        self.row = row
        self.column = column
        self.reason = message
        where = [printable(self.file, limit=400)]
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {printable(column)!r}")
        super().__init__(f"{', '.join(where)}: {printable(message, limit=2000)}")


class ReconciliationError(GpuledgerError):
    """Normalized sums differ from the source's: money would be lost or invented."""


class RemoteError(GpuledgerError):
    """A provider's service could not be used: missing credentials, a refused request, a failed download."""
