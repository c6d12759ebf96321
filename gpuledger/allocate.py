"""The split: every FOCUS charge of a billing month into run / idle / checkpoint_storage / egress / other.

One transaction per month rebuilds ``gpu.usage`` and ``allocation.cost_split`` for the month (delete, then
insert), then the ``showback`` tables, then runs the audits in ``sql/audits/``. An audit that returns rows
rolls everything back: nothing that does not reconcile to the cent is ever kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import duckdb

from gpuledger.errors import ReconciliationError
from gpuledger.failpoints import failpoint
from gpuledger.rates import store_exchange_rates
from gpuledger.sqlfiles import load_sql, sql_files
from gpuledger.warehouse import replace_ref_table, transaction
from models.allocation import EGRESS_USAGE_PATTERNS, METHOD_ID, AllocationConfig
from models.config import ReportingConfig

SHOWBACK_TABLES = ("job_costs", "team_month", "idle_by_hour_of_week", "team_month_reporting")
"""Built in this order (team_month reads job_costs, team_month_reporting reads team_month)."""


@dataclass(frozen=True)
class AllocationResult:
    month: str
    split_rows: int
    usage_rows: int


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """UTC start of billing month ``YYYY-MM`` and of the month after."""
    start = datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
    return start, start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)


def billing_period_window(month: str) -> tuple[datetime, datetime]:
    """The range holding BillingPeriodStart of billing month ``YYYY-MM`` in any billing time zone.

    Periods start at local midnight (GCP invoices: US/Pacific), so between UTC-12 and UTC+14 of UTC midnight.
    """
    start, _ = month_bounds(month)
    return start - timedelta(hours=14), start + timedelta(hours=12)


def write_allocation_config(con: duckdb.DuckDBPyConnection, config: AllocationConfig) -> None:
    """The configuration as ``alloc.*`` tables, which the allocation SQL joins."""
    replace_ref_table(con, "alloc.settings", ("idle_policy",), [(config.idle_policy,)])
    priorities = [(key, f"{i:04d}") for i, key in enumerate(config.team_tag_keys)]
    replace_ref_table(con, "alloc.team_tag_keys", ("tag_key", "priority"), priorities)
    replace_ref_table(con, "alloc.account_teams", ("account_id", "team"), sorted(config.account_teams.items()))
    replace_ref_table(con, "alloc.job_account_teams", ("account", "team"), sorted(config.job_account_teams.items()))
    replace_ref_table(con, "alloc.checkpoint_resources", ("resource_id",), [(r,) for r in config.checkpoint_resources])
    replace_ref_table(con, "alloc.checkpoint_tags", ("tag_key", "tag_value"), sorted(config.checkpoint_tags.items()))
    nodes = [(n.cluster, n.node, n.resource_id) for n in config.nodes]
    replace_ref_table(con, "alloc.nodes", ("cluster", "node", "resource_id"), nodes)
    replace_ref_table(
        con,
        "alloc.egress_patterns",
        ("provider", "pattern"),
        [(provider, p) for provider, patterns in sorted(EGRESS_USAGE_PATTERNS.items()) for p in patterns],
    )


def allocate_month(
    con: duckdb.DuckDBPyConnection,
    config: AllocationConfig,
    month: str,
    reporting: ReportingConfig | None = None,
) -> AllocationResult:
    """Split billing month ``YYYY-MM`` and rebuild the showback tables, all or nothing."""
    period_start, period_end = month_bounds(month)
    window_params = dict(zip(("month_from", "month_to"), billing_period_window(month), strict=True))
    with transaction(con):
        write_allocation_config(con, config)
        store_exchange_rates(con, reporting or ReportingConfig())
        con.execute(load_sql("allocation/macros.sql"))
        # Usage covers the hours the month's charges cover (provider billing months need not be UTC months).
        window = con.execute(
            "SELECT coalesce(min(ChargePeriodStart), $start), coalesce(max(ChargePeriodEnd), $end)"
            " FROM focus.costs WHERE BillingPeriodStart BETWEEN $month_from AND $month_to",
            {"start": period_start, "end": period_end, **window_params},
        ).fetchone()
        assert window is not None
        con.execute("DELETE FROM gpu.usage WHERE billing_period_start = $start", {"start": period_start})
        con.execute(
            "INSERT INTO gpu.usage BY NAME " + load_sql("telemetry/gpu_usage.sql"),
            {"billing_period_start": period_start, "period_start": window[0], "period_end": window[1]},
        )
        con.execute(
            "DELETE FROM allocation.cost_split WHERE BillingPeriodStart BETWEEN $month_from AND $month_to",
            window_params,
        )
        con.execute(
            "INSERT INTO allocation.cost_split BY NAME " + load_sql("allocation/cost_split.sql"),
            {"period_start": period_start, "method_id": METHOD_ID, **window_params},
        )
        build_showback(con)
        _audit(con, month)
        failpoint("allocate:before-commit")
        counts = con.execute(
            "SELECT (SELECT count(*) FROM allocation.cost_split WHERE BillingPeriodStart BETWEEN $month_from AND"
            " $month_to), (SELECT count(*) FROM gpu.usage WHERE billing_period_start = $start)",
            {"start": period_start, **window_params},
        ).fetchone()
    assert counts is not None
    return AllocationResult(month=month, split_rows=counts[0], usage_rows=counts[1])


def build_showback(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild the showback tables from every month's split (run groups span months)."""
    for table in SHOWBACK_TABLES:
        # Table names are this module's constants; the bodies are the project's SQL files.
        con.execute(f"CREATE OR REPLACE TABLE showback.{table} AS " + load_sql(f"showback/{table}.sql"))


def audit_failures(con: duckdb.DuckDBPyConnection, month: str) -> dict[str, list[tuple[object, ...]]]:
    """The first offending rows of each audit in ``sql/audits/`` that fails for billing month ``YYYY-MM``."""
    period_start, _ = month_bounds(month)
    month_from, month_to = billing_period_window(month)
    params = {"period_start": period_start, "month_from": month_from, "month_to": month_to}
    failures = {}
    for path in sql_files("audits"):
        sql = path.read_text(encoding="utf-8")
        # DuckDB rejects unused named parameters: bind those the audit names
        bad = con.execute(sql, {k: v for k, v in params.items() if f"${k}" in sql}).fetchmany(5)
        if bad:
            failures[path.stem] = bad
    return failures


def _audit(con: duckdb.DuckDBPyConnection, month: str) -> None:
    failures = audit_failures(con, month)
    if failures:
        raise ReconciliationError(f"allocation audits failed for {month}: first offending rows {failures}")
