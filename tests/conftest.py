"""Shared fixtures: a fresh warehouse per test, the demo home run once, and the official FOCUS validator."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from contextlib import closing, redirect_stdout
from pathlib import Path

import duckdb
import pytest

from gpuledger.chargeback.months import NOW_ENV
from gpuledger.gates import focus_validator as fv
from gpuledger.warehouse.home import open_warehouse
from models.config import WAREHOUSE_ENVIRONMENT
from models.focus import FOCUS_COLUMN_NAMES
from pipelines.cli import main
from tests.fixtures.report_cases import MONTH, Showback

TEST_NOW = "2026-12-02T03:00:00+00:00"
"""The month lifecycle's clock in tests (subprocesses inherit it): the demo's October is closed, November open."""
os.environ[NOW_ENV] = TEST_NOW


LOCAL_LAKE = {"catalog": "ducklake:lake/catalog.ducklake", "data_path": "lake/data"}
"""``--warehouse=lake``: every home of the session keeps a DuckLake of its own (a DuckDB-file catalog, data files in a
folder), through the environment, so the pipeline's subprocesses use it too."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--warehouse",
        choices=("file", "lake"),
        default="file",
        help="the warehouse backend of every home the tests make (default: the DuckDB file)",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--warehouse") == "lake":
        os.environ.update({WAREHOUSE_ENVIRONMENT[key]: value for key, value in LOCAL_LAKE.items()})


def pytest_report_header(config: pytest.Config) -> str:
    return f"gpuledger warehouse backend: {config.getoption('--warehouse')}"


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``gpuledger demo`` run once per session: its home and what it printed. Tests that change it use a copy."""
    home = tmp_path_factory.mktemp("demo")
    output = io.StringIO()
    with redirect_stdout(output):
        assert main(["demo", "--home", str(home)]) == 0
    return home, output.getvalue()


@pytest.fixture(scope="session")
def demo_home(demo_run: tuple[Path, str]) -> Path:
    return demo_run[0]


@pytest.fixture
def demo_copy(demo_home: Path, tmp_path: Path) -> Path:
    """A private copy of the demo home, for tests that restate, corrupt or rerun it."""
    copy = tmp_path / "demo"
    shutil.copytree(demo_home, copy, symlinks=True, ignore=shutil.ignore_patterns("dagster"))
    return copy


@pytest.fixture(scope="session")
def validator_ready() -> None:
    """The validator's pinned venv (installed from its hashed lock when missing, as `make install-validator` does)."""
    if not fv.validator_venv_is_current():
        fv.ensure_validator_venv()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def con(home: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_warehouse(home)
    yield connection
    connection.close()


def focus_rows_below(con: duckdb.DuckDBPyConnection, root: Path) -> list[tuple[object, ...]]:
    """Every stored FOCUS row with its source file relative to ``root`` and without the ingest time, so that
    loads of the same files from two folders (synced, copied by hand) compare equal."""
    rows = focus_rows_of_month(con, root)
    assert rows
    return rows


def focus_rows_of_month(
    con: duckdb.DuckDBPyConnection, root: Path, month: str | None = None
) -> list[tuple[object, ...]]:
    """What :func:`focus_rows_below` compares, of billing month ``YYYY-MM`` (None: every month); none at all too."""
    return con.execute(
        "SELECT * EXCLUDE (x_IngestedAt) REPLACE (substr(x_SourceFile, length($root) + 2) AS x_SourceFile)"
        " FROM focus.costs WHERE CAST($month AS VARCHAR) IS NULL OR strftime(BillingPeriodStart, '%Y-%m') = $month"
        " ORDER BY ALL",
        {"root": str(root), "month": month},
    ).fetchall()


def slice_totals(home: Path) -> list[tuple[object, ...]]:
    """Rows, Σ BilledCost and Σ EffectiveCost per billing account and month of a home's warehouse."""
    with closing(open_warehouse(home)) as con:
        return con.execute(
            "SELECT BillingAccountId, strftime(BillingPeriodStart, '%Y-%m'), count(*), sum(BilledCost),"
            " sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()


def focus_snapshot(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """Every stored FOCUS row, in a stable order, for before/after comparisons."""
    return con.execute("SELECT * FROM focus.costs ORDER BY ALL").fetchall()


def validate_warehouse(con: duckdb.DuckDBPyConnection, tmp_path: Path) -> list[str]:
    """The rules the official focus-validator (criteria ALL) fails on every stored FOCUS row, sorted."""
    out = tmp_path / "focus-for-validator.parquet"
    con.execute(f"COPY (SELECT {', '.join(FOCUS_COLUMN_NAMES)} FROM focus.costs) TO '{out}' (FORMAT parquet)")
    return sorted(fv.run_focus_validator(out, "ALL", install=False).failed)


@pytest.fixture(scope="session")
def demo_reports(demo_home: Path) -> Path:
    """``<demo home>/reports/2026-10/v1``: what the demo wrote for its closed October, never changed by a test."""
    return demo_home / "reports" / MONTH / "v1"


@pytest.fixture(scope="session")
def showback(demo_home: Path) -> Showback:
    """The demo's showback figures the report tests compare every rendered number with."""
    return Showback(demo_home)
