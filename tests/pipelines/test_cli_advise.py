"""`gpuledger advise`: a month's estimates per team, read from the published analyst file, as a table under a
header that says they are estimates that overlap; the team filter; unknown teams, months without estimates and
homes without an analyst file."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from pipelines.cli import main
from tests.fixtures.advice_cases import (
    EVIL,
    METHOD,
    MONTH,
    OPPORTUNITIES,
    closed_month,
    publish_tables,
    write_opportunities,
)


@pytest.fixture
def advised(home: Path) -> Path:
    with closing(closed_month(home)) as con:
        write_opportunities(con, OPPORTUNITIES)
        publish_tables(con, home)
    return home


def _table(out: str) -> list[list[str]]:
    """The rows of the printed table, split on runs of two spaces."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("----"))
    rows = []
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        rows.append([cell.strip() for cell in line.split("  ") if cell.strip()])
    return rows


def test_advise_lists_every_estimate_of_the_month_per_team_largest_first(advised, capsys):
    assert main(["advise", "--home", str(advised), "--month", MONTH]) == 0
    out = capsys.readouterr().out
    header = " ".join(out.split("\n\n")[0].split())
    assert header == (
        "ESTIMATES for 2026-11, as last published: not billed, not in any total. Opportunities overlap (a run may"
        " be right-sized and moved to spot), so they are never added up. Priced from the EXAMPLE rate card (list"
        " prices as of 2026-11-01): verify, or set [advice] rate_card to your own prices, before acting."
    )
    lines = out.splitlines()
    dashes = next(i for i, line in enumerate(lines) if line.startswith("----"))
    assert lines[dashes - 1].split() == ["team", "rank", "opportunity", "runs", "estimated", "saving"]
    assert _table(out) == [
        ["company-wide", "1", "owned GPUs", "50,000.00 USD"],
        ["research", "1", "spot", f"{EVIL}, rg-2, rg-3 +2 more", "1,234.57 USD"],
        ["research", "2", "right-size", "rg-2", "900.00 USD"],
        ["research", "3", "checkpoint interval", "rg-3", "40.00 USD"],
        ["research", "4", "checkpoint retention", "rg-4", "12.50 USD"],
        ["research", "5", "notebook auto-stop", "nb-1", "3.30 USD"],
        ["research", "6", "cheaper provider", "rg-5", "1.01 USD"],
        ["research", "7", "right-size", "rg-6", "0.50 USD"],
        ["vision", "1", "spot", "v-1", "77.70 EUR"],
    ]
    assert METHOD[:40] not in out and "--month 2026-11 --verbose" in out  # method and evidence: --verbose


def test_the_team_filter_with_each_estimate_s_method_and_evidence(advised, capsys):
    assert main(["advise", "--home", str(advised), "--month", MONTH, "--team", "vision", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert _table(out) == [["vision", "1", "spot", "v-1", "77.70 EUR"]]
    detail = out.split("vision #1 spot: 77.70 EUR\n")[1]
    method, evidence, runs = detail.split("\n  evidence: ")[0], *detail.split("\n  evidence: ")[1].split("\n  runs:")
    assert " ".join(method.removeprefix("  method:").split()) == METHOD
    assert evidence.strip() == "evidence of spot" and runs.strip() == "v-1"


def test_an_unknown_team_exits_1_naming_the_teams(advised, capsys):
    assert main(["advise", "--home", str(advised), "--month", MONTH, "--team", "nope"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "gpuledger: error: no team 'nope'; the teams: research, vision\n" and captured.out == ""


def test_a_month_without_estimates_says_so(advised, capsys):
    assert main(["advise", "--home", str(advised), "--month", "2026-10", "--team", "research"]) == 0
    assert capsys.readouterr().out.endswith("\n\nNo opportunities estimated for 2026-10 for team research.\n")


def test_an_analyst_file_published_before_the_advice_stage_ran_has_no_estimates(home, capsys):
    with closing(closed_month(home)) as con:
        publish_tables(con, home, ["showback.team_month"])
    assert main(["advise", "--home", str(home), "--month", MONTH]) == 0
    assert capsys.readouterr().out.startswith(
        f"No estimates in {home / 'analyst.duckdb'}: it was published before the advice stage ran ("
    )


def test_a_home_without_an_analyst_file_is_read_and_nothing_is_created(tmp_path, capsys):
    empty = tmp_path / "nothing-here"
    assert main(["advise", "--home", str(empty), "--month", MONTH]) == 1
    assert "holds no analyst.duckdb" in capsys.readouterr().err and not empty.exists()
    assert main(["advise", "--home", str(empty), "--month", "2026-13"]) == 2


def test_the_help_says_what_it_lists_with_an_example(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "    advise" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["advise", "--help"])
    text = capsys.readouterr().out
    assert "ESTIMATE" in text and "never added up" in text
    assert "Example:\n  gpuledger advise --home .home --month 2026-10 --team research" in text
