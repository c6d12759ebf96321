"""Dagster definitions: export deliveries -> FOCUS slices in DuckDB, partitioned by billing month x provider.

Each partition loads the newest complete delivery of every configured source of that provider for that
month (replacing its slices atomically), then reports the conformance and reconciliation checks.
"""

import json
import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetSpec,
    ConfigurableResource,
    Definitions,
    MaterializeResult,
    MonthlyPartitionsDefinition,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    RunRequest,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    StaticPartitionsDefinition,
    asset,
    define_asset_job,
    multi_asset,
    sensor,
)
from pydantic import Field

from connectors.ledger import read_ledger
from connectors.sync import remote_sources, sync_source
from gpuledger.allocate import audit_failures
from gpuledger.checks import run_checks
from gpuledger.load import SliceTotal
from gpuledger.pipeline import allocate, load_month, open_warehouse, resolve_home
from gpuledger.sqlfiles import load_sql
from models.config import load_config

# "focus": sources of format focus, FOCUS files of any other provider (OCI, GPU clouds)
PROVIDERS = ("aws", "azure", "gcp", "focus")
# end_offset=1 includes the open (current) month, which providers restate until it closes.
BILLING_MONTHS = MonthlyPartitionsDefinition(start_date="2024-01-01", end_offset=1)
INGESTION_PARTITIONS = MultiPartitionsDefinition(
    {"month": BILLING_MONTHS, "provider": StaticPartitionsDefinition(list(PROVIDERS))}
)
WAREHOUSE_TAGS = {"gpuledger/warehouse": "writer"}


class WarehouseResource(ConfigurableResource):
    """Where the pipeline keeps its exports configuration and DuckDB warehouse."""

    home: str = Field(default="", description="gpuledger home; empty means $GPULEDGER_HOME, else the default.")

    def resolved_home(self) -> Path:
        return resolve_home(self.home or None)


def ingestion_partition_key(month: str, provider: str) -> MultiPartitionKey:
    """Partition key for billing month ``YYYY-MM`` of ``provider``."""
    return MultiPartitionKey({"month": f"{month}-01", "provider": provider})


@asset(
    key=["focus", "costs"],
    partitions_def=INGESTION_PARTITIONS,
    op_tags=WAREHOUSE_TAGS,
    check_specs=[
        AssetCheckSpec("focus_conformance", asset=["focus", "costs"], description="Strict FOCUS 1.2 checks."),
        AssetCheckSpec(
            "source_reconciliation",
            asset=["focus", "costs"],
            description="Sums per account, period and currency equal the source's billed and amortized totals.",
        ),
    ],
    description="FOCUS 1.2 rows of one billing month of one provider, replaced by the newest deliveries.",
)
def focus_costs(
    context: AssetExecutionContext, warehouse: WarehouseResource
) -> Iterator[MaterializeResult | AssetCheckResult]:
    keys = context.partition_key.keys_by_dimension  # type: ignore[attr-defined]
    month, provider = keys["month"][:7], keys["provider"]
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        loaded = load_month(con, home, provider, month)
        check_failures = {
            result.check: result.violations
            for load in loaded
            for result in run_checks(con, load.delivery_id)
            if not result.passed
        }
        unreconciled = [
            load.delivery_id
            for load in loaded
            if con.execute(load_sql("reconcile/focus_vs_source.sql"), {"id": load.delivery_id}).fetchall()
        ]
    slices = [s for load in loaded for s in load.slices]
    context.log.info("%s %s: %d deliveries, %d slices", provider, month, len(loaded), len(slices))
    yield MaterializeResult(
        metadata={
            "deliveries": [load.delivery_id for load in loaded],
            "unchanged_deliveries": sum(load.unchanged for load in loaded),
            "focus_rows": sum(s.rows for s in slices),
            "billed_cost_by_currency": _by_currency(slices, "billed_cost"),
            "effective_cost_by_currency": _by_currency(slices, "effective_cost"),
        }
    )
    yield AssetCheckResult(
        check_name="focus_conformance",
        passed=not check_failures,
        severity=AssetCheckSeverity.ERROR,
        metadata={"failed_checks": check_failures},
    )
    yield AssetCheckResult(
        check_name="source_reconciliation",
        passed=not unreconciled,
        severity=AssetCheckSeverity.ERROR,
        metadata={"unreconciled_deliveries": unreconciled},
    )


def _by_currency(slices: list[SliceTotal], field: str) -> dict[str, str]:
    totals: dict[str, object] = {}
    for s in slices:
        if s.currency is not None:
            totals[s.currency] = totals.get(s.currency, 0) + getattr(s, field)
    return {currency: str(total) for currency, total in sorted(totals.items())}


