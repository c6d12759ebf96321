"""Every table people read foots as printed, in every rendering (HTML, PDF, CSV, XLSX), and every printed total is
the exact total rounded to cents (a team's total: its cents in the company total, as ranked)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import defaultdict
from decimal import Decimal

import openpyxl
import pypdf
import pytest

from gpuledger.chargeback.statement import CATEGORIES, CATEGORY_LABELS
from gpuledger.reports.tables import SUMMARY_HEADER_ROW
from tests.fixtures.report_cases import money, number, parse_tables, within_a_cent

pytestmark = pytest.mark.both_warehouses

CENT = Decimal("0.01")
MONEY = re.compile(r"-?\d{1,3}(?:,\d{3})*\.\d{2}(?!\d)")


def _statement(demo_reports):
    return json.loads((demo_reports / "statement.json").read_bytes())


def _html_tables(demo_reports):
    return parse_tables((demo_reports / "index.html").read_text(encoding="utf-8"))


def test_every_html_table_with_a_total_foots_down_and_across(demo_reports):
    footed = crossed = 0
    for team, table in _html_tables(demo_reports):
        for position in table.total_rows:
            total_row = table.rows[position]
            body = [row for i, row in enumerate(table.rows) if i not in table.total_rows]
            for column, (text, _) in enumerate(total_row):
                total = number(text)
                if total is None or column == 0:
                    continue
                parts = [number(row[column][0]) for row in body]
                assert None not in parts, (team, table.css_class, column)
                assert sum(parts, Decimal(0)) == total, (team, table.css_class, table.header[column], text)
                footed += 1
        if table.header and re.fullmatch(r"Total [A-Z]{3}", table.header[-1]):  # a row total, reporting currency
            currency = table.header[-1].removeprefix("Total ")
            summed = [i for i, name in enumerate(table.header) if name == currency or f" in {currency} @" in name]
            for row in table.rows:
                values = [number(row[i][0]) for i in summed]
                assert sum(values, Decimal(0)) == number(row[-1][0]), (team, row[0][0])
                crossed += 1
    assert footed >= 5 + 6 * 2 and crossed == 6 * 9  # company: currencies, categories, ranking; each team


def test_every_html_total_is_the_exact_total_rounded(demo_reports):
    data = _statement(demo_reports)
    company = Decimal(data["company"]["reporting_totals"]["total"])
    cells = {
        (team, name): text
        for team, table in _html_tables(demo_reports)
        for row in table.rows
        for text, name in row
        if name
    }
    for name in ("company:cat:total", "company:currency:total", "rank:total"):
        assert cells[(None, name)] == money(company), name
    ranked = {r["team"]: r["rank"] for r in data["company"]["ranking"]}
    for team in data["teams"]:
        name = team["team"]
        ranked_total = cells[(None, f"rank:{ranked[name]}:total")]
        assert within_a_cent(ranked_total, Decimal(team["reporting_totals"]["total"]))
        assert cells[(name, "catr:total:all")] == ranked_total  # the same figure wherever it is printed
        for line in team["lines"]:
            if line["currency"] != data["reporting_currency"]:  # a column of its own currency foots on its own
                assert cells[(name, f"cat:total:{line['currency']}")] == money(Decimal(line["amounts"]["total"]))


def _pdf_lines(demo_reports):
    reader = pypdf.PdfReader(io.BytesIO((demo_reports / "statement.pdf").read_bytes()))
    return [line.strip() for page in reader.pages for line in page.extract_text().splitlines()]


def test_the_pdf_category_tables_and_ranking_foot_as_printed(demo_reports):
    data = _statement(demo_reports)
    lines = _pdf_lines(demo_reports)
    labels = [CATEGORY_LABELS[key] for key in CATEGORIES]
    tables = 0
    for start, line in enumerate(lines):
        if not line.startswith(labels[0] + " ") or not MONEY.search(line):
            continue  # a category table starts with its Run row (a chart's label line has no amount)
        rows = [MONEY.findall(lines[start + i].removeprefix(label)) for i, label in enumerate(labels)]
        assert lines[start + len(labels)].startswith("Total ")
        total = MONEY.findall(lines[start + len(labels)])
        for column, printed in enumerate(total):
            assert sum(Decimal(row[column].replace(",", "")) for row in rows) == Decimal(printed.replace(",", ""))
        for row in [*rows, total]:  # across: the currencies in the reporting currency add up to the last column
            if len(row) > 1:
                values = [Decimal(v.replace(",", "")) for v in row]
                converted = values[1:-1] if len(values) == 4 else values[:-1]
                assert sum(converted) == values[-1], row
        tables += 1
    assert tables == 1 + len(data["teams"])
    start = lines.index("# Team Total (USD) Share Idle share GPU-hours")
    ranking = lines[start + 1 : start + 1 + len(data["teams"])]
    ranked = [Decimal(MONEY.findall(line)[0].replace(",", "")) for line in ranking]
    shares = [Decimal(re.findall(r"(\d+\.\d)%", line)[0]) for line in ranking]
    total_line = lines[start + 1 + len(data["teams"])]
    assert total_line == f"Total {money(Decimal(data['company']['reporting_totals']['total']))} 100.0%"
    assert f"{sum(ranked):,.2f}" in total_line and sum(shares) == 100


def _csv_rows(demo_reports, team):
    return list(csv.DictReader(io.StringIO((demo_reports / f"{team}.csv").read_text(encoding="utf-8"))))


def test_csv_components_add_up_to_their_subtotals_and_total(demo_reports):
    data = _statement(demo_reports)
    for team in data["teams"]:
        rows = [r for r in _csv_rows(demo_reports, team["team"]) if r["section"] == "cost_by_category"]
        assert {r["kind"] for r in rows} == {"component", "subtotal", "total"}
        by_currency: dict[str, Decimal] = defaultdict(Decimal)
        for row in rows:
            if row["kind"] == "component":
                by_currency[row["currency"]] += Decimal(row["amount"])
        for row in rows:
            if row["item"] == "total" and row["currency"]:
                assert Decimal(row["amount"]) == by_currency[row["currency"]]
                if row["currency"] != data["reporting_currency"]:  # its own currency: the exact total rounded
                    assert money(Decimal(row["amount_exact"])) == f"{Decimal(row['amount']):,.2f}"
            if row["item"] == "idle":
                idle = [r for r in rows if r["item"].startswith("idle_") and r["currency"] == row["currency"]]
                assert sum(Decimal(r["amount_reporting"]) for r in idle) == Decimal(row["amount_reporting"])
        [total] = [r for r in rows if r["kind"] == "total"]
        components = [r for r in rows if r["kind"] == "component"]
        assert sum(Decimal(r["amount_reporting"]) for r in components) == Decimal(total["amount_reporting"])
        ranked = next(r for r in data["company"]["ranking"] if r["team"] == team["team"])
        assert within_a_cent(total["amount_reporting"], Decimal(ranked["total_reporting"]))
        for key in CATEGORIES:  # a category over all currencies: the sum of its components
            [over_all] = [r for r in rows if r["item"] == key and not r["currency"]]
            parts = [r for r in components if r["item"] == key]
            assert sum(Decimal(r["amount_reporting"]) for r in parts) == Decimal(over_all["amount_reporting"])
        for row in rows:  # every rounded amount is within a cent of the exact one beside it
            for shown, exact in (("amount", "amount_exact"), ("amount_reporting", "amount_reporting_exact")):
                if row[shown]:
                    assert within_a_cent(row[shown], Decimal(row[exact])), row


def test_the_xlsx_summary_foots_down_and_across(demo_reports):
    data = _statement(demo_reports)
    for team in data["teams"]:
        sheet = openpyxl.load_workbook(demo_reports / f"{team['team']}.xlsx")["summary"]
        table = [list(row) for row in sheet.iter_rows(min_row=SUMMARY_HEADER_ROW, values_only=True)]
        header, body, total = table[0], table[1:-1], table[-1]
        assert [row[0] for row in body] == [CATEGORY_LABELS[k] for k in CATEGORIES] and total[0] == "Total"
        for column in range(1, len(header)):
            assert sum(Decimal(str(row[column])) for row in body) == Decimal(str(total[column])), header[column]
        reporting = data["reporting_currency"]
        summed = [i for i, name in enumerate(header) if name == reporting or f" in {reporting}" in str(name)]
        for row in [*body, total]:
            assert sum(Decimal(str(row[i])) for i in summed) == Decimal(str(row[-1]))
        assert all(
            sheet.cell(row=SUMMARY_HEADER_ROW + 1, column=c).number_format == "#,##0.00"
            for c in range(2, len(header) + 1)
        )


def _render_all(data):
    from gpuledger.reports.html import render_html
    from gpuledger.reports.tables import render_csv, render_xlsx

    for team in data["teams"]:
        render_csv(data, team), render_xlsx(data, team)
    return render_html(data)


def test_a_change_on_the_month_before_is_the_printed_total_less_the_printed_previous(demo_reports):
    data = _statement(demo_reports)
    data["company"]["previous_total_reporting"] = "600000.004"
    for team in data["teams"]:
        team["previous"]["total_reporting"] = "1000.005"
        team["previous"]["change_share"] = "0.5"
    tables = parse_tables(_render_all(data))
    cells = {(team, name): text for team, table in tables for row in table.rows for text, name in row if name}
    [ranking] = [table for team, table in tables if table.css_class == "ranking"]
    assert ranking.header[-2:] == ["vs 2026-09", "Change"]
    for team in data["teams"]:
        name = team["team"]
        rank = next(r["rank"] for r in data["company"]["ranking"] if r["team"] == name)
        assert number(cells[(name, "mom:previous")]) == Decimal("1000.01")
        expected = number(cells[(name, "mom:current")]) - Decimal("1000.01")
        assert number(cells[(name, "mom:change_row")]) == expected == number(cells[(None, f"rank:{rank}:change")])
    page = _render_all(data)
    company = number(cells[(None, "company:cat:total")]) - Decimal("600000.00")
    assert f"{company:+,.2f}" in page


def test_without_a_reporting_currency_each_source_column_foots_on_its_own(demo_reports):
    data = _statement(demo_reports)
    data["reporting_currency"], data["rates"] = None, []
    data["company"]["reporting_totals"] = None
    for row in data["company"]["ranking"]:
        row["total_reporting"] = row["share"] = None
    for team in data["teams"]:
        team["reporting_totals"] = None
        for line in team["lines"]:
            line["reporting"] = None
    tables = parse_tables(_render_all(data))
    team_tables = [table for team, table in tables if team and table.css_class == "categories"]
    assert len(team_tables) == len(data["teams"])
    for table in team_tables:
        assert "Total" not in " ".join(table.header)
        body, total = table.rows[:-1], table.rows[-1]
        for column in range(1, len(table.header)):
            assert sum(number(row[column][0]) for row in body) == number(total[column][0])
