"""The billing month lifecycle: open -> closed -> issued, and restatements of issued months as adjustments.

A month is *open* while any provider with charges in it may still restate them (its finalization window,
``[months] close_after_days``); then *closed*: its exchange rates to the reporting currency are locked with it
(``meta.locked_rates``), so later rate files never change it. Issuing its chargeback stores the statement
(``chargeback.statements`` with its whole data, see ``gpuledger.chargeback.statement``, and ``statement_lines``;
versioned, with a content hash) and makes it *issued*.

A restatement that reaches an issued month is loaded like any delivery (the warehouse keeps the truth), but
the issued statement is never edited: the difference per team and currency is recorded in
``chargeback.adjustments`` for the next statement to carry, and analysts see both (``views.statement_vs_current``).
Once a statement carried a difference (``chargeback.statement_adjustments``) it counts as charged: later
statements carry only what changed since.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import duckdb

from gpuledger.chargeback.statement import build_statement, canonical_json, content_sha256, figures
from gpuledger.warehouse.database import transaction
from gpuledger.warehouse.failpoints import failpoint
from gpuledger.warehouse.sqlfiles import load_sql
from models.billing_month import BillingMonth
from models.config import MonthsConfig
from models.errors import GpuledgerError

OPEN, CLOSED, ISSUED = "open", "closed", "issued"
NOW_ENV = "GPULEDGER_NOW"
"""An ISO 8601 time to evaluate the month lifecycle at instead of the clock (tests, replays); never a default."""


@dataclass(frozen=True)
class MonthState:
    month: str
    """``YYYY-MM``."""
    state: str
    closes_on: date


@dataclass(frozen=True)
class Statement:
    month: str
    version: int
    content_sha256: str
    teams: int
    new: bool
    """False when the month's current figures equal its latest issued version (nothing was issued)."""


def lifecycle_now() -> datetime:
    """The clock, or ``$GPULEDGER_NOW``: months open, close and are refreshed relative to this time."""
    value = os.environ.get(NOW_ENV)
    if not value:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise GpuledgerError(f"{NOW_ENV}={value!r} is not an ISO 8601 time") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def closes_on(month: str, providers: list[str], config: MonthsConfig) -> date:
    """The first day month ``YYYY-MM`` is final for every provider in ``providers``."""
    longest = max((config.close_after_days[p] for p in providers), default=max(config.close_after_days.values()))
    return BillingMonth.parse(month).next().first_day + timedelta(days=longest)


def refreshable_months(config: MonthsConfig, now: datetime) -> list[str]:
    """Months the nightly run refreshes: the current month and each earlier one still inside a close window."""
    today = now.astimezone(UTC).date()
    months = [BillingMonth.of_day(today)]
    while True:
        previous = months[-1].previous()
        if closes_on(str(previous), list(config.close_after_days), config) <= today:
            break
        months.append(previous)
    return sorted(str(m) for m in months)


def update_months(con: duckdb.DuckDBPyConnection, config: MonthsConfig, now: datetime) -> list[MonthState]:
    """Record every billing month with charges; close those past their window (locking their rates); then
    recompute the adjustments of issued months. One transaction."""
    with transaction(con):
        providers: dict[str, list[str]] = {}
        for month, provider in con.execute(load_sql("chargeback/month_providers.sql")).fetchall():
            providers.setdefault(month, []).append(provider)
        today = now.astimezone(UTC).date()
        for month, present in sorted(providers.items()):
            closing = closes_on(month, present, config)
            start = BillingMonth.parse(month).first_day
            params = {"month": start, "closes_on": closing}
            row = con.execute("SELECT state FROM meta.months WHERE billing_month = $month", {"month": start}).fetchone()
            if row is None:
                con.execute("INSERT INTO meta.months VALUES ($month, 'open', $closes_on, NULL, NULL)", params)
            elif row[0] == OPEN:  # a provider seen for the first time in the month can move its close
                con.execute("UPDATE meta.months SET closes_on = $closes_on WHERE billing_month = $month", params)
            if (row is None or row[0] == OPEN) and today >= closing:
                _close(con, start, now)
        _record_adjustments(con, now)
        failpoint("months:before-commit")
    return month_states(con)


def month_states(con: duckdb.DuckDBPyConnection) -> list[MonthState]:
    rows = con.execute("SELECT billing_month, state, closes_on FROM meta.months ORDER BY 1").fetchall()
    return [MonthState(m.strftime("%Y-%m"), state, closing) for m, state, closing in rows]


def _close(con: duckdb.DuckDBPyConnection, month: date, now: datetime) -> None:
    """Close the month and lock the rates its reporting-currency figures use now."""
    con.execute(
        "UPDATE meta.months SET state = 'closed', closed_at = $now WHERE billing_month = $month",
        {"month": month, "now": now},
    )
    con.execute("DELETE FROM meta.locked_rates WHERE billing_month = $month", {"month": month})
    con.execute(
        "INSERT INTO meta.locked_rates SELECT DISTINCT billing_month, currency, reporting_currency, exchange_rate,"
        " rate_date, rate_source FROM showback.team_month_reporting"
        " WHERE billing_month = $month AND exchange_rate IS NOT NULL AND currency <> reporting_currency",
        {"month": month},
    )


