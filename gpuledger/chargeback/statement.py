"""The data of a month's chargeback statement: plain JSON-able data built from the warehouse, stored with the
issued version (``chargeback.statements.data``) and the only input the reports render from.

Amounts are DECIMAL strings as the warehouse holds them (10 decimals; rates 18), never floats, in the source
currency and, when a reporting currency is configured, in it at the month's locked rate with the rate, its date
and its source beside them. Ratios are derived from those amounts (6 decimals). The figures (everything but the
version, issue time, previous version, the listed adjustments and the advice) decide whether issuing creates a new
version. The advice is the advice stage's ESTIMATES as they stood at issue time, never billed money.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import duckdb

from gpuledger.warehouse.sqlfiles import load_sql
from models.billing_month import BillingMonth

STATEMENT_FORMAT = "gpuledger-statement/1"
TOP = 10
"""Jobs and run groups listed per team."""

CATEGORIES = (
    "run",
    "idle_allocated",
    "idle_underutilized",
    "idle_unallocated",
    "idle_unused_commitment",
    "checkpoint_storage",
    "egress",
    "other",
)
CATEGORY_LABELS = {
    "run": "Run (GPU time x activity)",
    "idle_allocated": "Idle, held inactive",
    "idle_underutilized": "Idle, underutilized",
    "idle_unallocated": "Idle, no job",
    "idle_unused_commitment": "Idle, unused commitment",
    "checkpoint_storage": "Checkpoint storage",
    "egress": "Egress",
    "other": "Other",
}
# Amounts of a team line: the categories, then what the statement derives from them.
AMOUNTS = (*CATEGORIES, "idle", "total", "billed", "failed_run", "cost_per_completed_run")
SUMMABLE = tuple(key for key in AMOUNTS if key != "cost_per_completed_run")
"""Amounts that add up across currencies once converted (a sum of per-run averages means nothing)."""
NOT_FIGURES = ("version", "issued_at", "previous_version", "adjustments", "advice")
"""Keys of the stored data that describe the issue, not the month's charges: left out when deciding if figures
changed (estimates that changed alone never make a new version)."""
ADVICE_NOTE = (
    "Not billed and not included in any total: what this month could have cost with other choices, each estimated"
    " by the method and from the evidence beside it. Opportunities overlap (the same run may be right-sized and"
    " moved to spot), so they are never added up."
)

_RATIO = Decimal("0.000001")
_OPPORTUNITY = ("rank", "opportunity", "currency", "estimated_saving", "method", "evidence", "run_groups")
"""What the statement keeps of an estimated opportunity."""


def build_statement(
    con: duckdb.DuckDBPyConnection,
    month: str,
    *,
    version: int,
    issued_at: datetime,
    previous_version: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The statement of billing month ``YYYY-MM`` from today's warehouse, as issued as ``version`` at ``issued_at``."""
    start = BillingMonth.parse(month).first_day
    params = {"month": start}
    top = {"month": start, "top": TOP}
    reporting_row = con.execute("SELECT min(currency) FROM alloc.reporting").fetchone()
    reporting = reporting_row[0] if reporting_row else None
    lines = _rows(con, "reports/team_lines.sql", params)
    providers = _rows(con, "reports/provider_services.sql", params)
    jobs = _rows(con, "reports/top_jobs.sql", top)
    groups = _rows(con, "reports/run_groups.sql", top)
    heat = _rows(con, "reports/idle_heatmap.sql", params)
    previous = _rows(con, "reports/previous_month.sql", params)
    adjustments = _rows(con, "reports/adjustments.sql", params)
    focus = _rows(con, "reports/focus_totals.sql", params)
    rates = _rows(con, "reports/rates.sql", params)
    advice = statement_advice(con, start)

    previous_month = str(BillingMonth.parse(month).previous())
    # which figures of the month before the change compares with: its latest statement version, or today's (None)
    previous_statement = con.execute(
        "SELECT max(version) FROM chargeback.statements WHERE billing_month = CAST($month - INTERVAL 1 MONTH AS DATE)",
        params,
    ).fetchone()
    teams = [
        _team(
            name,
            [row for row in lines if row["team"] == name],
            [row for row in providers if row["team"] == name],
            [row for row in jobs if row["team"] == name],
            [row for row in groups if row["team"] == name],
            [row for row in heat if row["team"] == name],
            [row for row in previous if row["team"] == name],
            reporting,
        )
        for name in sorted({row["team"] for row in lines})
    ]
    data = {
        "format": STATEMENT_FORMAT,
        "month": month,
        "version": version,
        "issued_at": issued_at.astimezone(UTC).isoformat(),
        "previous_version": previous_version,
        "reporting_currency": reporting,
        "previous_month": previous_month,
        "previous_month_statement": previous_statement[0] if previous_statement else None,
        "rates": [_plain(row) for row in rates],
        "company": _company(teams, lines, focus, rates, previous, reporting),
        "teams": teams,
        "adjustments": [_plain(row) for row in adjustments],
        "advice": advice,
    }
    return normalized(data)


