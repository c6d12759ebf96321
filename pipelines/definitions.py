"""Dagster definitions: export deliveries -> FOCUS slices in DuckDB, partitioned by billing month x provider.

Each partition loads the newest complete delivery of every configured source of that provider for that
month (replacing its slices atomically), then reports the conformance and reconciliation checks.
"""

import json
import re
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetSpec,
    Backoff,
    ConfigurableResource,
    DagsterRunStatus,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    Definitions,
    Failure,
    MaterializeResult,
    MonthlyPartitionsDefinition,
    MultiPartitionKey,
    MultiPartitionsDefinition,
    OpExecutionContext,
    Output,
    RetryPolicy,
    RunRequest,
    RunStatusSensorContext,
    ScheduleDefinition,
    SensorDefinition,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    StaticPartitionsDefinition,
    asset,
    define_asset_job,
    job,
    multi_asset,
    op,
    run_status_sensor,
    sensor,
)
from pydantic import Field

from connectors.sync import SyncBusy, remote_sources, sync_source
from gpuledger.chargeback.months import lifecycle_now, refreshable_months, update_months
from gpuledger.gates.freshness import STALE_AFTER_HOURS, stale_sources
from gpuledger.gates.load import SliceTotal
from gpuledger.gates.verdicts import delivery_verdict, month_failures
from gpuledger.publish.snapshot import publish
from gpuledger.warehouse.home import open_warehouse, resolve_home
from models.config import load_config
from models.errors import GpuledgerError
from models.formats import PROVIDERS
from models.landing import read_ledger
from pipelines.deliveries import allocate, load_month

