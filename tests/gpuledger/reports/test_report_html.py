"""The HTML report: every number shown equals showback at the rounding shown; self-contained; no script."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from tests.fixtures.report_cases import hours, money, parse_html, percent, within_a_cent

pytestmark = pytest.mark.both_warehouses


def test_every_team_number_equals_showback(demo_reports, showback):
    page = parse_html((demo_reports / "index.html").read_text(encoding="utf-8"))
    assert page.team_names == showback.teams
    checked = 0
    for team in showback.teams:
        for cell, expected in showback.expected_team_cells(team).items():
            assert page.cells[(team, cell)] == expected, (team, cell)
            checked += 1
        for cell, exact in showback.exact_team_cells(team).items():  # rounded so that the table foots
            assert within_a_cent(page.cells[(team, cell)], exact), (team, cell, exact)
            checked += 1
        for currency in showback.currencies(team):
            if currency != "USD":  # a source-currency column's total: its exact total rounded
                assert page.cells[(team, f"cat:total:{currency}")] == money(showback.line(team, currency)["total_cost"])
        assert page.cells[(team, "total")] == f"{page.cells[(team, 'catr:total:all')]} USD"
        for (day, hour), value in showback.idle_hours(team).items():
            shown = page.cells[(team, f"heat:{day}:{hour}")]
            assert shown.endswith(f": {value.quantize(Decimal('0.1'))} idle GPU-h"), (team, day, hour, shown)
            checked += 1
    assert checked > 500


def test_company_summary_equals_focus_and_ranks_teams(demo_reports, showback):
    page = parse_html((demo_reports / "index.html").read_text(encoding="utf-8"))
    company = showback.company_total_from_focus()
    assert page.cells[(None, "company:total")] == f"{money(company)} USD"
    assert page.cells[(None, "company:cat:total")] == money(company)
    assert page.cells[(None, "company:currency:total")] == page.cells[(None, "rank:total")] == money(company)
    for currency, total in showback.focus.items():
        assert page.cells[(None, f"company:currency:{currency}:total")] == money(total)
        assert page.cells[(None, f"company:currency:{currency}:focus")] == money(total)
    assert page.cells[(None, "company:currency:EUR:rate")] == "1.079"
    assert page.cells[(None, "rate:EUR:date")] == "2026-10-31"
    ranked = sorted(showback.teams, key=lambda t: -showback.team_total_reporting(t))
    for rank, team in enumerate(ranked, start=1):
        assert page.cells[(None, f"rank:{rank}:team")] == team
        assert within_a_cent(page.cells[(None, f"rank:{rank}:total")], showback.team_total_reporting(team))
    gpu_hours = sum(Decimal(str(r["gpu_hours"])) for r in showback.team_month)
    assert page.cells[(None, "company:gpu_hours")] == hours(gpu_hours)
    for currency in showback.focus:  # data quality: the share priced by node-level activity shared between jobs
        lines = [r for r in showback.team_month if r["currency"] == currency]
        jobs_gpu = sum(r["run_cost"] + r["idle_allocated_cost"] + r["idle_underutilized_cost"] for r in lines)
        shared = sum(r["node_shared_gpu_cost"] for r in lines)
        assert page.cells[(None, f"company:quality:{currency}")] == percent(shared / jobs_gpu)


def test_the_html_is_self_contained(demo_reports):
    text = (demo_reports / "index.html").read_text(encoding="utf-8")
    page = parse_html(text)
    assert not re.search(r"https?:|//|url\(", text, re.IGNORECASE)
    assert "script" not in page.tags and "<script" not in text.lower()
    assert not {"img", "link", "iframe", "object", "embed"} & page.tags
    assert all(not v.startswith(("http", "//", "javascript:")) for v in page.attribute_values)
    assert text.count("<svg") == 1 + 3 * 6  # the ranking, then categories, providers, heatmap per team
