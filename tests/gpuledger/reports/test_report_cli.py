"""`gpuledger report`: closed months only; issuing again gives the same bytes; a restatement is a version 2 that
lists its adjustment while version 1 stays; user-controlled names are escaped and never formulas."""

from __future__ import annotations

import csv
import io
import json
from contextlib import closing
from decimal import Decimal

import pytest

from gpuledger.warehouse.home import open_warehouse
from pipelines.cli import main
from tests.fixtures.report_cases import MONTH, money, parse_html
from tests.fixtures.restatements import restate_october

pytestmark = pytest.mark.both_warehouses

SCRIPT = "<script>alert(1)</script>"
FORMULA = "=cmd|' /C calc'!A0"


def _files(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_an_open_month_is_refused(demo_copy, capsys):
    assert main(["report", "--home", str(demo_copy), "--month", "2026-11"]) == 1
    assert "2026-11 is open until 2026-12-15" in capsys.readouterr().err
    assert not (demo_copy / "reports" / "2026-11").exists()


def test_issuing_again_gives_identical_bytes(demo_copy, demo_reports, capsys):
    """The demo issued October; issued again from scratch in a copy (same clock), every file is byte-identical."""
    with closing(open_warehouse(demo_copy)) as con:
        con.execute("DELETE FROM chargeback.statement_lines")
        con.execute("DELETE FROM chargeback.statements")
        con.execute("UPDATE meta.months SET state = 'closed', issued_at = NULL WHERE state = 'issued'")
    folder = demo_copy / "reports" / MONTH / "v1"
    for path in folder.iterdir():
        path.unlink()
    assert main(["report", "--home", str(demo_copy), "--month", MONTH]) == 0
    assert "version 1 (issued now)" in capsys.readouterr().out
    expected = _files(demo_reports)
    assert set(expected) >= {"index.html", "statement.pdf", "statement.json", "research.csv", "research.xlsx"}
    assert _files(folder) == expected
    assert main(["report", "--home", str(demo_copy), "--month", MONTH, "--issue"]) == 0  # unchanged: no v2
    assert "version 1 (issued before)" in capsys.readouterr().out
    assert _files(folder) == expected and not (folder.parent / "v2").exists()

    assert main(["report", "--home", str(demo_copy), "--month", MONTH, "--team", "research"]) == 0
    team_page = parse_html((folder / "research.html").read_text(encoding="utf-8"))
    assert team_page.team_names == ["research"]


def test_a_restatement_is_issued_as_version_2_listing_the_adjustment(demo_copy, demo_reports, capsys):
    extra = Decimal("1234.5600000000")
    restate_october(demo_copy, extra)
    assert main(["run", "--home", str(demo_copy)]) == 0
    capsys.readouterr()
    assert main(["report", "--home", str(demo_copy), "--month", MONTH]) == 0  # renders v1 and says why not v2
    out = capsys.readouterr().out
    assert "version 1 (issued before)" in out and "--issue" in out
    assert main(["report", "--home", str(demo_copy), "--month", MONTH, "--issue"]) == 0
    assert "version 2 (issued now)" in capsys.readouterr().out

    v1, v2 = demo_copy / "reports" / MONTH / "v1", demo_copy / "reports" / MONTH / "v2"
    assert _files(v1) == _files(demo_reports)  # version 1 is never edited
    first, second = (json.loads((v / "statement.json").read_bytes()) for v in (v1, v2))
    assert second["version"] == 2 and second["previous_version"]["version"] == 1
    [correction] = second["adjustments"]
    assert (correction["kind"], correction["currency"], Decimal(correction["adjustment"])) == (
        "correction",
        "EUR",
        extra,
    )
    team = correction["team"]
    before = next(t for t in first["teams"] if t["team"] == team)
    after = next(t for t in second["teams"] if t["team"] == team)
    eur = [
        Decimal(line["amounts"]["total"]) for t in (before, after) for line in t["lines"] if line["currency"] == "EUR"
    ]
    assert eur[1] - eur[0] == extra

    page = parse_html((v2 / "index.html").read_text(encoding="utf-8"))
    assert page.cells[(None, "correction:1:team")] == team
    assert page.cells[(None, "correction:1:adjustment")] == f"+{money(extra)}"
    assert page.cells[(None, "correction:1:reporting")] == f"+{money(extra * Decimal('1.079'))}"
    assert page.cells[(team, "adj:1:adjustment")] == f"+{money(extra)}"
    rows = list(csv.DictReader(io.StringIO((v2 / f"{team}.csv").read_text(encoding="utf-8"))))
    [adjustment] = [r for r in rows if r["section"] == "adjustment_correction"]
    assert Decimal(adjustment["amount_exact"]) == extra and adjustment["statement_version"] == "2"
    with closing(open_warehouse(demo_copy)) as con:
        versions = con.execute("SELECT version FROM chargeback.statements ORDER BY 1").fetchall()
    assert versions == [(1,), (2,)]


@pytest.fixture
def injected_copy(demo_copy):
    """The demo copy with a team named like a script and a job named like a spreadsheet formula, then run."""
    config = demo_copy / "gpuledger.toml"
    config.write_text(config.read_text().replace('= "speech"', f'= "{SCRIPT}"'))
    jobs = demo_copy / "telemetry" / "azure" / "jobs.csv"
    lines = list(csv.reader(io.StringIO(jobs.read_text())))
    name = lines[0].index("name")
    renamed = 0
    for row in lines[1:]:
        if row[lines[0].index("account")] == "vision":
            row[name] = FORMULA
            renamed += 1
    assert renamed
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(lines)
    jobs.write_text(out.getvalue())
    assert main(["run", "--home", str(demo_copy)]) == 0
    assert main(["report", "--home", str(demo_copy), "--month", MONTH, "--issue"]) == 0
    return demo_copy / "reports" / MONTH / "v2"


def test_user_controlled_names_are_escaped_and_never_formulas(injected_copy):
    import openpyxl

    text = (injected_copy / "index.html").read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    page = parse_html(text)
    assert SCRIPT in page.team_names
    assert SCRIPT in {value for (team, cell), value in page.cells.items() if team is None and cell.endswith(":team")}
    job_names = {value for (team, cell), value in page.cells.items() if team == "vision" and cell.endswith(":name")}
    assert FORMULA in job_names  # shown as the text it is

    slug = "script-alert-1-script"
    assert (injected_copy / f"{slug}.csv").exists() and (injected_copy / f"{slug}.xlsx").exists()
    rows = list(csv.DictReader(io.StringIO((injected_copy / "vision.csv").read_text(encoding="utf-8"))))
    details = {r["detail"] for r in rows if r["section"] == "job"}
    assert "'" + FORMULA in details and FORMULA not in details
    sheet = openpyxl.load_workbook(injected_copy / "vision.xlsx")["job"]
    cells = [c for c in sheet["G"] if c.value == FORMULA]
    assert cells and all(c.data_type == "s" for c in cells)
    team_rows = list(csv.DictReader(io.StringIO((injected_copy / f"{slug}.csv").read_text(encoding="utf-8"))))
    assert {r["team"] for r in team_rows} == {SCRIPT}

    import pypdf

    pdf_text = " ".join(p.extract_text() for p in pypdf.PdfReader(injected_copy / "statement.pdf").pages)
    assert f"Team {SCRIPT}" in pdf_text  # the PDF shows the name as text