def advice_rows(con: duckdb.DuckDBPyConnection, start: date) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The rate card summary and every estimated opportunity of the month starting ``start``, ranked; None when
    the database holds no advice tables (the advice stage never ran on it)."""
    ready = con.execute(load_sql("reports/advice_ready.sql")).fetchone()
    if not (ready and ready[0]):
        return None
    [card] = _rows(con, "reports/advice_rate_card.sql", {})
    return card, _rows(con, "reports/advice.sql", {"month": start})


def statement_advice(con: duckdb.DuckDBPyConnection, start: date) -> dict[str, Any]:
    """The statement's advice: per team (and company-wide) the opportunities the report lists, the count of
    those it does not, and the rate card they were priced from; empty when the advice stage never ran."""
    found = advice_rows(con, start)
    card, rows = found if found else ({"example": None, "as_of": [], "sources": [], "prices": 0}, [])
    company: list[dict[str, Any]] = []
    teams: dict[str, list[dict[str, Any]]] = {}
    for row in (row for row in rows if row["listed"]):
        item = _plain({key: row[key] for key in _OPPORTUNITY})
        (company if row["team"] is None else teams.setdefault(row["team"], [])).append(item)
    unlisted = Counter(row["team"] for row in rows if not row["listed"])
    return {
        "estimated": found is not None,
        "note": ADVICE_NOTE,
        "rate_card": _plain(card) | {"as_of": [_value(d) for d in card["as_of"]]},
        "company": company,
        "teams": teams,
        "unlisted": {"company": unlisted.pop(None, 0), "teams": dict(unlisted)},
    }


def canonical_json(data: dict[str, Any]) -> bytes:
    """The bytes hashed and stored: sorted keys, no insignificant whitespace, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def content_sha256(data: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(data)).hexdigest()


