"""The per-team CSV and XLSX for finance systems: the stored precision of showback, and no formula injection."""

from __future__ import annotations

import csv
import io
import zipfile
from decimal import Decimal

import openpyxl
import pytest

from gpuledger.reports.tables import COLUMNS, neutralize, render_xlsx
from tests.fixtures.report_cases import CATEGORY_COLUMNS, convert


def _csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_csv_amounts_equal_showback_exactly(demo_reports, showback):
    for team in showback.teams:
        rows = _csv(demo_reports / f"{team}.csv")
        assert {r["team"] for r in rows} == {team} and {r["month"] for r in rows} == {"2026-10"}
        amounts = {(r["item"], r["currency"]): r for r in rows if r["section"] == "amount"}
        for currency in showback.currencies(team):
            line, rate = showback.line(team, currency), showback.rate[currency]
            for key, column in CATEGORY_COLUMNS.items():
                row = amounts[(key, currency)]
                assert Decimal(row["amount"]) == line[column], (team, key, currency)
                assert Decimal(row["amount_reporting"]) == convert(line[column], rate)
            assert Decimal(amounts[("failed_run", currency)]["amount"]) == line["failed_run_cost"]
        totals = {r["item"]: r for r in rows if r["section"] == "reporting_total"}
        assert Decimal(totals["total"]["amount_reporting"]) == showback.team_total_reporting(team)
        jobs = [r for r in rows if r["section"] == "job"]
        expected = showback.top_jobs(team)
        assert [r["item"] for r in jobs] == [f"{j['cluster']}/{j['job_id']}" for j in expected]
        assert [Decimal(r["amount"]) for r in jobs] == [j["total_cost"] for j in expected]
        heat = {(r["item"], r["detail"]): Decimal(r["quantity"]) for r in rows if r["section"] == "idle_hour_of_week"}
        assert len(heat) == 168
        assert float(sum(heat.values())) == pytest.approx(float(sum(showback.idle_hours(team).values())), abs=1e-4)


def test_xlsx_holds_the_csv_rows_with_numbers_as_numbers(demo_reports, showback):
    for team in showback.teams:
        rows = _csv(demo_reports / f"{team}.csv")
        sheet = openpyxl.load_workbook(demo_reports / f"{team}.xlsx")["statement"]
        values = list(sheet.iter_rows(values_only=True))
        assert list(values[0]) == list(COLUMNS) and len(values) == len(rows) + 1
        for row, cells in zip(rows, values[1:], strict=True):
            for column, cell in zip(COLUMNS, cells, strict=True):
                if row[column] == "":
                    assert cell is None
                elif column in ("amount", "amount_reporting", "quantity", "exchange_rate"):
                    assert cell == pytest.approx(float(row[column]), rel=1e-12, abs=1e-9)
                elif column == "statement_version":
                    assert cell == int(row[column])
                else:
                    assert cell == row[column]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("research", "research"),
        ("a=b", "a=b"),
    ],
)
def test_csv_text_never_starts_like_a_formula(text, shown):
    assert neutralize(text) == shown


def test_xlsx_writes_formula_like_text_as_a_string(demo_reports):
    import json

    data = json.loads((demo_reports / "statement.json").read_bytes())
    team = data["teams"][0]
    team["team"] = "=cmd|' /C calc'!A0"
    team["top_jobs"][0]["name"] = '=HYPERLINK("x","y")'
    content = render_xlsx(data, team)
    sheet_xml = zipfile.ZipFile(io.BytesIO(content)).read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet_xml and "<f " not in sheet_xml
    sheet = openpyxl.load_workbook(io.BytesIO(content))["statement"]
    assert sheet["C2"].value == "=cmd|' /C calc'!A0" and sheet["C2"].data_type == "s"
    assert any(c.value == '=HYPERLINK("x","y")' and c.data_type == "s" for c in sheet["F"])
    assert render_xlsx(data, team) == content  # deterministic bytes
