"""Crash safety of ``gpuledger run``, through the real command line in subprocesses.

A run killed (``kill -9``) at any failpoint leaves the analysts' file and the Parquet folder as they were, and
the next run publishes exactly what an uninterrupted run would; an analyst connected during a run keeps a
consistent snapshot; a second run started while one is in progress is refused and changes nothing.

Every home here is a copy of the GPU cloud home (the demo's CoreWeave export and its cluster's telemetry, run once per
backend: the smallest home a run does everything in), with its run history, at one fixed path, with one change:
CoreWeave re-sent November without its costliest line (a new delivery to load that changes the open
month's showback). The fixed path makes the published tables of two copies comparable: FOCUS rows name their source
files.
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import closing
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.publish.snapshot import ANALYST_FILE, PUBLISHED_FOLDER, PUBLISHED_TABLES
from gpuledger.warehouse.failpoints import FAILPOINT_ENV, FAILPOINTS
from gpuledger.warehouse.home import RUN_LOCK_FILE
from gpuledger_demo.setup import EXPORTS_FOLDER, write_gpu_cloud_home
from tests.conftest import built_once, cli_output

pytestmark = [pytest.mark.both_warehouses, pytest.mark.serial, pytest.mark.slow]

RUN_TIMEOUT_S = 300
NOVEMBER_REPORTING_TOTAL = (
    "SELECT sum(total_cost_reporting) FROM showback.team_month_reporting WHERE billing_month = DATE '2026-11-01'"
)
COREWEAVE_NOVEMBER = f"{EXPORTS_FOLDER}/coreweave/2026-11/coreweave-focus-2026-11.csv"
RESENT_AFTER_NS = 86_400 * 10**9
"""CoreWeave re-sends the November file a day after the first."""
INGEST_TIME_COLUMNS = {"focus.costs": ("x_IngestedAt",), "meta.deliveries": ("first_ingested_at",)}
"""When a run first loaded a delivery (the wall clock): two copies that load the same delivery differ there."""


@dataclass(frozen=True)
class Reference:
    """An uninterrupted run of the changed copy, with an analyst connected to it the whole time."""

    analyst: Path
    """Its published analyst file, copied aside."""
    old: dict[str, tuple[object, ...]]
    """Fingerprints of the analyst file published before the run (the GPU cloud home's)."""
    held_before: dict[str, tuple[object, ...]]
    """Fingerprints read by the analyst's connection before the run (the November total only)."""
    held_after: dict[str, tuple[object, ...]] | str
    """Fingerprints read by the same connection after the run (every table, mostly never read before), or the
    error reading them."""
    new: dict[str, tuple[object, ...]]
    """Fingerprints read by a connection opened after the run."""


def gpuledger(home: Path, failpoint: str | None = None) -> subprocess.Popen[str]:
    """``gpuledger run --home HOME`` in a subprocess (its own Dagster folder, no failpoint unless named)."""
    env = {k: v for k, v in os.environ.items() if k not in (FAILPOINT_ENV, "DAGSTER_HOME")}
    if failpoint:
        env[FAILPOINT_ENV] = failpoint
    return subprocess.Popen(
        [sys.executable, "-m", "pipelines.cli", "run", "--home", str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(home: Path, failpoint: str | None = None) -> subprocess.CompletedProcess[str]:
    process = gpuledger(home, failpoint)
    stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def change_home(home: Path) -> None:
    """CoreWeave re-sends November without its costliest line (billed by mistake): a new delivery to load that changes
    November's total, and only what depends on it (CoreWeave's November load, November's split, the month states,
    the publish) runs again."""
    path = home / COREWEAVE_NOVEMBER
    resent = path.stat().st_mtime_ns + RESENT_AFTER_NS
    with path.open(newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        columns, rows = reader.fieldnames, list(reader)
    assert columns is not None
    rows.remove(max(rows, key=lambda row: Decimal(row["BilledCost"])))
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    os.utime(path, ns=(resent, resent))  # the same delivery in every copy: its time is part of what it is


def _run_gpu_cloud_home(folder: Path) -> str:
    write_gpu_cloud_home(home := folder / "home")
    return cli_output("run", "--home", str(home))


@pytest.fixture(scope="session")
def gpu_cloud_home(tmp_path_factory: pytest.TempPathFactory, warehouse_backend: str) -> Path:
    """The GPU cloud home after its first run, once per session and backend (copied, never changed)."""
    folder, _ = built_once(tmp_path_factory, f"gpu-cloud-{warehouse_backend}", _run_gpu_cloud_home)
    return folder / "home"


@pytest.fixture(scope="module")
def fixed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("crash-safety") / "home"


def changed_copy(original: Path, home: Path) -> Path:
    """A fresh copy of the GPU cloud home at ``home`` (replacing any), with its run history, changed: a run redoes
    what the change touches (CoreWeave's November load, November's split, the month states, the publish), so it
    passes every failpoint (a run not killed at one fails its test)."""
    if home.exists():
        shutil.rmtree(home)
    shutil.copytree(original, home, symlinks=True)
    change_home(home)
    return home


@pytest.fixture
def home(gpu_cloud_home: Path, fixed_home: Path, reference: Reference) -> Path:
    """A changed copy of the GPU cloud home at the fixed path (after the reference run, which used it first)."""
    return changed_copy(gpu_cloud_home, fixed_home)


@pytest.fixture(scope="module")
def reference(gpu_cloud_home: Path, fixed_home: Path) -> Reference:
    home = changed_copy(gpu_cloud_home, fixed_home)
    analyst = home / ANALYST_FILE
    with closing(duckdb.connect()) as old:
        old_fingerprints = fingerprints(old, gpu_cloud_home / ANALYST_FILE)
    with closing(duckdb.connect(str(analyst), read_only=True)) as held:
        held_before = {"november": held.execute(NOVEMBER_REPORTING_TOTAL).fetchone()}  # type: ignore[dict-item]
        result = run(home)
        assert result.returncode == 0, result.stderr
        try:
            held_after: dict[str, tuple[object, ...]] | str = fingerprints(held)
        except duckdb.Error as exc:  # the file under it was changed, not replaced: the test says so
            held_after = f"{type(exc).__name__}: {exc}"
    with closing(duckdb.connect()) as new:
        # not duckdb.connect(analyst): while any connection of this process holds that path, DuckDB hands back
        # the database it already opened (the old file); a new connection of another process opens the new one
        new_fingerprints = fingerprints(new, analyst)
    aside = fixed_home.parent / "reference-analyst.duckdb"
    shutil.copyfile(analyst, aside)
    return Reference(aside, old_fingerprints, held_before, held_after, new_fingerprints)


def fingerprints(con: duckdb.DuckDBPyConnection, attach: Path | None = None) -> dict[str, tuple[object, ...]]:
    """November's reporting total, and rows and a hash of their contents of every published table, read by
    ``con`` (from ``attach``, attached read-only, when given)."""
    prefix = ""
    if attach is not None:
        con.execute(f"ATTACH '{attach}' AS analyst (READ_ONLY)")
        prefix = "analyst."
    found = {"november": con.execute(NOVEMBER_REPORTING_TOTAL.replace("FROM ", f"FROM {prefix}")).fetchone()}
    for table in PUBLISHED_TABLES:
        # ``t``: the whole row, as a struct
        found[table] = con.execute(f"SELECT count(*), sum(hash(t)::HUGEINT) FROM {prefix}{table} AS t").fetchone()
    return found  # type: ignore[return-value]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def schema(analyst: Path) -> list[tuple[object, ...]]:
    """The analyst file's tables and views with their columns, read-only."""
    with closing(duckdb.connect(str(analyst), read_only=True)) as con:
        return con.execute(
            "SELECT table_schema, table_name, column_name, ordinal_position, data_type"
            " FROM information_schema.columns ORDER BY ALL"
        ).fetchall()


def assert_published_equal(analyst: Path, expected: Path) -> None:
    """Every published table holds the same rows (a multiset: EXCEPT ALL both ways), ingest times aside."""
    assert schema(analyst) == schema(expected)
    differing = []
    with closing(duckdb.connect()) as con:
        con.execute("SET enable_progress_bar = false")
        # ATTACH, not connect(): a new database, even where this process still holds the path open
        con.execute(f"ATTACH '{analyst}' AS got (READ_ONLY)")
        con.execute(f"ATTACH '{expected}' AS want (READ_ONLY)")
        for table in PUBLISHED_TABLES:
            excluded = INGEST_TIME_COLUMNS.get(table)
            columns = f"* EXCLUDE ({', '.join(excluded)})" if excluded else "*"
            got, want = (f"SELECT {columns} FROM {catalog}.{table}" for catalog in ("got", "want"))
            extra, missing = con.execute(
                f"SELECT (SELECT count(*) FROM ({got} EXCEPT ALL {want})),"
                f" (SELECT count(*) FROM ({want} EXCEPT ALL {got}))"
            ).fetchone()  # type: ignore[misc]
            if extra or missing:
                differing.append(f"{table}: {extra} rows not expected, {missing} expected rows missing")
    assert not differing, f"published tables differ from an uninterrupted run's: {'; '.join(differing)}"


def parquet_link(home: Path) -> Path:
    link = home / PUBLISHED_FOLDER / "focus"
    assert link.is_symlink()
    return link.resolve(strict=True)


def parquet_rows(folder: Path) -> int:
    with closing(duckdb.connect()) as con:
        return con.execute(
            "SELECT count(*) FROM read_parquet($glob, hive_partitioning = true)", {"glob": f"{folder}/**/*.parquet"}
        ).fetchone()[0]  # type: ignore[index]


def focus_rows(analyst: Path) -> int:
    with closing(duckdb.connect()) as con:
        con.execute(f"ATTACH '{analyst}' AS published (READ_ONLY)")
        return con.execute("SELECT count(*) FROM published.focus.costs").fetchone()[0]  # type: ignore[index]


def leftovers(home: Path) -> list[str]:
    """Temporary files of a publish: hidden analyst files, Parquet folders or links neither the link nor the link to
    the folder it replaced (kept for its readers) names."""
    links = [home / PUBLISHED_FOLDER / name for name in ("focus", ".previous-focus")]
    kept = {link.name for link in links} | {os.readlink(link) for link in links if link.is_symlink()}
    found = [p.name for p in home.glob(".analyst-*")]
    found += [p.name for p in (home / PUBLISHED_FOLDER).iterdir() if p.name not in kept]
    return sorted(found)


def test_an_analyst_connected_during_a_run_keeps_its_snapshot_and_reconnecting_sees_the_new(reference):
    assert reference.held_before["november"] == reference.old["november"]
    assert reference.new["november"] != reference.old["november"], "the change must alter November's total"
    # the held connection still reads the old file, whole: also the tables it never read before the run
    assert reference.held_after == reference.old
    assert reference.new != reference.old
    with closing(duckdb.connect()) as published:
        assert fingerprints(published, reference.analyst) == reference.new


@pytest.mark.parametrize("failpoint", FAILPOINTS, ids=[f"kill-9-at-{p.replace(':', '-')}" for p in FAILPOINTS])
def test_a_run_killed_at_a_failpoint_loses_nothing_and_the_next_run_completes_it(home, reference, failpoint):
    analyst = home / ANALYST_FILE
    sha_before, schema_before = sha256(analyst), schema(analyst)
    parquet_before = parquet_link(home)
    rows_before = focus_rows(analyst)
    assert parquet_rows(parquet_before) == rows_before

    crashed = run(home, failpoint)
    assert crashed.returncode == -signal.SIGKILL, (
        f"not killed at {failpoint}: rc {crashed.returncode}\n{crashed.stderr}"
    )

    if failpoint == "publish:after-swap":
        # the new file is in place, whole: the same tables as an uninterrupted run's
        assert sha256(analyst) != sha_before
        assert_published_equal(analyst, reference.analyst)
    else:
        assert sha256(analyst) == sha_before
        assert schema(analyst) == schema_before
    # the Parquet link is only moved after the analyst file: it still names the old, complete folder
    assert parquet_link(home) == parquet_before
    assert parquet_rows(parquet_before) == rows_before
    if failpoint == "publish:before-swap":
        assert list(home.glob(".analyst-*.duckdb")), "the crash should leave the unswapped copy behind"

    recovered = run(home)
    assert recovered.returncode == 0, recovered.stderr
    assert leftovers(home) == []
    assert_published_equal(analyst, reference.analyst)
    assert parquet_rows(parquet_link(home)) == focus_rows(analyst) != rows_before


def test_a_second_run_while_one_is_in_progress_is_refused_and_changes_nothing(home, reference):
    lock = home / RUN_LOCK_FILE
    first = gpuledger(home)
    try:
        # the lock file names its holder once the lock is taken: then the first run certainly holds it
        deadline = time.monotonic() + 60
        while f"pid {first.pid}," not in (lock.read_text(encoding="utf-8") if lock.exists() else ""):
            assert first.poll() is None, first.communicate()[1]
            assert time.monotonic() < deadline, "the first run never took the run lock"
            time.sleep(0.05)
        second = run(home)
        assert first.poll() is None, "the second run should be refused at once, while the first still runs"
        _, stderr = first.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 1
    assert "another gpuledger run is in progress" in second.stderr
    assert first.returncode == 0, stderr
    assert leftovers(home) == []
    assert_published_equal(home / ANALYST_FILE, reference.analyst)