SHOWBACK_KEYS = (["showback", "team_month"], ["showback", "job_costs"], ["showback", "idle_by_hour_of_week"])


@multi_asset(
    specs=[
        AssetSpec(
            ["allocation", "cost_split"],
            # Dagster maps the month dimension of the ingestion partitions onto the monthly partitions by default.
            deps=[focus_costs],
            description="Every FOCUS charge of the month split into run/idle/checkpoint_storage/egress/other"
            " per team and job, after ingesting the configured telemetry.",
        ),
        *(
            AssetSpec(key, deps=[["allocation", "cost_split"]], description=f"Showback table {'.'.join(key)}.")
            for key in SHOWBACK_KEYS
        ),
    ],
    partitions_def=BILLING_MONTHS,
    op_tags=WAREHOUSE_TAGS,
    check_specs=[
        AssetCheckSpec(
            "split_reconciliation",
            asset=["allocation", "cost_split"],
            description="Each charge's pieces sum exactly to its BilledCost and EffectiveCost, signs kept; "
            "showback totals per currency equal FOCUS EffectiveCost.",
        )
    ],
    name="allocation_and_showback",
)
def allocation_and_showback(
    context: AssetExecutionContext, warehouse: WarehouseResource
) -> Iterator[MaterializeResult | AssetCheckResult]:
    month = context.partition_key[:7]
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        loads, result = allocate(con, home, month)
        # The audits also gate the split's transaction; re-run on the committed tables, they are the check.
        failures = audit_failures(con, month)
        totals = con.execute(
            "SELECT team, currency, sum(total_cost), sum(idle_cost) FROM showback.team_month"
            " WHERE billing_month = CAST($month AS DATE) GROUP BY ALL ORDER BY ALL",
            {"month": f"{month}-01"},
        ).fetchall()
    notes = [f"{load.source}: {note}" for load in loads for note in load.notes]
    for note in notes:
        context.log.warning(note)
    yield MaterializeResult(
        asset_key=["allocation", "cost_split"],
        metadata={
            "split_rows": result.split_rows,
            "usage_rows": result.usage_rows,
            "telemetry": {load.source: {"jobs": load.jobs, "activity_rows": load.activity_rows} for load in loads},
            "telemetry_notes": notes,
        },
    )
    team_totals = {f"{team} {currency}": f"total {total}, idle {idle}" for team, currency, total, idle in totals}
    for key in SHOWBACK_KEYS:
        yield MaterializeResult(asset_key=key, metadata={"team_totals": team_totals} if key[1] == "team_month" else {})
    yield AssetCheckResult(
        check_name="split_reconciliation",
        asset_key=["allocation", "cost_split"],
        passed=not failures,
        severity=AssetCheckSeverity.ERROR,
        metadata={"failed_audits": {name: [str(row) for row in rows] for name, rows in failures.items()}},
    )


focus_ingestion = define_asset_job("focus_ingestion", selection=[focus_costs])


def delivery_sensor(source_name: str) -> SensorDefinition:
    """Sync one remote source; each delivery it lands requests the FOCUS partition of its month and provider.

    The cursor counts the source's ledger entries already turned into run requests, so a tick requests only
    what landed since; the run key (source, version, period) keeps a delivery from being requested twice.
    """

    # Dagster names allow [A-Za-z0-9_] only
    @sensor(name="deliveries_" + re.sub(r"\W", "_", source_name), job=focus_ingestion, minimum_interval_seconds=3600)
    def deliveries(context: SensorEvaluationContext, warehouse: WarehouseResource) -> SensorResult:
        source = next(s for s in load_config(warehouse.resolved_home()).sources if s.name == source_name)
        sync_source(source)
        assert source.remote is not None
        entries = [e for e in read_ledger(source.remote.landing) if e.source == source.name]
        seen = int(json.loads(context.cursor or "0"))
        requests = [
            RunRequest(
                run_key=f"{source.name}:{entry.version}:{entry.billing_period}",
                partition_key=ingestion_partition_key(entry.billing_period, source.provider),
            )
            for entry in entries[seen:]
            if entry.billing_period
        ]
        return SensorResult(run_requests=requests, cursor=json.dumps(len(entries)))

    return deliveries


def _delivery_sensors() -> list[SensorDefinition]:
    """One sensor per remote source of the configured home (none when it has no configuration yet)."""
    return [delivery_sensor(s.name) for s in remote_sources(load_config(resolve_home(None)).sources)]


defs = Definitions(
    assets=[focus_costs, allocation_and_showback],
    jobs=[focus_ingestion],
    sensors=_delivery_sensors(),
    resources={"warehouse": WarehouseResource()},
)