def normalized(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as it reads back from its JSON (lists for tuples): what comparisons and renders see."""
    return json.loads(canonical_json(data))


def figures(data: dict[str, Any]) -> dict[str, Any]:
    """The month's figures of stored statement data: what a new version must change."""
    return {key: value for key, value in data.items() if key not in NOT_FIGURES}


def ratio(numerator: Decimal | None, denominator: Decimal | None) -> str | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return str((numerator / denominator).quantize(_RATIO, ROUND_HALF_UP))


def _rows(con: duckdb.DuckDBPyConnection, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    result = con.execute(load_sql(path), params)
    columns = [d[0] for d in result.description]
    return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {key: _value(value) for key, value in row.items()}


def _value(value: object) -> object:
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):  # none expected: the report queries return DECIMALs
        return repr(value)
    return value


def _sum(values: Iterable[Decimal | None]) -> Decimal | None:
    present = [v for v in values if v is not None]
    return sum(present, Decimal(0)) if present else None


def _text(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def _team(
    name: str,
    lines: list[dict[str, Any]],
    providers: list[dict[str, Any]],
    jobs: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    heat: list[dict[str, Any]],
    previous: list[dict[str, Any]],
    reporting: str | None,
) -> dict[str, Any]:
    converted = reporting is not None and all(row["total_cost_reporting"] is not None for row in lines)
    team_lines = []
    for row in lines:
        amounts = {key: row[_column(key)] for key in AMOUNTS}
        in_reporting = {key: row[_column(key) + "_reporting"] for key in AMOUNTS} if converted else None
        team_lines.append(
            {
                "currency": row["currency"],
                "amounts": {key: _text(value) for key, value in amounts.items()},
                "reporting": None if in_reporting is None else {k: _text(v) for k, v in in_reporting.items()},
                "exchange_rate": _text(row["exchange_rate"]),
                "rate_date": _value(row["rate_date"]),
                "rate_source": row["rate_source"],
                "idle_share": ratio(row["idle_cost"], row["total_cost"]),
                "gpu_hours": _text(row["gpu_hours"]),
                "active_gpu_hours": _text(row["active_gpu_hours"]),
                "mean_gpu_utilization": _text(row["mean_gpu_utilization"]),
                "failed_jobs": row["failed_jobs"],
                "completed_runs": row["completed_runs"],
                "node_shared_share": ratio(row["node_shared_gpu_cost"], row["jobs_gpu_cost"]),
            }
        )
    totals = None
    if converted:
        totals = {key: _sum(row[_column(key) + "_reporting"] for row in lines) for key in SUMMABLE}
    total = totals["total"] if totals else None
    previous_total = _sum(row["total_cost_reporting"] for row in previous) if converted else None
    gpu_hours = _sum(row["gpu_hours"] for row in lines)
    active = _sum(row["active_gpu_hours"] for row in lines)
    utilization = next((row["mean_gpu_utilization"] for row in lines if row["mean_gpu_utilization"] is not None), None)
    return {
        "team": name,
        "lines": team_lines,
        "reporting_totals": None if totals is None else {k: _text(v) for k, v in totals.items()},
        "idle_share": ratio(totals["idle"], total) if totals else None,
        "gpu_hours": _text(gpu_hours),
        "active_gpu_hours": _text(active),
        "active_share": ratio(active, gpu_hours),
        "mean_gpu_utilization": _text(utilization),
        "failed_jobs": sum(row["failed_jobs"] for row in lines),
        "completed_runs": sum(row["completed_runs"] for row in lines),
        "previous": {
            "totals": [{"currency": r["currency"], "total": _text(r["total_cost"])} for r in previous],
            "total_reporting": _text(previous_total),
            **_change(total, previous_total),
        },
        "providers": [_plain({k: v for k, v in row.items() if k != "team"}) for row in providers],
        "top_jobs": [_plain({k: v for k, v in row.items() if k != "team"}) for row in jobs],
        "run_groups": [_plain({k: v for k, v in row.items() if k != "team"}) for row in groups],
        "idle_heatmap": _heatmap(heat),
    }


def _change(total: Decimal | None, previous: Decimal | None) -> dict[str, str | None]:
    """The month-over-month change in the reporting currency, absolute and relative to the month before."""
    if total is None or previous is None:
        return {"change_reporting": None, "change_share": None}
    return {"change_reporting": _text(total - previous), "change_share": ratio(total - previous, previous)}


def _column(key: str) -> str:
    return {"failed_run": "failed_run_cost", "cost_per_completed_run": "cost_per_completed_run"}.get(key, f"{key}_cost")


def _heatmap(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Idle GPU-hours (and idle cost in the reporting currency) as 7 weekdays (Monday first) x 24 UTC hours."""
    hours = [["0" for _ in range(24)] for _ in range(7)]
    costs: list[list[str | None]] = [[None for _ in range(24)] for _ in range(7)]
    for row in rows:
        day, hour = row["iso_weekday"] - 1, row["hour_of_day"]
        hours[day][hour] = format(row["idle_gpu_hours"], "f")
        costs[day][hour] = _text(row["idle_cost_reporting"])
    return {"idle_gpu_hours": hours, "idle_cost_reporting": costs}


def _company(
    teams: list[dict[str, Any]],
    quality: list[dict[str, Any]],
    focus: list[dict[str, Any]],
    rates: list[dict[str, Any]],
    previous: list[dict[str, Any]],
    reporting: str | None,
) -> dict[str, Any]:
    rate_of = {row["currency"]: row["exchange_rate"] for row in rates}
    currencies = sorted({line["currency"] or "" for team in teams for line in team["lines"]})
    per_currency = []
    for currency in currencies:
        lines = [line for team in teams for line in team["lines"] if (line["currency"] or "") == currency]
        total = _sum(Decimal(line["amounts"]["total"]) for line in lines)
        shared = [row for row in quality if (row["currency"] or "") == currency]
        reported = [line["reporting"] for line in lines]
        in_reporting = None if any(r is None for r in reported) else _sum(Decimal(r["total"]) for r in reported)  # type: ignore[index]
        source = next((row for row in focus if (row["currency"] or "") == currency), None)
        per_currency.append(
            {
                "currency": currency or None,
                "total": _text(total),
                "exchange_rate": _text(rate_of.get(currency or None)),
                "total_reporting": _text(in_reporting),
                "focus_effective_cost": _text(source["effective_cost"]) if source else None,
                "focus_billed_cost": _text(source["billed_cost"]) if source else None,
                "focus_rows": source["focus_rows"] if source else 0,
                "node_shared_share": ratio(
                    _sum(row["node_shared_gpu_cost"] for row in shared), _sum(row["jobs_gpu_cost"] for row in shared)
                ),
            }
        )
    converted = reporting is not None and all(team["reporting_totals"] is not None for team in teams)
    totals = None
    if converted:
        totals = {key: _sum(Decimal(team["reporting_totals"][key]) for team in teams) for key in SUMMABLE}
    total = totals["total"] if totals else None
    previous_total = _sum(row["total_cost_reporting"] for row in previous) if converted else None
    ranked = sorted(
        teams,
        key=lambda t: (-Decimal(t["reporting_totals"]["total"]), t["team"]) if converted else (0, t["team"]),
    )
    ranking = []
    for rank, team in enumerate(ranked, start=1):
        team_total = Decimal(team["reporting_totals"]["total"]) if converted else None
        ranking.append(
            {
                "rank": rank,
                "team": team["team"],
                "total_reporting": _text(team_total),
                "share": ratio(team_total, total),
                "idle_share": team["idle_share"],
                "gpu_hours": team["gpu_hours"],
                "change_reporting": team["previous"]["change_reporting"],
                "change_share": team["previous"]["change_share"],
            }
        )
    gpu_hours = _sum(Decimal(t["gpu_hours"]) for t in teams if t["gpu_hours"] is not None)
    return {
        "currencies": per_currency,
        "reporting_totals": None if totals is None else {k: _text(v) for k, v in totals.items()},
        "idle_share": ratio(totals["idle"], total) if totals else None,
        "gpu_hours": _text(gpu_hours),
        "previous_total_reporting": _text(previous_total),
        **_change(total, previous_total),
        "ranking": ranking,
    }
