"""Without pango, the system library WeasyPrint loads, the reports are written without their PDF, one line says what
to install, and the command succeeds. Pango is made unloadable for a subprocess alone, without root: an empty file of
its name first on LD_LIBRARY_PATH, which the dynamic loader refuses, so WeasyPrint's own import fails with cffi's
error as on a machine without pango."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuledger.reports.pdf import PDF_INSTALL
from tests.fixtures.report_cases import MONTH

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="hides pango's Linux soname from the dynamic loader"),
    pytest.mark.slow,
]

GPULEDGER = Path(sys.executable).parent / "gpuledger"
HINT = f"  no PDF: WeasyPrint cannot load the system library libpango-1.0-0; to add the PDF: {PDF_INSTALL}"


@pytest.fixture
def without_pango(tmp_path: Path) -> dict[str, str]:
    """An environment in which pango cannot be loaded."""
    unloadable = tmp_path / "unloadable"
    unloadable.mkdir()
    (unloadable / "libpango-1.0.so.0").touch()
    searched = [str(unloadable), *filter(None, [os.environ.get("LD_LIBRARY_PATH")])]
    return os.environ | {"LD_LIBRARY_PATH": os.pathsep.join(searched)}


def _files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _gpuledger(env: dict[str, str], *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([GPULEDGER, *words], env=env, capture_output=True, text=True, timeout=300)


def test_without_pango_the_reports_are_written_but_the_pdf_and_one_line_says_what_to_install(
    demo_copy, demo_reports, without_pango
):
    folder = demo_copy / "reports" / MONTH / "v1"
    shutil.rmtree(folder)
    done = _gpuledger(without_pango, "report", "--home", str(demo_copy), "--month", MONTH)
    assert done.returncode == 0, done.stdout + done.stderr
    written = _files(folder)
    assert {"index.html", "statement.json", "research.csv", "research.xlsx"} <= set(written)
    # the same bytes as the demo rendered with pango, less the PDF
    assert written == {name: content for name, content in _files(demo_reports).items() if name != "statement.pdf"}
    lines = done.stdout.splitlines()
    assert [line for line in lines if "PDF:" in line] == [HINT]
    assert lines[lines.index(HINT) - 1] == f"  {folder / 'vision.xlsx'}"  # right below the files written
    assert "WeasyPrint could not import" not in done.stdout + done.stderr  # its banner is not the user's one line

    team = _gpuledger(without_pango, "report", "--home", str(demo_copy), "--month", MONTH, "--team", "research")
    assert team.returncode == 0, team.stdout + team.stderr
    assert {"research.html", "research.csv", "research.xlsx"} <= {path.name for path in folder.iterdir()}
    assert not list(folder.glob("*.pdf"))
    assert [line for line in team.stdout.splitlines() if "PDF:" in line] == [HINT]


def test_the_month_close_through_dagster_reports_the_missing_pdf(demo_copy, without_pango):
    """What `gpuledger demo` prints after each closed month comes from the runner's Report."""
    shutil.rmtree(demo_copy / "reports" / MONTH / "v1")
    script = (
        "import sys; from pathlib import Path; from pipelines.runner import close_month\n"
        "report = close_month(Path(sys.argv[1]), sys.argv[2])\n"
        "print(sorted(path.suffix for path in report.files)); print(report.pdf_missing)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(demo_copy), MONTH], env=without_pango, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    suffixes, missing = done.stdout.splitlines()[-2:]
    assert ".pdf" not in suffixes and ".html" in suffixes and ".xlsx" in suffixes
    assert f"  {missing}" == HINT
