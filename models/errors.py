"""Errors that reach users: each names the file, and the row and column where there is one, on one line."""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
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
    return shorten(_CONTROL.sub(_escape, text), limit)


def shorten(text: str, limit: int = _LONGEST_VALUE) -> str:
    """At most ``limit`` characters: a runaway value (a 10 MB tag) is cut, saying how long it was."""
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(text):,} characters)"


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

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        # rebuilt from its parts where a process that staged a delivery's part raises it in the one that loads it
        return functools.partial(type(self), row=self.row, column=self.column), (self.file, self.reason)


class ReconciliationError(GpuledgerError):
    """Normalized sums differ from the source's: money would be lost or invented."""


class RemoteError(GpuledgerError):
    """A provider's service could not be used: missing credentials, a refused request, a failed download."""


# What an exhausted machine says, in the words of the OS, DuckDB and SQLite (Dagster's instance); SQLite may only
# say "disk I/O error", so a failed write on a disk with almost no room left counts too.
_OUT_OF_SPACE = ("No space left on device", "database or disk is full", "Disk quota exceeded")
_IO_FAILURE = ("disk I/O error", "IO Error", "Could not write")
_OUT_OF_MEMORY = ("Out of Memory Error", "failed to allocate")
_ALMOST_FULL = 256 * 2**20


def environment_failure(exc: BaseException, home: Path | None = None) -> str | None:
    """One line naming what ran out, or what may not be written, when ``exc`` (or an error it came from) is the
    machine's, not the input's; ``home`` is where the run writes."""
    free = _free_bytes(home)
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        text = str(error)
        out_of_space = isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)
        if (
            out_of_space
            or any(marker in text for marker in _OUT_OF_SPACE)
            or (free is not None and free < _ALMOST_FULL and any(marker in text for marker in _IO_FAILURE))
        ):
            room = f" ({free / 2**20:,.0f} MiB free on the disk of {home})" if free is not None else ""
            return f"no space left on the disk{room}: free some and run again; nothing partial was published"
        # an error of ours already names its file in one line (an unreadable configuration, a source's file)
        if not isinstance(exc, GpuledgerError) and (denied := _permission_denied(error, home)):
            return denied
        if isinstance(error, MemoryError) or any(marker in text for marker in _OUT_OF_MEMORY):
            return (
                f"out of memory: {describe_error(error)}; DuckDB keeps to GPULEDGER_MEMORY_LIMIT (default 1GB) and"
                " spills to <home>/tmp"
            )
        error = error.__cause__ or error.__context__
    return None


_NO_PERMISSION = (errno.EACCES, errno.EPERM, errno.EROFS)
_NO_PERMISSION_TEXT = ("Permission denied", "Read-only file system")  # DuckDB's words for them


def _permission_denied(error: BaseException, home: Path | None) -> str | None:
    """One line naming the path this user may not write (a read-only home, a read-only disk) and what to do."""
    if isinstance(error, OSError) and error.errno in _NO_PERMISSION:
        path = Path(os.fsdecode(error.filename)) if error.filename else None
        reason = f"{printable(str(path))}: {error.strerror}" if path else describe_error(error)
    elif any(marker in str(error) for marker in _NO_PERMISSION_TEXT):
        path, reason = None, describe_error(error)  # DuckDB names the file in its message
    else:
        return None
    if home is not None and (path is None or path.is_relative_to(home)):
        return (
            f"{reason}: gpuledger writes in its home {printable(str(home))}: make it writable for the user running"
            " gpuledger, or choose another home with --home"
        )
    return f"{reason}: give the user running gpuledger access to it"


def _free_bytes(home: Path | None) -> int | None:
    try:
        return shutil.disk_usage(home).free if home is not None and home.exists() else None
    except OSError:
        return None
