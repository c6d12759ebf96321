"""The statement's money as the reports print it: rounded to cents once, so that every table foots as printed
(``footing``), and the same figure printed the same way everywhere (HTML, PDF, CSV, XLSX).

Top down: the company total is its exact total rounded; the teams' totals (the ranking), the categories and the
source currencies share its cents by largest remainder; each team's category table is rounded to the team's
total as ranked, as a grid that adds up across its currencies and down its categories. A source-currency column
that is not in the reporting currency foots on its own (its total is its exact total rounded). A month-over-month
change is the printed total less the printed total of the month before.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpuledger.chargeback.statement import CATEGORIES
from gpuledger.reports.footing import allocate, allocate_total, foot_grid, rounded

IDLE = tuple(key for key in CATEGORIES if key.startswith("idle_"))
_TENTH_PERCENT = Decimal("0.001")


@dataclass(frozen=True)
class Column:
    """One column of a team's category table: every category, the idle subtotal and the total, in cents."""

    currency: str | None
    amounts: dict[str, Decimal]


@dataclass(frozen=True)
class TeamFigures:
    source: dict[str | None, Column]
    """Per source currency: the line in its own currency."""
    reporting: dict[str | None, Column]
    """Per source currency: the line in the reporting currency (empty without one)."""
    total: Column | None
    """The team in the reporting currency, all currencies (None without one)."""
    previous_total: Decimal | None
    change: Decimal | None


@dataclass(frozen=True)
class Figures:
    total: Decimal | None
    """The company total in the reporting currency (None without one)."""
    categories: dict[str, Decimal]
    """The company per category and the idle subtotal, then ``total`` (empty without a reporting currency)."""
    currency_totals: dict[str | None, Decimal]
    """Per source currency: its total converted (empty without a reporting currency)."""
    ranking: dict[str, Decimal]
    """Per team: its total as ranked."""
    shares: dict[str, Decimal]
    """Per team: its share of the company total, to a tenth of a percent, adding up to 100.0%."""
    previous_total: Decimal | None
    change: Decimal | None
    teams: dict[str, TeamFigures]


def statement_figures(data: dict[str, Any]) -> Figures:
    """The printed money of stored statement ``data``."""
    company = data["company"]
    exact = company["reporting_totals"]
    if exact is None:
        teams = {t["team"]: _team(t, None, None) for t in data["teams"]}
        return Figures(None, {}, {}, {}, {}, None, None, teams)
    total = rounded(Decimal(exact["total"]))
    categories = dict(zip(CATEGORIES, allocate([Decimal(exact[k]) for k in CATEGORIES], total), strict=True))
    categories |= {"idle": sum((categories[k] for k in IDLE), Decimal(0)), "total": total}
    currencies = company["currencies"]
    currency_totals = allocate([Decimal(c["total_reporting"]) for c in currencies], total)
    team_totals = {r["team"]: Decimal(r["total_reporting"]) for r in company["ranking"]}
    ranking = dict(zip(team_totals, allocate(list(team_totals.values()), total), strict=True))
    exact_total = Decimal(exact["total"])
    shares = (
        allocate([value / exact_total for value in team_totals.values()], Decimal(1), unit=_TENTH_PERCENT)
        if exact_total
        else [Decimal(0) for _ in team_totals]
    )
    previous = _maybe_rounded(company["previous_total_reporting"])
    return Figures(
        total=total,
        categories=categories,
        currency_totals={c["currency"]: v for c, v in zip(currencies, currency_totals, strict=True)},
        ranking=ranking,
        shares=dict(zip(ranking, shares, strict=True)),
        previous_total=previous,
        change=None if previous is None else total - previous,
        teams={t["team"]: _team(t, data["reporting_currency"], ranking[t["team"]]) for t in data["teams"]},
    )


def _team(team: dict[str, Any], reporting: str | None, total: Decimal | None) -> TeamFigures:
    source: dict[str | None, Column] = {}
    for line in team["lines"]:
        parts, shown = allocate_total(
            [Decimal(line["amounts"][k]) for k in CATEGORIES], Decimal(line["amounts"]["total"])
        )
        source[line["currency"]] = _column(line["currency"], parts, shown)
    if total is None or team["reporting_totals"] is None:
        return TeamFigures(source, {}, None, None, None)
    lines = team["lines"]
    grid = foot_grid([[Decimal(line["reporting"][k]) for line in lines] for k in CATEGORIES], total)
    converted = {
        line["currency"]: _column(line["currency"], [row[j] for row in grid.cells], grid.column_totals[j])
        for j, line in enumerate(lines)
    }
    if reporting in converted:  # the reporting currency's own line is printed once, converted at 1
        source[reporting] = converted[reporting]
    previous = _maybe_rounded(team["previous"]["total_reporting"])
    return TeamFigures(
        source=source,
        reporting=converted,
        total=_column(reporting, grid.row_totals, total),
        previous_total=previous,
        change=None if previous is None else total - previous,
    )


def _column(currency: str | None, parts: list[Decimal], total: Decimal) -> Column:
    amounts = dict(zip(CATEGORIES, parts, strict=True))
    return Column(currency, amounts | {"idle": sum((amounts[k] for k in IDLE), Decimal(0)), "total": total})


def _maybe_rounded(value: str | None) -> Decimal | None:
    return None if value is None else rounded(Decimal(value))
