"""`pip install .` gives a working package: a wheel in a fresh venv runs the demo from another folder."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import duckdb
import pytest

from tests.fixtures.paths import REPO

pytestmark = pytest.mark.slow

TOTALS = "SELECT ProviderName, BillingCurrency, sum(BilledCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"


def test_wheel_in_a_fresh_venv_runs_the_demo_from_another_folder(tmp_path: Path, demo_home: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(REPO)], check=True
    )
    (wheel,) = wheels.glob("gpuledger-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True)
    # The dependencies come from this test's environment; the project itself only from the wheel.
    site = Path(
        subprocess.check_output([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
        .decode()
        .strip()
    )
    (site / "test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in {"DAGSTER_HOME", "GPULEDGER_HOME", "PYTHONPATH"}}
    located = subprocess.check_output(
        [python, "-c", "import gpuledger, sql, pipelines; print(gpuledger.__file__, sql.__file__, pipelines.__file__)"],
        cwd=elsewhere,
        env=env,
    ).decode()
    assert all(path.startswith(str(site)) for path in located.split()), located

    home = tmp_path / "new-home"
    result = subprocess.run(
        [env_dir / "bin" / "gpuledger", "demo", "--home", str(home)],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert str(home / "analyst.duckdb") in result.stdout
    with (
        duckdb.connect(str(home / "analyst.duckdb"), read_only=True) as installed,
        duckdb.connect(str(demo_home / "analyst.duckdb"), read_only=True) as checkout,
    ):
        assert installed.execute(TOTALS).fetchall() == checkout.execute(TOTALS).fetchall()
    assert list((home / "reports").rglob("statement.pdf"))