_LISTED_ADJUSTMENT = (
    "kind", "restated_month", "statement_version", "team", "currency", "issued_total", "restated_total",
    "adjustment", "exchange_rate", "adjustment_reporting",
)  # fmt: skip
"""The fields of a statement's listed adjustment, in ``chargeback.statement_adjustments`` column order."""


def issue_month(con: duckdb.DuckDBPyConnection, month: str, now: datetime) -> Statement:
    """Issue the chargeback of closed month ``YYYY-MM``: a new statement version, unless the figures equal the
    latest version's (then that version is returned and nothing changes). Issued versions are never edited."""
    start = BillingMonth.parse(month).first_day
    with transaction(con):
        row = con.execute(
            "SELECT state, closes_on FROM meta.months WHERE billing_month = $month", {"month": start}
        ).fetchone()
        if row is None:
            raise GpuledgerError(f"billing month {month} has no charges to issue")
        if row[0] == OPEN:
            raise GpuledgerError(f"billing month {month} is open until {row[1]}: it cannot be issued before it closes")
        latest = con.execute(
            "SELECT version, content_sha256, teams, issued_at, data FROM chargeback.statements"
            " WHERE billing_month = $month ORDER BY version DESC LIMIT 1",
            {"month": start},
        ).fetchone()
        previous = None
        if latest is not None:
            issued_at = latest[3].astimezone(UTC).isoformat()
            previous = {"version": latest[0], "content_sha256": latest[1], "issued_at": issued_at}
        version = 1 if latest is None else latest[0] + 1
        data = build_statement(con, month, version=version, issued_at=now, previous_version=previous)
        # A version whose data was not stored (issued by an older gpuledger) cannot be rendered: issue anew.
        if latest is not None and latest[4] is not None and figures(json.loads(latest[4])) == figures(data):
            return Statement(month, latest[0], latest[1], latest[2], new=False)
        if latest is not None:
            _refuse_billing_twice(con, month, start, latest[0])
        digest = content_sha256(data)
        # What this version lists, as issued: the carried differences are charged, never carried again.
        if data["adjustments"]:
            con.executemany(
                "INSERT INTO chargeback.statement_adjustments VALUES ($1, $2, $3, CAST($4 || '-01' AS DATE),"
                " $5, $6, $7, $8, $9, $10, $11, $12)",
                [[start, version, *(a[key] for key in _LISTED_ADJUSTMENT)] for a in data["adjustments"]],
            )
        con.execute(load_sql("chargeback/statement_lines.sql"), {"month": start, "version": version})
        teams = len(data["teams"])
        con.execute(
            "INSERT INTO chargeback.statements VALUES ($month, $version, $now, $sha, $teams, $data)",
            {
                "month": start,
                "version": version,
                "now": now,
                "sha": digest,
                "teams": teams,
                "data": canonical_json(data).decode("utf-8"),
            },
        )
        con.execute(
            "UPDATE meta.months SET state = 'issued', issued_at = coalesce(issued_at, $now)"
            " WHERE billing_month = $month",
            {"month": start, "now": now},
        )
        _record_adjustments(con, now)
    return Statement(month, version, digest, teams, new=True)


def _refuse_billing_twice(con: duckdb.DuckDBPyConnection, month: str, start: date, version: int) -> None:
    """A later statement already carried a restatement of ``month``'s version: a new version would bill it again."""
    carriers = con.execute(
        "SELECT DISTINCT strftime(c.billing_month, '%Y-%m') || ' v' || c.version"
        " FROM chargeback.statement_adjustments AS c"
        " WHERE c.kind = 'carried' AND c.restated_month = $month AND c.statement_version = $version"
        " AND c.version = (SELECT max(version) FROM chargeback.statements AS s WHERE s.billing_month = c.billing_month)"
        " ORDER BY 1",
        {"month": start, "version": version},
    ).fetchall()
    if carriers:
        raise GpuledgerError(
            f"billing month {month} v{version} was restated and the difference already carried by "
            f"{', '.join(c[0] for c in carriers)}: a new version would bill it twice; later differences are carried "
            "by the next statement"
        )


def _record_adjustments(con: duckdb.DuckDBPyConnection, now: datetime) -> None:
    """Make ``chargeback.adjustments`` the current differences to the issued statements, keeping when each
    unchanged difference was first seen."""
    con.execute("CREATE OR REPLACE TEMP TABLE current_adjustments AS " + load_sql("chargeback/adjustments.sql"))
    con.execute(load_sql("chargeback/record_adjustments.sql"), {"now": now})
    con.execute("DELETE FROM chargeback.adjustments")
    con.execute("INSERT INTO chargeback.adjustments BY NAME SELECT * FROM standing_adjustments")
    con.execute("DROP TABLE current_adjustments")
    con.execute("DROP TABLE standing_adjustments")
