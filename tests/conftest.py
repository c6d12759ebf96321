"""Shared fixtures: a fresh warehouse per test, the demo home run once, and the official FOCUS validator."""

from __future__ import annotations

import fcntl
import io
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import closing, redirect_stdout
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from gpuledger.chargeback.months import NOW_ENV
from gpuledger.gates import focus_validator as fv
from gpuledger.warehouse.database import WAREHOUSE_FILE
from gpuledger.warehouse.home import open_warehouse
from models.config import WAREHOUSE_ENVIRONMENT
from models.focus import FOCUS_COLUMN_NAMES
from pipelines.cli import main
from tests.fixtures.report_cases import MONTH, Showback

TEST_NOW = "2026-12-02T03:00:00+00:00"
"""The month lifecycle's clock in tests (subprocesses inherit it): the demo's October is closed, November open."""
os.environ[NOW_ENV] = TEST_NOW


LOCAL_LAKE = {"catalog": "ducklake:lake/catalog.ducklake", "data_path": "lake/data"}
"""The lake backend: every home keeps a DuckLake of its own (a DuckDB-file catalog, data files in a folder), through
the environment, so the pipeline's subprocesses use it too."""

BACKENDS = ("file", "lake")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--warehouse",
        choices=(*BACKENDS, "both"),
        default="both",
        help="the backends tests marked both_warehouses run on (default: both, each test once per backend; every"
        " other test uses the DuckDB file)",
    )


def pytest_report_header(config: pytest.Config) -> str:
    return f"gpuledger warehouse backends of the both_warehouses tests: {config.getoption('--warehouse')}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Tests marked ``both_warehouses`` run once per backend; session-scoped, so pytest groups each backend's tests
    and builds each backend's shared homes once."""
    if metafunc.definition.get_closest_marker("both_warehouses"):
        chosen = metafunc.config.getoption("--warehouse")
        backends = BACKENDS if chosen == "both" else (chosen,)
        metafunc.parametrize("warehouse_backend", backends, indirect=True, scope="session")


SLOW_FIXTURES = {"demo_copy", "demo_copy_cold", "validator_ready"}
"""A test that copies the demo home to change and run it again, or runs the official FOCUS validator (a Python 3.12
process), takes 5 s to a minute: ``slow``, like the end-to-end suites marked so."""


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's hook, which reads the xdist_group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A ``serial`` test runs on one xdist worker with the rest of its module, in order: its module's fixture is costly
    to build twice, or its processes must not overlap each other. A test using a :data:`SLOW_FIXTURES` is slow."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if item.get_closest_marker("serial"):
            group = item.module.__name__ if item.module else item.nodeid
            callspec = getattr(item, "callspec", None)
            # each backend's half of a module may go to either worker; no "]" in a group (xdist would drop it)
            if callspec is not None and "warehouse_backend" in callspec.params:
                group += f"-{callspec.params['warehouse_backend']}"
            item.add_marker(pytest.mark.xdist_group(group))


SCATTERED_GROUPS = pytest.StashKey[str]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under ``--dist loadgroup``, note when xdist ignored the ``serial`` groups (its collection hook, which ran
    before this one, names each grouped test's group in its node id): pytest-dev/pytest-xdist#1386, with pytest 9.2."""
    if not session.config.getoption("loadgroup", False):
        return
    scattered = [
        item.nodeid for item in session.items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid
    ]
    if scattered:
        session.config.stash[SCATTERED_GROUPS] = f"pytest-xdist ignored the xdist_group of {len(scattered)} tests"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A grouped test xdist would scatter fails before its fixtures run: scattered, each module's costly fixture is
    built on every worker and processes that must not overlap do, silently."""
    if item.get_closest_marker("xdist_group") and SCATTERED_GROUPS in item.config.stash:
        pytest.fail(item.config.stash[SCATTERED_GROUPS], pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def warehouse_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The warehouse backend of every home the test makes (the DuckDB file unless the test is marked
    ``both_warehouses``), set in the environment for the test and the subprocesses it starts."""
    backend: str = getattr(request, "param", "file")
    names = {WAREHOUSE_ENVIRONMENT[key]: value for key, value in LOCAL_LAKE.items()}
    saved = {name: os.environ.pop(name, None) for name in names}
    if backend == "lake":
        os.environ.update(names)
    yield backend
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], str]) -> tuple[Path, str]:
    """Folder ``name`` built once per test session by ``build`` (returning what it printed), shared by every xdist
    worker: the first to ask builds it under a file lock, the others wait and read it. Readers must not change it."""
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # each worker's basetemp is a folder of the session's
        shared = shared.parent
    folder, printed, done = shared / name, shared / f"{name}.out", shared / f"{name}.done"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            if folder.exists():  # a worker died building it
                shutil.rmtree(folder)
            folder.mkdir()
            printed.write_text(build(folder), encoding="utf-8")
            done.touch()
    return folder, printed.read_text(encoding="utf-8")


