"""A gpuledger home: where it is, its run lock, and its warehouse opened for writing."""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import duckdb

from gpuledger.warehouse.database import WAREHOUSE_FILE, connect, ensure_schema, prepare_session, session_config
from gpuledger.warehouse.lake import connect_lake
from models.config import CONFIG_FILE, load_warehouse_config
from models.errors import GpuledgerError

HOME_ENV = "GPULEDGER_HOME"
LOCAL_HOME = ".home"
"""The home ``make demo`` writes in the checkout: used when the current folder holds one with a configuration."""
DEFAULT_HOME = Path.home() / ".local" / "share" / "gpuledger"


@dataclass(frozen=True)
class HomeChoice:
    """The home a command works in, and why that one (printed whenever it holds nothing)."""

    path: Path
    chosen_by: str
    """How it was chosen, as text: "from --home", "from $GPULEDGER_HOME", ..."""


def locate_home(home: str | Path | None) -> HomeChoice:
    """``--home``, else ``$GPULEDGER_HOME``, else ``./.home`` when it holds a gpuledger.toml, else
    ``~/.local/share/gpuledger`` (docs/decisions/0013)."""
    if home:
        return HomeChoice(_absolute(home), "from --home")
    if from_env := os.environ.get(HOME_ENV):
        return HomeChoice(_absolute(from_env), f"from ${HOME_ENV}")
    if (Path.cwd() / LOCAL_HOME / CONFIG_FILE).is_file():
        return HomeChoice(_absolute(LOCAL_HOME), f"./{LOCAL_HOME} of the current folder")
    return HomeChoice(_absolute(DEFAULT_HOME), f"the default: no --home, ${HOME_ENV} or ./{LOCAL_HOME}/{CONFIG_FILE}")


def resolve_home(home: str | Path | None) -> Path:
    """The path :func:`locate_home` chooses."""
    return locate_home(home).path


def _absolute(path: str | Path) -> Path:
    return Path(path).expanduser().resolve()


RUN_LOCK_FILE = ".gpuledger-run.lock"


class RunBusy(GpuledgerError):
    """Another run holds the home: two runs would interleave their writes and publishes."""


@contextmanager
def exclusive_run(home: Path) -> Iterator[None]:
    """Hold ``<home>``'s run lock for a whole run; a second run is refused at once, naming the holder. The lock file
    names the holder until it ends, done or with an error it reported: one killed (or whose disk filled) leaves its
    name there for :func:`interrupted_run`, and the next run takes the lock over."""
    home.mkdir(parents=True, exist_ok=True)
    with open(home / RUN_LOCK_FILE, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise RunBusy(f"{home}: another gpuledger run is in progress ({holder}); try again when it ends") from None
        handle.seek(0)
        handle.truncate()
        started = datetime.now(UTC).isoformat(timespec="seconds")
        handle.write(f"pid {os.getpid()}, started {started}, gpuledger {version('gpuledger')}")
        handle.flush()
        ended = False
        try:
            yield
            ended = True
        except GpuledgerError:
            ended = True  # told in one line (and recorded by a run): not an interruption
            raise
        finally:
            if ended:
                handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)  # the lock also ends with the process, even on kill -9


_HOLDER = re.compile(r"pid (\d+), started (\S+), gpuledger \S+")
"""The holder's name in the lock file; without the version, an older gpuledger's, which never cleared it."""


@dataclass(frozen=True)
class InterruptedRun:
    """A holder of the run lock that died before it ended: killed, out of memory or disk, the machine stopped."""

    pid: int
    started: str
    """When it took the lock (ISO 8601, UTC)."""


def interrupted_run(home: Path) -> InterruptedRun | None:
    """The process the run lock file still names when it is no longer running; None when none is named (every
    holder ended) or it still runs."""
    try:
        holder = _HOLDER.fullmatch((home / RUN_LOCK_FILE).read_text(encoding="utf-8").strip())
    except FileNotFoundError:
        return None
    if holder is None:
        return None
    try:
        os.kill(int(holder[1]), 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return InterruptedRun(int(holder[1]), holder[2])
    except PermissionError:  # it runs, as another user
        return None
    return None


def open_warehouse(home: Path) -> duckdb.DuckDBPyConnection:
    """The warehouse of ``home``, for writing, migrated to this code's schema."""
    con = connect_warehouse(home)
    ensure_schema(con)
    return con


def connect_warehouse(home: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The warehouse ``[warehouse]`` of ``<home>/gpuledger.toml`` names: a DuckLake, else the file."""
    lake = load_warehouse_config(home)
    if lake.is_lake:
        return prepare_session(connect_lake(lake, home / "tmp", session_config(), read_only=read_only))
    try:
        return connect(home / WAREHOUSE_FILE, read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" not in str(exc).lower():
            raise
        # DuckDB takes one writing process per file: name the conflict instead of DuckDB's message
        raise RunBusy(f"{home / WAREHOUSE_FILE} is being written by another process: {exc}") from None


def warehouse_location(home: Path) -> str:
    """Where the warehouse of ``home`` is, for people: the file, or the lake's catalog and data path."""
    lake = load_warehouse_config(home)
    if lake.is_lake:
        return f"{lake.catalog} (data: {lake.data_path})"
    return str(home / WAREHOUSE_FILE)
