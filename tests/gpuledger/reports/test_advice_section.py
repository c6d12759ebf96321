"""The statement's advice: the estimates as they stood at issue time, never figures that make a new version, and
a section per team (and a company-wide one) that says ESTIMATE, has no total and escapes what it shows."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pypdf
import pytest

from gpuledger.chargeback.months import issue_month
from gpuledger.chargeback.statement import ADVICE_NOTE
from gpuledger.reports.html import render_html
from gpuledger.reports.pdf import render_pdf
from models.advice import AdviceConfig
from tests.fixtures.advice_cases import EVIL, METHOD, MONTH, NOW, OPPORTUNITIES, closed_month, write_opportunities
from tests.fixtures.report_cases import parse_html, parse_tables

pytestmark = pytest.mark.both_warehouses


@pytest.fixture
def warehouse(home: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with closing(closed_month(home)) as con:
        yield con


def _stored(con: duckdb.DuckDBPyConnection) -> list[tuple[int, dict]]:
    rows = con.execute("SELECT version, data FROM chargeback.statements ORDER BY version").fetchall()
    return [(version, json.loads(text)) for version, text in rows]


def test_the_statement_keeps_each_team_s_top_opportunities_as_estimated_at_issue(warehouse):
    write_opportunities(warehouse, OPPORTUNITIES)
    issue_month(warehouse, MONTH, NOW)
    [(_, data)] = _stored(warehouse)
    advice = data["advice"]
    assert advice["estimated"] is True and advice["note"] == ADVICE_NOTE
    assert advice["rate_card"] == {
        "example": True,
        "as_of": ["2026-11-01"],
        "sources": [AdviceConfig().rates[0].source],
        "prices": len(AdviceConfig().rates),
    }
    research = advice["teams"]["research"]
    assert [o["rank"] for o in research] == [1, 2, 3, 4, 5]  # AdviceConfig.top
    assert research[0] == {
        "rank": 1,
        "opportunity": "spot",
        "currency": "USD",
        "estimated_saving": "1234.5650000000",  # the DECIMAL as stored
        "method": METHOD,
        "evidence": "evidence of spot",
        "run_groups": [EVIL, "rg-2", "rg-3", "rg-4", "rg-5"],
    }
    assert [o["opportunity"] for o in advice["teams"]["vision"]] == ["spot"]
    assert [(o["opportunity"], o["run_groups"]) for o in advice["company"]] == [("owned GPUs", None)]
    assert advice["unlisted"] == {"company": 0, "teams": {"research": 2}}


def test_changed_estimates_alone_never_make_a_new_version(warehouse):
    write_opportunities(warehouse, OPPORTUNITIES)
    first = issue_month(warehouse, MONTH, NOW)
    write_opportunities(warehouse, [("research", "USD", "spot", Decimal("99.99"), ["rg-9"])])
    again = issue_month(warehouse, MONTH, datetime(2026, 12, 3, tzinfo=UTC))
    assert (again.version, again.new, again.content_sha256) == (1, False, first.content_sha256)
    [(_, data)] = _stored(warehouse)
    assert data["advice"]["teams"]["research"][0]["estimated_saving"] == "1234.5650000000"  # as of issue time


def test_a_warehouse_the_advice_stage_never_ran_on_issues_with_empty_advice(warehouse):
    issue_month(warehouse, MONTH, NOW)
    [(_, data)] = _stored(warehouse)
    assert data["advice"] == {
        "estimated": False,
        "note": ADVICE_NOTE,
        "rate_card": {"example": None, "as_of": [], "sources": [], "prices": 0},
        "company": [],
        "teams": {},
        "unlisted": {"company": 0, "teams": {}},
    }
    page = parse_html(render_html(data))
    assert page.cells[("research", "advice:none")] == (
        "No estimates: the advice stage had not run when this version was issued."
    )


def test_each_team_s_section_says_estimate_has_no_total_and_escapes_names(warehouse):
    write_opportunities(warehouse, OPPORTUNITIES)
    issue_month(warehouse, MONTH, NOW)
    [(_, data)] = _stored(warehouse)
    html = render_html(data)
    page = parse_html(html)
    cells = page.cells
    assert cells[("research", "advice:note")] == ADVICE_NOTE
    assert cells[("research", "advice:1:opportunity")] == "spot"
    assert cells[("research", "advice:1:saving")] == "1,234.57 USD"  # rounded half away from zero, to cents
    assert cells[("research", "advice:2:saving")] == "900.00 USD"
    assert cells[("research", "advice:1:method")] == METHOD
    assert cells[("research", "advice:1:runs")] == f"{EVIL}rg-2rg-3+2 more"  # the first three, a line each
    assert cells[("research", "advice:unlisted")] == (
        "2 smaller opportunities are not listed here. Today's estimates, every one:"
        " gpuledger advise --month 2026-11 --team research"
    )
    assert cells[("vision", "advice:1:saving")] == "77.70 EUR"
    assert ("vision", "advice:unlisted") not in cells
    assert "EXAMPLE rate card (list prices as of 2026-11-01)" in html
    assert "Estimated when this version was issued (2026-12-02 03:00:00 UTC)" in html
    assert "<script" not in html and "<b>co" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;co&lt;/b&gt;" in html
    advice_tables = [(team, t) for team, t in parse_tables(html) if t.css_class == "advice"]
    assert [team for team, _ in advice_tables] == ["research", "vision", None]  # the company-wide one last
    assert all(not t.total_rows and len(t.rows) <= 5 for _, t in advice_tables)  # overlapping: never totalled
    [company] = [t for team, t in advice_tables if team is None]
    assert [cell for cell, _ in company.rows[0]][:3] == ["1", "owned GPUs", "50,000.00 USD"]


def test_a_version_issued_before_statements_kept_advice_renders_without_it(warehouse):
    issue_month(warehouse, MONTH, NOW)
    [(_, data)] = _stored(warehouse)
    del data["advice"]
    html = render_html(data)
    assert "estimates" not in html and "ESTIMATE" not in html


def test_the_pdf_shows_the_estimates_on_the_team_s_pages(warehouse):
    write_opportunities(warehouse, OPPORTUNITIES)
    issue_month(warehouse, MONTH, NOW)
    [(_, data)] = _stored(warehouse)
    pdf = render_pdf(render_html(data), data)  # offline: the renderer refuses any URL
    pages = [" ".join(page.extract_text().split()) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]
    research = next(i for i, text in enumerate(pages) if text.startswith("Team research"))
    text = " ".join(pages[research : research + 2])
    assert (
        "Where it could have been cheaper — estimates" in text
        and "ESTIMATES · Not billed and not included in any total" in text
    )
    assert "1,234.57 USD" in text and "<script>alert(1)</script> & <b>co</b>" in text
    assert "Company-wide estimates — 2026-11" in pages[-1] and "50,000.00 USD" in pages[-1]
