"""What the reports must show, computed independently from the warehouse's showback tables (not from the stored
statement), and parsers for the rendered HTML."""

from __future__ import annotations

from collections import defaultdict
from contextlib import closing
from decimal import ROUND_HALF_UP, Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb

from gpuledger.warehouse import WAREHOUSE_FILE, connect

MONTH = "2026-10"
OCTOBER = "DATE '2026-10-01'"
CATEGORY_COLUMNS = {
    "run": "run_cost",
    "idle_allocated": "idle_allocated_cost",
    "idle_unallocated": "idle_unallocated_cost",
    "checkpoint_storage": "checkpoint_storage_cost",
    "egress": "egress_cost",
    "other": "other_cost",
    "total": "total_cost",
}
TEN = Decimal("1e-10")


def money(value: Decimal | None) -> str:
    return "\u2013" if value is None else f"{value.quantize(Decimal('0.01'), ROUND_HALF_UP):,.2f}"


def hours(value: float | Decimal) -> str:
    return f"{Decimal(str(value)).quantize(Decimal('0.1'), ROUND_HALF_UP):,.1f}"


def convert(amount: Decimal, rate: Decimal) -> Decimal:
    """As showback.team_month_reporting converts: rounded half away from zero to 10 decimals."""
    return (amount * rate).quantize(TEN, ROUND_HALF_UP)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


class Showback:
    """October's showback of a home, read-only."""

    def __init__(self, home: Path) -> None:
        with closing(connect(home / WAREHOUSE_FILE, read_only=True)) as con:
            self.team_month = rows(con, f"SELECT * FROM showback.team_month WHERE billing_month = {OCTOBER}")
            self.reporting = rows(con, f"SELECT * FROM showback.team_month_reporting WHERE billing_month = {OCTOBER}")
            self.jobs = rows(con, f"SELECT * FROM showback.job_costs WHERE billing_month = {OCTOBER}")
            self.idle = rows(con, f"SELECT * FROM showback.idle_by_hour_of_week WHERE billing_month = {OCTOBER}")
            self.focus = dict(
                con.execute(
                    "SELECT BillingCurrency, sum(EffectiveCost) FROM focus.costs"
                    " WHERE date_trunc('month', BillingPeriodStart + INTERVAL 14 HOUR) = DATE '2026-10-01'"
                    " GROUP BY ALL"
                ).fetchall()
            )
            self.locked = dict(
                con.execute(f"SELECT currency, rate FROM meta.locked_rates WHERE billing_month = {OCTOBER}").fetchall()
            )
            self.adjustments = rows(con, "SELECT * FROM chargeback.adjustments")
        self.rate = {row["currency"]: row["exchange_rate"] for row in self.reporting}
        self.teams = sorted({row["team"] for row in self.team_month})

    def line(self, team: str, currency: str) -> dict[str, Any]:
        return next(r for r in self.team_month if r["team"] == team and r["currency"] == currency)

    def reported(self, team: str, currency: str) -> dict[str, Any]:
        return next(r for r in self.reporting if r["team"] == team and r["currency"] == currency)

    def currencies(self, team: str) -> list[str]:
        return sorted(r["currency"] for r in self.team_month if r["team"] == team)

    def team_total_reporting(self, team: str) -> Decimal:
        return sum((r["total_cost_reporting"] for r in self.reporting if r["team"] == team), Decimal(0))

    def company_total_from_focus(self) -> Decimal:
        """Σ FOCUS EffectiveCost of the month, converted per currency at the month's locked rate (USD at 1)."""
        return sum((convert(total, self.locked.get(c, Decimal(1))) for c, total in self.focus.items()), Decimal(0))

    def top_jobs(self, team: str, top: int = 10) -> list[dict[str, Any]]:
        jobs = [j for j in self.jobs if j["team"] == team]
        jobs.sort(key=lambda j: (-convert(j["total_cost"], self.rate[j["currency"]]), j["cluster"], j["job_id"]))
        return jobs[:top]

    def idle_hours(self, team: str) -> dict[tuple[int, int], Decimal]:
        cells: dict[tuple[int, int], Decimal] = defaultdict(Decimal)
        for row in self.idle:
            if row["team"] == team:
                cells[(row["iso_weekday"], row["hour_of_day"])] += Decimal(str(row["idle_gpu_hours"]))
        return cells

    def expected_team_cells(self, team: str) -> dict[str, str]:
        """The data-cell values every team section of the HTML must show."""
        cells: dict[str, str] = {"catr:total:all": money(self.team_total_reporting(team))}
        cells["total"] = f"{money(self.team_total_reporting(team))} USD"
        for currency in self.currencies(team):
            line, reported = self.line(team, currency), self.reported(team, currency)
            rate = reported["exchange_rate"]
            for key, column in CATEGORY_COLUMNS.items():
                cells[f"cat:{key}:{currency}"] = money(line[column])
                if currency != "USD":
                    cells[f"catr:{key}:{currency}"] = money(convert(line[column], rate))
            if currency != "USD":
                for key in ("run", "checkpoint_storage", "egress", "other", "total"):
                    assert cells[f"catr:{key}:{currency}"] == money(reported[f"{CATEGORY_COLUMNS[key]}_reporting"])
            cells[f"failed:{currency}"] = money(line["failed_run_cost"])
            cells[f"failedr:{currency}"] = money(convert(line["failed_run_cost"], rate))
            cells[f"perrun:{currency}"] = money(line["cost_per_completed_run"])
            cells[f"runs:{currency}"] = str(line["completed_runs"])
            cells[f"gpu:{currency}"] = hours(line["gpu_hours"])
        for key, column in CATEGORY_COLUMNS.items():
            total = sum((convert(self.line(team, c)[column], self.rate[c]) for c in self.currencies(team)), Decimal(0))
            cells[f"catr:{key}:all"] = money(total)
        for i, job in enumerate(self.top_jobs(team), start=1):
            cells[f"job:{i}:id"] = f"{job['cluster']}/{job['job_id']}"
            cells[f"job:{i}:cost"] = money(job["total_cost"])
            cells[f"job:{i}:rep"] = money(convert(job["total_cost"], self.rate[job["currency"]]))
            cells[f"job:{i}:finish"] = money(job["run_group_cost_to_finish"])
            cells[f"job:{i}:gpu_hours"] = hours(job["gpu_hours"])
        return cells


class CellParser(HTMLParser):
    """Collects the text of every element with ``data-cell``, keyed by (its team section or None, cell)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: dict[tuple[str | None, str], str] = {}
        self.team_names: list[str] = []
        self.text: list[str] = []
        self._team: str | None = None
        self._open: list[tuple[str, str | None]] = []  # (tag, cell) of open elements
        self.tags: set[str] = set()
        self.attribute_values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        values = dict(attrs)
        self.attribute_values.extend(v for v in values.values() if v)
        if tag == "section" and "data-team" in values:
            self._team = values["data-team"]
            self.team_names.append(values["data-team"] or "")
        self._open.append((tag, values.get("data-cell")))
        if values.get("data-cell"):
            self.cells[(self._team, values["data-cell"] or "")] = ""

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            open_tag, _ = self._open.pop()
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        for _, cell in self._open:
            if cell:
                key = (self._team, cell)
                self.cells[key] = (
                    (self.cells[key] + data).strip() if cell.startswith("heat:") else self.cells[key] + data
                )


def parse_html(text: str) -> CellParser:
    parser = CellParser()
    parser.feed(text)
    parser.close()
    parser.cells = {key: " ".join(value.split()) for key, value in parser.cells.items()}
    return parser
