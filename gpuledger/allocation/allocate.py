"""The split: every FOCUS charge of a billing month into run / idle / checkpoint_storage / egress / other.

One transaction per month rebuilds ``gpu.usage`` and ``allocation.cost_split`` for the month (delete, then
insert), then the ``showback`` tables, then runs the audits in ``sql/gates/audits/``. An audit that returns rows
rolls everything back: nothing that does not reconcile to the cent is ever kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import duckdb

from gpuledger.allocation.rates import store_exchange_rates
from gpuledger.gates.verdicts import month_failures
from gpuledger.telemetry.usage import rebuild_usage
from gpuledger.warehouse.database import transaction, write_allocation_config
from gpuledger.warehouse.failpoints import failpoint
from gpuledger.warehouse.sqlfiles import load_sql
from models.allocation import METHOD_ID, AllocationConfig
from models.billing_month import BillingMonth
from models.config import ReportingConfig
from models.errors import ReconciliationError

SHOWBACK_TABLES = ("job_costs", "team_month", "user_month", "idle_by_hour_of_week", "team_month_reporting")
"""Built in this order (team_month and user_month read job_costs, team_month_reporting reads team_month)."""


@dataclass(frozen=True)
class AllocationResult:
    month: str
    split_rows: int
    usage_rows: int
    notes: tuple[str, ...] = ()
    """What a reader of the month's figures should know: oversubscribed nodes, node-shared pricing."""


def allocate_month(
    con: duckdb.DuckDBPyConnection,
    config: AllocationConfig,
    month: str,
    reporting: ReportingConfig | None = None,
) -> AllocationResult:
    """Split billing month ``YYYY-MM`` and rebuild the showback tables, all or nothing."""
    billing_month = BillingMonth.parse(month)
    period_start, period_end = billing_month.start, billing_month.end
    window_params = {"billing_month": billing_month.first_day}
    with transaction(con):
        write_allocation_config(con, config)
        store_exchange_rates(con, reporting or ReportingConfig())
        con.execute(load_sql("allocation/macros.sql"))
        # Usage covers the hours the month's charges cover (provider billing months need not be UTC months).
        window = con.execute(
            "SELECT coalesce(min(ChargePeriodStart), $start), coalesce(max(ChargePeriodEnd), $end)"
            " FROM focus.costs WHERE billing_month(BillingPeriodStart) = $billing_month",
            {"start": period_start, "end": period_end, **window_params},
        ).fetchone()
        assert window is not None
        rebuild_usage(con, period_start, (window[0], window[1]), config.pricing)
        con.execute(
            "DELETE FROM allocation.cost_split WHERE billing_month(BillingPeriodStart) = $billing_month",
            window_params,
        )
        con.execute(
            "INSERT INTO allocation.cost_split BY NAME " + load_sql("allocation/cost_split.sql"),
            {"period_start": period_start, "method_id": METHOD_ID, **window_params},
        )
        build_showback(con)
        _audit(con, month)
        failpoint("allocate:before-commit")
        notes = tuple(
            row[0]
            for row in con.execute(
                load_sql("allocation/split_notes.sql"), {"period_start": period_start, **window_params}
            ).fetchall()
        )
        counts = con.execute(
            "SELECT (SELECT count(*) FROM allocation.cost_split WHERE billing_month(BillingPeriodStart) ="
            " $billing_month), (SELECT count(*) FROM gpu.usage WHERE billing_period_start = $start)",
            {"start": period_start, **window_params},
        ).fetchone()
    assert counts is not None
    return AllocationResult(month=month, split_rows=counts[0], usage_rows=counts[1], notes=notes)


def gpu_cost_without_telemetry(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, int, Decimal]]:
    """(billing month ``YYYY-MM``, currency, GPU instances, their EffectiveCost): what the split calls idle with no
    job when no telemetry source says which jobs ran on those instances."""
    con.execute(load_sql("allocation/macros.sql"))  # the split's own rule for a GPU instance
    return con.execute(load_sql("allocation/gpu_cost_without_telemetry.sql")).fetchall()


def build_showback(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild the showback tables from every month's split (run groups span months)."""
    for table in SHOWBACK_TABLES:
        # Table names are this module's constants; the bodies are the project's SQL files.
        con.execute(f"CREATE OR REPLACE TABLE showback.{table} AS " + load_sql(f"allocation/showback/{table}.sql"))


def _audit(con: duckdb.DuckDBPyConnection, month: str) -> None:
    failures = month_failures(con, month)
    if failures:
        raise ReconciliationError(f"allocation audits failed for {month}: first offending rows {failures}")
