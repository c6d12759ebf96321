"""The three gates, one place each: a delivery's (FOCUS conformance and exact reconciliation to its source), a
billing month's (the split and showback audits of ``sql/gates/audits``) and the publish gate (every published
delivery and month passes both). The loader, the Dagster asset checks, the split and publish all ask here."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from gpuledger.gates.checks import CheckResult, run_checks
from gpuledger.warehouse.sqlfiles import load_sql, sql_files
from models.billing_month import BillingMonth

AUDITS_FOLDER = "gates/audits"


@dataclass(frozen=True)
class DeliveryVerdict:
    """What the delivery gate found in one delivery's FOCUS rows."""

    delivery_id: str
    failed_checks: tuple[CheckResult, ...]
    """Conformance checks with violations, in check order."""
    mismatches: tuple[tuple[object, ...], ...]
    """Rows of ``gates/focus_vs_source.sql``: (account, period, currency, source billed, source effective,
    FOCUS billed, FOCUS effective) wherever the sums differ."""

    @property
    def passed(self) -> bool:
        return not self.failed_checks and not self.mismatches


def delivery_verdict(con: duckdb.DuckDBPyConnection, delivery_id: str) -> DeliveryVerdict:
    failed = tuple(result for result in run_checks(con, delivery_id) if not result.passed)
    return DeliveryVerdict(delivery_id, failed, source_mismatches(con, delivery_id))


def source_mismatches(con: duckdb.DuckDBPyConnection, delivery_id: str) -> tuple[tuple[object, ...], ...]:
    """The reconciliation alone: where the delivery's FOCUS rows do not sum to its source totals exactly."""
    return tuple(con.execute(load_sql("gates/focus_vs_source.sql"), {"id": delivery_id}).fetchall())


def month_failures(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, list[tuple[object, ...]]]:
    """The first offending rows of each month audit that fails for billing month ``YYYY-MM``."""
    params = {"billing_month": BillingMonth.parse(month).first_day}
    failures = {}
    for path in sql_files(AUDITS_FOLDER):
        bad = con.execute(path.read_text(encoding="utf-8"), params).fetchmany(5)
        if bad:
            failures[path.stem] = bad
    return failures


def published_months(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Billing months (``YYYY-MM``) with published FOCUS rows, oldest first."""
    return [row[0] for row in con.execute(load_sql("gates/published_months.sql")).fetchall()]


def publish_blockers(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Why the warehouse may not be published now; empty when every published delivery and month passes."""
    blockers = []
    deliveries = [row[0] for row in con.execute("SELECT DISTINCT delivery_id FROM meta.slices ORDER BY 1").fetchall()]
    for delivery_id in deliveries:
        verdict = delivery_verdict(con, delivery_id)
        if verdict.failed_checks:
            blockers.append(f"delivery {delivery_id}: FOCUS checks {', '.join(r.check for r in verdict.failed_checks)}")
        if verdict.mismatches:
            blockers.append(f"delivery {delivery_id}: FOCUS totals differ from the source's")
    for month in published_months(con):
        failures = month_failures(con, month)
        if failures:
            blockers.append(f"billing month {month}: allocation audits {', '.join(sorted(failures))}")
    return blockers
