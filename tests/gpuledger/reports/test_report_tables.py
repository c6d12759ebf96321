"""The per-team CSV and XLSX for finance systems: the stored precision of showback, and no formula injection."""

from __future__ import annotations

import csv
import io
import zipfile
from decimal import ROUND_HALF_UP, Decimal

import openpyxl
import pytest

from gpuledger.reports.tables import COLUMNS, neutralize, render_xlsx
from tests.fixtures.report_cases import CATEGORY_COLUMNS, convert

pytestmark = pytest.mark.both_warehouses


def _csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_csv_amounts_equal_showback_exactly(demo_reports, showback):
    for team in showback.teams:
        rows = _csv(demo_reports / f"{team}.csv")
        assert {r["team"] for r in rows} == {team} and {r["month"] for r in rows} == {"2026-10"}
        amounts = {(r["item"], r["currency"]): r for r in rows if r["section"] == "cost_by_category"}
        for currency in showback.currencies(team):
            line, rate = showback.line(team, currency), showback.rate[currency]
            for key, column in CATEGORY_COLUMNS.items():
                row = amounts[(key, currency)]
                assert row["kind"] == ("component" if key != "total" else "subtotal")
                assert Decimal(row["amount_exact"]) == line[column], (team, key, currency)
                assert Decimal(row["amount_reporting_exact"]) == convert(line[column], rate)
            measures = {r["item"]: r for r in rows if r["section"] == "cost_measure" and r["currency"] == currency}
            assert Decimal(measures["failed_run"]["amount_exact"]) == line["failed_run_cost"]
            assert (
                measures["failed_run"]["amount"]
                == f"{line['failed_run_cost'].quantize(Decimal('0.01'), ROUND_HALF_UP)}"
            )
        [total] = [r for r in rows if r["kind"] == "total"]
        assert Decimal(total["amount_reporting_exact"]) == showback.team_total_reporting(team)
        assert {r["kind"] for r in rows if r["section"] != "cost_by_category"} == {"measure"}
        jobs = [r for r in rows if r["section"] == "job"]
        expected = showback.top_jobs(team)
        assert [r["item"] for r in jobs] == [f"{j['cluster']}/{j['job_id']}" for j in expected]
        assert [Decimal(r["amount_exact"]) for r in jobs] == [j["total_cost"] for j in expected]
        heat = {(r["item"], r["detail"]): Decimal(r["quantity"]) for r in rows if r["section"] == "idle_hour_of_week"}
        assert len(heat) == 168
        assert float(sum(heat.values())) == pytest.approx(float(sum(showback.idle_hours(team).values())), abs=1e-4)


def test_xlsx_holds_the_csv_rows_one_sheet_per_section_with_numbers_as_numbers(demo_reports, showback):
    for team in showback.teams:
        rows = _csv(demo_reports / f"{team}.csv")
        book = openpyxl.load_workbook(demo_reports / f"{team}.xlsx")
        sections = list(dict.fromkeys(r["section"] for r in rows))
        assert book.sheetnames == ["summary", *sections]
        for section in sections:
            sheet = book[section]
            values = list(sheet.iter_rows(values_only=True))
            expected = [r for r in rows if r["section"] == section]
            assert list(values[0]) == list(COLUMNS) and len(values) == len(expected) + 1
            for row, cells in zip(expected, values[1:], strict=True):
                for column, cell in zip(COLUMNS, cells, strict=True):
                    if row[column] == "":
                        assert cell is None
                    elif column in ("amount", "amount_reporting", "quantity", "exchange_rate"):
                        assert cell == pytest.approx(float(row[column]), rel=1e-12, abs=1e-9)
                    elif column == "statement_version":
                        assert cell == int(row[column])
                    else:  # text, and the exact amounts kept exact as text
                        assert cell == row[column]
            money = [sheet.cell(row=2, column=COLUMNS.index(c) + 1) for c in ("amount", "amount_reporting")]
            assert all(c.number_format == "#,##0.00" for c in money if c.value is not None)
            widths = {
                column: sheet.column_dimensions[letter].width
                for column, letter in zip(COLUMNS, "ABCDEFGHIJKLMNOP", strict=True)
            }
            assert all(8 <= width <= 60 for width in widths.values()) and widths["section"] >= len(section)


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
    next(r for r in data["company"]["ranking"] if r["team"] == team["team"])["team"] = "=cmd|' /C calc'!A0"
    team["team"] = "=cmd|' /C calc'!A0"
    team["top_jobs"][0]["name"] = '=HYPERLINK("x","y")'
    content = render_xlsx(data, team)
    archive = zipfile.ZipFile(io.BytesIO(content))
    sheets = [name for name in archive.namelist() if name.startswith("xl/worksheets/sheet")]
    assert len(sheets) > 3
    for name in sheets:
        sheet_xml = archive.read(name).decode()
        assert "<f>" not in sheet_xml and "<f " not in sheet_xml
    sheet = openpyxl.load_workbook(io.BytesIO(content))["job"]
    assert sheet["C2"].value == "=cmd|' /C calc'!A0" and sheet["C2"].data_type == "s"
    assert any(c.value == '=HYPERLINK("x","y")' and c.data_type == "s" for c in sheet["G"])
    assert render_xlsx(data, team) == content  # deterministic bytes