# end_offset=1 includes the open (current) month, which providers restate until it closes.
BILLING_MONTHS = MonthlyPartitionsDefinition(start_date="2024-01-01", end_offset=1)
# provider "focus": sources of format focus, FOCUS files of any other provider (OCI, GPU clouds)
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
        AssetCheckSpec(
            "held_deliveries",
            asset=["focus", "costs"],
            description="No delivery is held for review: one that would empty a slice, move a closed month by more "
            "than [ingest] hold_closed_month_change or charge usage far outside its period waits for "
            "`gpuledger accept` (its slices keep what was published).",
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
        verdicts = [delivery_verdict(con, load.delivery_id) for load in loaded]
    check_failures = {result.check: result.violations for v in verdicts for result in v.failed_checks}
    unreconciled = [v.delivery_id for v in verdicts if v.mismatches]
    slices = [s for load in loaded if not load.held for s in load.slices]
    held = {load.delivery_id: [h.describe() for h in load.holds] for load in loaded if load.held}
    context.log.info("%s %s: %d deliveries, %d slices", provider, month, len(loaded), len(slices))
    for delivery_id, reasons in held.items():
        context.log.warning(f"held for review: {delivery_id}: {'; '.join(reasons)}")
    yield MaterializeResult(
        metadata={
            "deliveries": [load.delivery_id for load in loaded],
            "unchanged_deliveries": sum(load.unchanged for load in loaded),
            "held_deliveries": sorted(held),
            "repaired_values": {load.delivery_id: dict(load.repairs) for load in loaded if load.repairs},
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
    yield AssetCheckResult(
        check_name="held_deliveries",
        passed=not held,
        severity=AssetCheckSeverity.WARN,
        metadata={"held": held},
    )


def _by_currency(slices: list[SliceTotal], field: str) -> dict[str, str]:
    totals: dict[str, object] = {}
    for s in slices:
        if s.currency is not None:
            totals[s.currency] = totals.get(s.currency, 0) + getattr(s, field)
    return {currency: str(total) for currency, total in sorted(totals.items())}


SHOWBACK_KEYS = (
    ["showback", "team_month"],
    ["showback", "job_costs"],
    ["showback", "user_month"],
    ["showback", "idle_by_hour_of_week"],
)


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
        ),
        AssetCheckSpec(
            "gpu_attribution",
            asset=["allocation", "cost_split"],
            description="No node held more GPUs than it has, and every job's GPU cost was priced by its own "
            "activity (job label or GPU index) rather than node-level activity shared between jobs.",
        ),
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
        failures = month_failures(con, month)
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
    yield AssetCheckResult(
        check_name="gpu_attribution",
        asset_key=["allocation", "cost_split"],
        passed=not result.notes,
        severity=AssetCheckSeverity.WARN,
        metadata={"notes": list(result.notes)},
    )


@asset(
    key=["chargeback", "months"],
    deps=[SHOWBACK_KEYS[0]],
    op_tags=WAREHOUSE_TAGS,
    description="Billing months and their state (open, closed with locked rates, issued), and the adjustments "
    "restatements of issued months carry to the next statement.",
)
def chargeback_months(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        states = update_months(con, load_config(home).months, lifecycle_now())
        adjustments = con.execute(
            "SELECT strftime(billing_month, '%Y-%m'), team, currency, adjustment FROM chargeback.adjustments"
            " ORDER BY ALL"
        ).fetchall()
    for month, team, currency, amount in adjustments:
        context.log.warning(f"issued month {month} restated: {team} {amount} {currency} carried as an adjustment")
    return MaterializeResult(
        metadata={
            "months": {m.month: f"{m.state} (closes {m.closes_on})" for m in states},
            "adjustments": [f"{m} {t} {a} {c}" for m, t, c, a in adjustments],
        }
    )


@asset(
    key=["publish", "analyst_duckdb"],
    deps=[chargeback_months],
    op_tags=WAREHOUSE_TAGS,
    check_specs=[
        AssetCheckSpec(
            "source_freshness",
            asset=["publish", "analyst_duckdb"],
            description=f"Every source delivered something new within {STALE_AFTER_HOURS} hours.",
        )
    ],
    description="<home>/analyst.duckdb, rebuilt from the warehouse and swapped in atomically after every check "
    "passed; FOCUS rows as Parquet under <home>/published/focus.",
)
def analyst_duckdb(
    context: AssetExecutionContext, warehouse: WarehouseResource
) -> Iterator[MaterializeResult | AssetCheckResult]:
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        result = publish(con, home)
        stale = stale_sources(con, load_config(home).sources, datetime.now(UTC))  # real time, not the lifecycle's
    context.log.info(f"published {result.path} ({sum(result.tables.values())} rows)")
    yield MaterializeResult(metadata={"path": str(result.path), "parquet": str(result.parquet), "rows": result.tables})
    yield AssetCheckResult(
        check_name="source_freshness",
        passed=not stale,
        severity=AssetCheckSeverity.WARN,
        metadata={"stale_sources": stale},
    )


focus_ingestion = define_asset_job("focus_ingestion", selection=[focus_costs])
monthly_allocation = define_asset_job("monthly_allocation", selection=[allocation_and_showback])
publishing = define_asset_job("publishing", selection=[chargeback_months, analyst_duckdb])
# With one run at a time (dagster.yaml), queued runs start in the order requested: slices, split, publish.
DOWNSTREAM_JOBS = [focus_ingestion, monthly_allocation, publishing]


def downstream_requests(key: str, slices: list[tuple[str, str]]) -> list[RunRequest]:
    """FOCUS runs for the (month, provider) ``slices``, then the split of their months, then one publish."""
    months = sorted({month for month, _ in slices})
    return [
        *(
            RunRequest(
                run_key=f"{key}:focus:{m}:{p}", job_name="focus_ingestion", partition_key=ingestion_partition_key(m, p)
            )
            for m, p in sorted(slices)
        ),
        *(
            RunRequest(run_key=f"{key}:allocation:{m}", job_name="monthly_allocation", partition_key=f"{m}-01")
            for m in months
        ),
        RunRequest(run_key=f"{key}:publish", job_name="publishing"),
    ]


def delivery_sensor(source_name: str) -> SensorDefinition:
    """Sync one remote source; each delivery it lands requests the FOCUS partition of its month and provider,
    then that month's split and a publish.

    The cursor counts the source's ledger entries already turned into run requests, so a tick requests only
    what landed since; the run keys (source, version, period) keep a delivery from being requested twice.
    """

    # Dagster names allow [A-Za-z0-9_] only
    @sensor(name="deliveries_" + re.sub(r"\W", "_", source_name), jobs=DOWNSTREAM_JOBS, minimum_interval_seconds=3600)
    def deliveries(context: SensorEvaluationContext, warehouse: WarehouseResource) -> SensorResult | SkipReason:
        source = next(s for s in load_config(warehouse.resolved_home()).sources if s.name == source_name)
        try:
            sync_source(source)
        except SyncBusy as busy:  # the nightly sync (or a CLI one) is landing it; the next tick reads its ledger
            return SkipReason(str(busy))
        assert source.remote is not None
        entries = [e for e in read_ledger(source.remote.landing) if e.source == source.name]
        seen = int(json.loads(context.cursor or "0"))
        new = [e for e in entries[seen:] if e.billing_period]
        key = f"{source.name}:" + ",".join(f"{e.version}:{e.billing_period}" for e in new)
        requests = downstream_requests(key, [(str(e.billing_period), source.provider) for e in new]) if new else []
        return SensorResult(run_requests=requests, cursor=json.dumps(len(entries)))

    return deliveries


@op(tags=WAREHOUSE_TAGS, retry_policy=RetryPolicy(max_retries=2, delay=300, backoff=Backoff.EXPONENTIAL))
def sync_remote_sources(context: OpExecutionContext, warehouse: WarehouseResource) -> Output[None]:
    """Sync every remote source; one failing source does not stop the others, but fails the run at the end."""
    pulled: dict[str, list[str]] = {}
    failed: dict[str, str] = {}
    for source in remote_sources(load_config(warehouse.resolved_home()).sources):
        try:
            result = sync_source(source)
        except GpuledgerError as exc:
            context.log.error(f"{source.name}: {exc}")
            failed[source.name] = str(exc)
            continue
        pulled[source.name] = [f"{p.billing_period} {p.version}" for p in result.pulled]
        context.log.info(f"{source.name}: {len(result.pulled)} new deliveries, {len(result.unchanged)} unchanged")
    if failed:
        raise Failure(description=f"sync failed for {', '.join(failed)}", metadata={"errors": failed})
    return Output(None, metadata={"pulled": pulled})


@job(description="Land every remote source's new deliveries, then refresh the months still open (refresh sensors).")
def nightly_sync() -> None:
    sync_remote_sources()


nightly = ScheduleDefinition(
    name="nightly",
    job=nightly_sync,
    cron_schedule="0 2 * * *",  # a quiet hour; a sensor tick that finds the sync running skips to its next tick
    execution_timezone="UTC",
    default_status=DefaultScheduleStatus.RUNNING,
)


def refresh_requests(home: Path, run_id: str) -> list[RunRequest]:
    """The nightly refresh: every provider with a source, for each month not closed yet, then split and publish.

    Open months change every night even without a new delivery (telemetry grows, the provider restates)."""
    config = load_config(home)
    providers = sorted({s.provider for s in config.sources})
    months = refreshable_months(config.months, lifecycle_now())
    return downstream_requests(f"nightly:{run_id}", [(m, p) for m in months for p in providers])


def refresh_sensor(status: DagsterRunStatus) -> SensorDefinition:
    """After the nightly sync ends (``status``), refresh the open months; a failed source fails its sync run,
    but the other sources' months are still refreshed."""

    @run_status_sensor(
        name=f"refresh_after_nightly_sync_{status.value.lower()}",
        run_status=status,
        monitored_jobs=[nightly_sync],
        request_jobs=DOWNSTREAM_JOBS,
        default_status=DefaultSensorStatus.RUNNING,
    )
    def refresh(context: RunStatusSensorContext, warehouse: WarehouseResource) -> list[RunRequest]:
        return refresh_requests(warehouse.resolved_home(), context.dagster_run.run_id)

    return refresh


def _delivery_sensors() -> list[SensorDefinition]:
    """One sensor per remote source of the configured home (none when it has no configuration yet)."""
    return [delivery_sensor(s.name) for s in remote_sources(load_config(resolve_home(None)).sources)]


defs = Definitions(
    assets=[focus_costs, allocation_and_showback, chargeback_months, analyst_duckdb],
    jobs=[focus_ingestion, monthly_allocation, publishing, nightly_sync],
    schedules=[nightly],
    sensors=[*_delivery_sensors(), refresh_sensor(DagsterRunStatus.SUCCESS), refresh_sensor(DagsterRunStatus.FAILURE)],
    resources={"warehouse": WarehouseResource()},
)
