"""The statement as one self-contained HTML page: the company summary, then one section per team (a page each
when printed). Rendered only from stored statement data, with autoescaping, inline SVG charts, no script and
no external reference: the same data gives the same bytes."""

from __future__ import annotations

import shlex
from decimal import Decimal
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from gpuledger.chargeback.statement import CATEGORIES, CATEGORY_LABELS, content_sha256
from gpuledger.reports import charts, formatting
from gpuledger.reports.figures import Figures, statement_figures

_ENV = Environment(
    loader=PackageLoader("gpuledger.reports", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters.update(
    money=formatting.money,
    hours=formatting.hours,
    percent=formatting.percent,
    signed_percent=lambda v: formatting.percent(v, signed=True),
    signed_money=lambda v: formatting.money(v, signed=True),
    rate=formatting.rate,
    currency=formatting.currency,
    timestamp=formatting.timestamp,
    shell=shlex.quote,
)
RUNS_LISTED = 3
"""Run groups named per opportunity in the report (the rest counted; statement.json lists them all)."""
ROUNDING_NOTE = (
    "Amounts are rounded to cents once, so that every table adds up as printed: a table's total is its exact"
    " total rounded half away from zero, and its lines share that total's cents by largest remainder (each line"
    " rounded down, the missing cents going to the largest remainders), so a line may differ by a cent from its"
    " own rounding. Tables that add up across currencies and down categories are rounded both ways at once. Each"
    " team's figures are rounded to its total as ranked. Exact amounts: statement.json and the CSV/XLSX."
)


def render_html(data: dict[str, Any], *, team: str | None = None) -> str:
    """The report of stored statement ``data``: every team, or the company summary and ``team`` only."""
    slugs = formatting.team_slugs([t["team"] for t in data["teams"]])
    teams = [t for t in data["teams"] if team is None or t["team"] == team]
    reporting = data["reporting_currency"]
    shown = statement_figures(data)
    sections = [_team_view(t, data, slugs[t["team"]], reporting, shown) for t in teams]
    company = data["company"]
    ranking_chart = None
    if company["reporting_totals"] is not None:
        items = [_bar(r["team"], shown.ranking[r["team"]]) for r in company["ranking"]]
        ranking_chart = charts.bars(items, title=f"Cost per team ({reporting})", width=300, label_w=90)
    return _ENV.get_template("statement.html.j2").render(
        data=data,
        company=company,
        teams=sections,
        slugs=slugs,
        linked={t["team"] for t in teams},
        reporting=reporting,
        sha256=content_sha256(data),
        categories=[(key, CATEGORY_LABELS[key]) for key in CATEGORIES],
        ranking_chart=ranking_chart,
        shown=shown,
        rounding_note=ROUNDING_NOTE,
        corrections=[a for a in data["adjustments"] if a["kind"] == "correction"],
        carried=[a for a in data["adjustments"] if a["kind"] == "carried"],
        source_name=lambda path: Path(path).name if path else formatting.DASH,
        advice=_advice_view(data.get("advice")),
    )


def _team_view(
    team: dict[str, Any], data: dict[str, Any], slug: str, reporting: str | None, shown: Figures
) -> dict[str, Any]:
    figures = shown.teams[team["team"]]
    column, unit = figures.total, reporting
    if column is None:  # no reporting currency: the chart shows the first source currency
        column = figures.source[team["lines"][0]["currency"]]
        unit = formatting.currency(column.currency)
    category_items = [_bar(CATEGORY_LABELS[k], column.amounts[k]) for k in CATEGORIES]
    provider_items = [
        _bar(f"{p['provider']} · {p['service']}", p["cost_reporting"] if p["cost_reporting"] is not None else p["cost"])
        for p in team["providers"][:8]
    ]
    return {
        **team,
        "slug": slug,
        "shown": figures,
        "category_chart": charts.bars(category_items, title=f"{team['team']}: cost by category ({unit})"),
        "provider_chart": charts.bars(provider_items, title=f"{team['team']}: top providers and services"),
        "heatmap": charts.heatmap(
            team["idle_heatmap"]["idle_gpu_hours"], title=f"{team['team']}: idle GPU-hours by hour of week (UTC)"
        ),
        "adjustments": [a for a in data["adjustments"] if a["team"] == team["team"]],
    }


def _advice_view(advice: dict[str, Any] | None) -> dict[str, Any] | None:
    """The stored advice with each opportunity's first run groups to list; None for a version issued before
    statements stored advice."""
    if advice is None:
        return None

    def listed(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                **item,
                "runs": (item["run_groups"] or [])[:RUNS_LISTED],
                "more_runs": len(item["run_groups"] or []) - RUNS_LISTED,
            }
            for item in items
        ]

    return {
        **advice,
        "company": listed(advice["company"]),
        "teams": {team: listed(items) for team, items in advice["teams"].items()},
    }


def _bar(label: str, amount: str | Decimal) -> tuple[str, Decimal, str]:
    return label, Decimal(amount), formatting.money(amount)