def cli_output(*args: str) -> str:
    """What ``gpuledger ARGS`` printed, run in this process; it must succeed."""
    output = io.StringIO()
    with redirect_stdout(output):
        assert main(list(args)) == 0
    return output.getvalue()


def _run_demo(folder: Path) -> str:
    return cli_output("demo", "--home", str(folder / "home"))


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory, warehouse_backend: str) -> tuple[Path, str]:
    """``gpuledger demo`` run once per session and backend: its home and what it printed. Tests that change it use a
    copy."""
    folder, printed = built_once(tmp_path_factory, f"demo-{warehouse_backend}", _run_demo)
    return folder / "home", printed


@pytest.fixture(scope="session")
def demo_home(demo_run: tuple[Path, str]) -> Path:
    return demo_run[0]


@pytest.fixture
def demo_copy(demo_home: Path, tmp_path: Path) -> Path:
    """A private copy of the demo home with its run history (modification times kept, as ``cp -a`` does), for tests
    that restate, corrupt or rerun it: a rerun skips what did not change."""
    copy = tmp_path / "demo"
    shutil.copytree(demo_home, copy, symlinks=True)
    return copy


@pytest.fixture
def demo_copy_cold(demo_home: Path, tmp_path: Path) -> Path:
    """A private copy of the demo home without its run history (``dagster/``): a run runs every partition."""
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


def _migrate(folder: Path) -> str:
    open_warehouse(folder).close()
    return ""


@pytest.fixture(scope="session")
def migrated_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty warehouse file migrated to this code's schema, once per session: copied, it spares each test the
    migration (a cold one is ``open_warehouse`` on a fresh home)."""
    folder, _ = built_once(tmp_path_factory, "migrated-warehouse", _migrate)
    return folder / WAREHOUSE_FILE


@pytest.fixture
def con(request: pytest.FixtureRequest, home: Path, warehouse_backend: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse of ``home``, migrated (on the file backend a copy of the session's migrated file)."""
    if warehouse_backend == "file":  # asked for here only: built under a lake test's environment it would be a lake
        shutil.copyfile(request.getfixturevalue("migrated_warehouse"), home / WAREHOUSE_FILE)
    connection = open_warehouse(home)
    yield connection
    connection.close()


def focus_rows_below(con: duckdb.DuckDBPyConnection, root: Path) -> pa.Table:
    """Every stored FOCUS row with its source file relative to ``root`` and without the ingest time, so that
    loads of the same files from two folders (synced, copied by hand) compare equal (as :func:`focus_snapshot`)."""
    rows = focus_rows_of_month(con, root)
    assert rows
    return rows


def focus_rows_of_month(con: duckdb.DuckDBPyConnection, root: Path, month: str | None = None) -> pa.Table:
    """What :func:`focus_rows_below` compares, of billing month ``YYYY-MM`` (None: every month); none at all too."""
    return con.execute(
        "SELECT * EXCLUDE (x_IngestedAt) REPLACE (substr(x_SourceFile, length($root) + 2) AS x_SourceFile)"
        " FROM focus.costs WHERE CAST($month AS VARCHAR) IS NULL OR strftime(BillingPeriodStart, '%Y-%m') = $month"
        " ORDER BY ALL",
        {"root": str(root), "month": month},
    ).to_arrow_table()


def slice_totals(home: Path) -> list[tuple[object, ...]]:
    """Rows, Σ BilledCost and Σ EffectiveCost per billing account and month of a home's warehouse."""
    with closing(open_warehouse(home)) as con:
        return con.execute(
            "SELECT BillingAccountId, strftime(BillingPeriodStart, '%Y-%m'), count(*), sum(BilledCost),"
            " sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()


def focus_snapshot(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every stored FOCUS row, in a stable order, for before/after comparisons: an Arrow table, which ``==``
    compares value by value and type by type as exactly as Python tuples, in a sixth of the time (no Decimal or
    datetime object per value)."""
    return con.execute("SELECT * FROM focus.costs ORDER BY ALL").to_arrow_table()


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
