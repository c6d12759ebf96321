"""The three gates, one place each: a delivery's (FOCUS conformance and exact reconciliation to its source), a
billing month's (the split and showback audits of ``sql/gates/audits``) and the publish gate (every published
delivery and month passes both). The loader, the Dagster asset checks, the split and publish all ask here."""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from gpuledger.gates.checks import CheckResult, run_checks
from gpuledger.warehouse.database import transaction
from gpuledger.warehouse.fingerprints import code_version
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
    """Why the warehouse may not be published now; empty when every published delivery and month passes. A delivery
    whose rows and totals the gate passed before under this code (:func:`record_passed_deliveries`) is not checked
    again: its verdict would be the same."""
    blockers = []
    for delivery_id, _ in _unproven_deliveries(con):
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


def record_passed_deliveries(con: duckdb.DuckDBPyConnection) -> None:
    """Check each published delivery not passed under this code with its rows and totals as they are (new, edited, or
    the code is new) and record the digest of each that passes (``meta.passed_delivery_digests``)."""
    with transaction(con):
        for delivery_id, digest in _unproven_deliveries(con):
            if delivery_verdict(con, delivery_id).passed:
                con.execute(
                    "INSERT INTO meta.passed_delivery_digests VALUES ($id, $digest, $code, now())",
                    {"id": delivery_id, "digest": digest, "code": code_version()},
                )


def _unproven_deliveries(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Published deliveries and their digests (``gates/delivery_digests.sql``) not passed under this code before."""
    passed = set(
        con.execute(
            "SELECT delivery_id, digest FROM meta.passed_delivery_digests WHERE code_version = $code",
            {"code": code_version()},
        ).fetchall()
    )
    digests = con.execute(load_sql("gates/delivery_digests.sql")).fetchall()
    return [(delivery_id, digest) for delivery_id, digest in digests if (delivery_id, digest) not in passed]
