"""Dagster definitions: the pipeline's stages as asset groups, in the README's flow order.

sources (observed export and telemetry sources) -> normalize (``focus/costs``, gated by its blocking checks,
partitioned by billing month x provider) -> telemetry -> allocation -> showback (by billing month) -> chargeback
-> publish (``analyst.duckdb``) -> reports (a closed month's issued statement, rendered). Billing months are
dynamic partitions: the runner and the sensors add each month as it first has data, so the UI lists only real
months (docs/decisions/0014).
"""

import json
import re
import traceback
from collections.abc import Iterator, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetsDefinition,
    AssetSelection,
    AssetSpec,
    Backoff,
    ConfigurableResource,
    DagsterInstance,
    DagsterRunStatus,
    DefaultScheduleStatus,
    DefaultSensorStatus,
    Definitions,
    DynamicOut,
    DynamicOutput,
    DynamicPartitionsDefinition,
    Failure,
    GraphIn,
    GraphOut,
    In,
    MaterializeResult,
    MultiPartitionsDefinition,
    Nothing,
    OpExecutionContext,
    Out,
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
    graph,
    in_process_executor,
    job,
    multi_asset,
    multiprocess_executor,
    op,
    run_status_sensor,
    sensor,
)
from pydantic import Field

from connectors.sync import SyncBusy, remote_sources, sync_source
from gpuledger.advice.advise import advise
from gpuledger.chargeback.months import issue_month, lifecycle_now, refreshable_months, update_months
from gpuledger.gates.freshness import STALE_AFTER_HOURS, stale_sources
from gpuledger.gates.load import Part, PlannedLoad, SliceTotal, StagedPart
from gpuledger.gates.refusals import Refusal, standing_refusals
from gpuledger.gates.vacuum import vacuum
from gpuledger.gates.verdicts import delivery_verdict, month_failures
from gpuledger.publish.snapshot import publish
from gpuledger.reports.report import report_month
from gpuledger.warehouse.home import open_warehouse, resolve_home
from gpuledger.warehouse.lake import is_lake
from models.config import load_config, load_warehouse_config
from models.errors import GpuledgerError
from models.formats import PROVIDERS
from models.landing import read_ledger
from pipelines.batches import (
    ALLOCATION_JOB,
    INGESTION_JOB,
    LOADER_TAGS,
    MONTH_CLOSE_JOB,
    PART_STAGING_POOL,
    PUBLISH_JOB,
    WRITER_TAGS,
    barrier_tick,
    batch_requests,
    loads_in_progress,
)
from pipelines.deliveries import allocate, finish_month, part_staging, plan_month, stage_part_apart
from pipelines.sources import export_source_key, source_assets, telemetry_source_key

# Months ("2026-11") are added as they first have data (the runner, the sensors): no empty months to show missing.
BILLING_MONTHS = DynamicPartitionsDefinition(name="billing_months")
# provider "focus": sources of format focus, FOCUS files of any other provider (OCI, GPU clouds)
INGESTION_PARTITIONS = MultiPartitionsDefinition(
    {"month": BILLING_MONTHS, "provider": StaticPartitionsDefinition(list(PROVIDERS))}
)


class WarehouseResource(ConfigurableResource):
    """Where the pipeline keeps its exports configuration and DuckDB warehouse."""

    home: str = Field(default="", description="gpuledger home; empty means $GPULEDGER_HOME, else the default.")
    part_steps: bool = Field(
        default=False,
        description="Stage each part of a delivery of several in a step of its own (the ingestion job's executor "
        "runs steps in processes, or pods, of their own); else the loading step stages them.",
    )

    def resolved_home(self) -> Path:
        return resolve_home(self.home or None)


def add_billing_months(instance: DagsterInstance, months: list[str]) -> None:
    """Make billing months ``YYYY-MM`` partitions of the instance (those it has already are kept)."""
    missing = [m for m in sorted(set(months)) if not instance.has_dynamic_partition(BILLING_MONTHS.name, m)]
    if missing:
        instance.add_dynamic_partitions(BILLING_MONTHS.name, missing)


FOCUS_KEY = AssetKey(["focus", "costs"])
FOCUS_CHECKS = [  # the gates: a failed ERROR check stops what depends on the slice
    AssetCheckSpec("focus_conformance", asset=FOCUS_KEY, blocking=True, description="Strict FOCUS 1.2 checks."),
    AssetCheckSpec(
        "source_reconciliation",
        asset=FOCUS_KEY,
        blocking=True,
        description="Sums per account, period and currency equal the source's billed and amortized totals.",
    ),
    AssetCheckSpec(
        "held_deliveries",
        asset=FOCUS_KEY,
        description="No delivery is held for review: one that would empty a slice, halve or double an open month's "
        "money ([ingest] hold_open_month_change), move a closed month by more than [ingest] "
        "hold_closed_month_change or charge usage far outside its period waits for "
        "`gpuledger accept` (its slices keep what was published).",
    ),
    AssetCheckSpec(
        "refused_deliveries",
        asset=FOCUS_KEY,
        description="No delivery of the partition stands refused (bad money, keys or identity; an older version "
        "than the loaded one): a refused delivery is not loaded, its slices keep what was published, and the rest "
        "of the run goes on.",
    ),
]


def _ingestion_partition(context: OpExecutionContext) -> tuple[str, str]:
    """(billing month, provider) of the ingestion run's partition."""
    keys = context.partition_key.keys_by_dimension  # type: ignore[attr-defined]
    return keys["month"][:7], keys["provider"]


@op(ins={"after": In(Nothing)}, out={"loads": Out(), "parts": DynamicOut()}, tags=LOADER_TAGS)
def plan_deliveries(
    context: OpExecutionContext, warehouse: WarehouseResource
) -> Iterator[Output[list[PlannedLoad]] | DynamicOutput[Part]]:
    """What loading the partition does, delivery by delivery; with ``part_steps``, a step per part of each delivery
    staged in several."""
    month, provider = _ingestion_partition(context)
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        planned, refused = plan_month(con, home, provider, month)
    _log_refusals(context, refused)
    yield Output(planned, "loads")
    for number, load in enumerate(planned if warehouse.part_steps else [], start=1):
        for part in load.parts if len(load.parts) > 1 else ():  # one part: staged where it is published
            # a source may have several deliveries in a month (Azure exports): the delivery's number tells them apart
            key = re.sub(r"\W", "_", f"delivery{number}_{load.delivery.source_name}_part{part.number}")
            yield DynamicOutput(part, mapping_key=key, output_name="parts")


@op(tags=LOADER_TAGS, pool=PART_STAGING_POOL)
def stage_delivery_part(warehouse: WarehouseResource, part: Part) -> StagedPart:
    """One part of a delivery staged: its FOCUS rows and source totals committed, not yet visible."""
    return stage_part_apart(warehouse.resolved_home(), part)


@op(out={"result": Out(Nothing), **{spec.get_python_identifier(): Out() for spec in FOCUS_CHECKS}}, tags=LOADER_TAGS)
def publish_deliveries(
    context: OpExecutionContext, warehouse: WarehouseResource, loads: list[PlannedLoad], staged: list[StagedPart]
) -> Iterator[Output[None] | AssetCheckResult]:
    """The planned loads done: parts staged (here, or by the part steps: ``staged``), audited, published or held."""
    month, provider = _ingestion_partition(context)
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        stager = (lambda _: staged) if warehouse.part_steps else part_staging(home)[1]
        loaded, refused = finish_month(con, home, (provider, month), loads, stager)
        # the verdict each load's audit reached on the rows it staged; checked here only what this run did not stage
        verdicts = [load.verdict or delivery_verdict(con, load.delivery_id) for load in loaded]
        standing = [refusal.reason for refusal in standing_refusals(con, provider, month)]
    _log_refusals(context, refused)
    check_failures = {result.check: result.violations for v in verdicts for result in v.failed_checks}
    unreconciled = [v.delivery_id for v in verdicts if v.mismatches]
    slices = [s for load in loaded if not load.held for s in load.slices]
    held = {load.delivery_id: [h.describe() for h in load.holds] for load in loaded if load.held}
    context.log.info("%s %s: %d deliveries, %d slices", provider, month, len(loaded), len(slices))
    for delivery_id, reasons in held.items():
        context.log.warning(f"held for review: {delivery_id}: {'; '.join(reasons)}")
    yield Output(
        None,
        "result",
        metadata={
            "deliveries": [load.delivery_id for load in loaded],
            "unchanged_deliveries": sum(load.unchanged for load in loaded),
            "held_deliveries": sorted(held),
            "repaired_values": {load.delivery_id: dict(load.repairs) for load in loaded if load.repairs},
            "focus_rows": sum(s.rows for s in slices),
            "billed_cost_by_currency": _by_currency(slices, "billed_cost"),
            "effective_cost_by_currency": _by_currency(slices, "effective_cost"),
            "parts_staged_by_steps": len(staged),
        },
    )
    findings: dict[str, dict[str, Any]] = {
        "focus_conformance": {"failed_checks": check_failures},
        "source_reconciliation": {"unreconciled_deliveries": unreconciled},
        "held_deliveries": {"held": held},
        "refused_deliveries": {"refused": standing},
    }
    for spec in FOCUS_CHECKS:
        found = findings[spec.name]
        yield AssetCheckResult(
            asset_key=spec.asset_key,
            check_name=spec.name,
            passed=not any(found.values()),
            severity=AssetCheckSeverity.ERROR if spec.blocking else AssetCheckSeverity.WARN,
            metadata=found,
        )


def _log_refusals(context: OpExecutionContext, refused: Sequence[Refusal]) -> None:
    """Each refusal in the run's log with the traceback of the error (the console shows its one line)."""
    for refusal in refused:
        trace = "".join(traceback.format_exception(refusal.error)) if refusal.error else ""
        context.log.error(f"refused {refusal.delivery}: {refusal.reason}\n{trace}")


def focus_costs_asset(sources: Sequence[AssetKey]) -> AssetsDefinition:
    """``focus/costs``, downstream of the observed export ``sources``: plan the partition's loads, stage the parts
    of each delivery of several in steps of their own (with ``part_steps``), then audit and publish."""
    upstream = {f"source_{number}": key for number, key in enumerate(sources)}
    checks = {spec.get_python_identifier(): spec for spec in FOCUS_CHECKS}

    @graph(name=FOCUS_KEY.to_python_identifier(), ins={name: GraphIn() for name in upstream},
           out={"result": GraphOut(), **{name: GraphOut() for name in checks}})  # fmt: skip
    def focus_costs(**observed: Any) -> dict[str, Any]:
        loads, parts = plan_deliveries(after=list(observed.values()))
        published = publish_deliveries(loads, parts.map(stage_delivery_part).collect())
        return {name: getattr(published, name) for name in ("result", *checks)}

    return AssetsDefinition.from_graph(
        focus_costs,
        keys_by_input_name=upstream,
        keys_by_output_name={"result": FOCUS_KEY},
        partitions_def=INGESTION_PARTITIONS,
        group_name="normalize",
        check_specs=FOCUS_CHECKS,
        descriptions_by_output_name={
            "result": "FOCUS 1.2 rows of one billing month of one provider, replaced by the newest deliveries."
        },
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
TELEMETRY_KEY = ["telemetry", "gpu_activity"]
SPLIT_KEY = ["allocation", "cost_split"]


@multi_asset(
    specs=[
        AssetSpec(
            TELEMETRY_KEY,
            group_name="telemetry",
            description="Jobs and hourly GPU activity of the billing month from every configured telemetry source "
            "(gpu.jobs, gpu.usage).",
        ),
        AssetSpec(
            SPLIT_KEY,
            # Dagster maps the month dimension of the ingestion partitions onto the monthly partitions by default.
            deps=[FOCUS_KEY, TELEMETRY_KEY],
            group_name="allocation",
            description="Every FOCUS charge of the month split into run/idle/checkpoint_storage/egress/other"
            " per team and job, priced by the month's GPU activity.",
        ),
        *(
            AssetSpec(key, deps=[SPLIT_KEY], group_name="showback", description=f"Showback table {'.'.join(key)}.")
            for key in SHOWBACK_KEYS
        ),
    ],
    partitions_def=BILLING_MONTHS,
    op_tags=WRITER_TAGS,
    check_specs=[
        AssetCheckSpec(
            "split_reconciliation",
            asset=SPLIT_KEY,
            blocking=True,
            description="Each charge's pieces sum exactly to its BilledCost and EffectiveCost, signs kept; "
            "showback totals per currency equal FOCUS EffectiveCost.",
        ),
        AssetCheckSpec(
            "gpu_attribution",
            asset=SPLIT_KEY,
            description="No node held more GPUs than it has, and every job's GPU cost was priced by its own "
            "activity (job label or GPU index) rather than node-level activity shared between jobs.",
        ),
    ],
    name="allocation_and_showback",
)
def allocation_and_showback(
    context: AssetExecutionContext, warehouse: WarehouseResource
) -> Iterator[MaterializeResult | AssetCheckResult]:
    month = context.partition_key
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
        asset_key=TELEMETRY_KEY,
        metadata={
            "sources": {
                load.source: {"jobs": load.jobs, "activity_rows": load.activity_rows, "read": load.read}
                for load in loads
            },
            "notes": notes,
        },
    )
    yield MaterializeResult(
        asset_key=SPLIT_KEY, metadata={"split_rows": result.split_rows, "usage_rows": result.usage_rows}
    )
    team_totals = {f"{team} {currency}": f"total {total}, idle {idle}" for team, currency, total, idle in totals}
    for key in SHOWBACK_KEYS:
        yield MaterializeResult(asset_key=key, metadata={"team_totals": team_totals} if key[1] == "team_month" else {})
    yield AssetCheckResult(
        check_name="split_reconciliation",
        asset_key=SPLIT_KEY,
        passed=not failures,
        severity=AssetCheckSeverity.ERROR,
        metadata={"failed_audits": {name: [str(row) for row in rows] for name, rows in failures.items()}},
    )
    yield AssetCheckResult(
        check_name="gpu_attribution",
        asset_key=SPLIT_KEY,
        passed=not result.notes,
        severity=AssetCheckSeverity.WARN,
        metadata={"notes": list(result.notes)},
    )


ADVICE_KEY = ["advice", "opportunities"]


@asset(
    key=ADVICE_KEY,
    deps=list(SHOWBACK_KEYS),
    group_name="advice",
    op_tags=WRITER_TAGS,
    description="ESTIMATES per completed run, session and GPU model (right-sizing, spot, checkpoint interval and "
    "retention, notebook auto-stop, owned vs rented) and the savings opportunities per team and month "
    "(advice.*), priced from the rate card; never part of a billed total (the stage refuses to commit if a "
    "billed, showback or chargeback sum moved).",
)
def advice_opportunities(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    home = warehouse.resolved_home()
    with closing(open_warehouse(home)) as con:
        result = advise(con, load_config(home).advice)
    if result.example_rates:
        context.log.warning("advice priced from the EXAMPLE rate card: set [advice] rate_card to your own prices")
    return MaterializeResult(metadata={"rows": result.rows, "example_rate_card": result.example_rates})


@asset(
    key=["chargeback", "months"],
    deps=[SHOWBACK_KEYS[0]],
    group_name="chargeback",
    op_tags=WRITER_TAGS,
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
    key=["chargeback", "statements"],
    deps=[chargeback_months],
    partitions_def=BILLING_MONTHS,
    group_name="chargeback",
    op_tags=WRITER_TAGS,
    description="The closed month's chargeback statement, issued (month close): a new version only when its "
    "figures changed since the latest; an open month is refused.",
)
def chargeback_statements(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    with closing(open_warehouse(warehouse.resolved_home())) as con:
        statement = issue_month(con, context.partition_key, lifecycle_now())
        issued = con.execute("SELECT count(*) FROM chargeback.statements").fetchone()
    return MaterializeResult(
        metadata={
            "version": statement.version,
            "issued_now": statement.new,
            "content_sha256": statement.content_sha256,
            "teams": statement.teams,
            "statements_in_warehouse": issued[0] if issued else 0,  # counted after this one was written
        }
    )


@asset(
    key=["publish", "analyst_duckdb"],
    deps=[*SHOWBACK_KEYS, advice_opportunities, chargeback_months, chargeback_statements],
    group_name="publish",
    op_tags=WRITER_TAGS,
    check_specs=[
        AssetCheckSpec(
            "source_freshness",
            asset=["publish", "analyst_duckdb"],
            description=f"Every source delivered something new within {STALE_AFTER_HOURS} hours.",
        )
    ],
    description="analyst.duckdb in the gpuledger home, rebuilt from the warehouse (FOCUS rows, split, showback, "
    "months, statements) and swapped in atomically once every check passed; the FOCUS rows also as Parquet "
    "under published/focus.",
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


@asset(
    key=["publish", "warehouse_vacuum"],
    deps=[analyst_duckdb],
    group_name="publish",
    op_tags=WRITER_TAGS,
    description="After the publish: the rows no reader sees (earlier owners' of a slice, loads that never published;"
    " older than the lease) removed from the warehouse, and every slice owner reconciled to its source again before"
    " the removal commits.",
)
def warehouse_vacuum(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    with closing(open_warehouse(warehouse.resolved_home())) as con:
        # on a lake loads may run beside this run; what they would have freed waits for a vacuum with none running
        loading = loads_in_progress(context.instance, datetime.now(UTC)) if is_lake(con) else []
        if loading:
            context.log.info(f"vacuum skipped while ingestion runs load: {', '.join(loading)}")
            return MaterializeResult(metadata={"rows_removed": 0, "skipped_for_loads": len(loading)})
        removed = vacuum(con)
    context.log.info(f"vacuum removed {removed.rows} invisible rows of {removed.deliveries} deliveries")
    return MaterializeResult(
        metadata={"rows_removed": removed.rows, "slices": removed.slices, "deliveries": removed.deliveries}
    )


@asset(
    key=["reports", "chargeback_report"],
    deps=[chargeback_statements, analyst_duckdb],
    partitions_def=BILLING_MONTHS,
    group_name="reports",
    description="The closed month's latest issued statement rendered into reports/YYYY-MM/vN in the gpuledger "
    "home: index.html, statement.pdf (where pango is installed), a CSV and XLSX per team, statement.json (what "
    "`gpuledger report` writes).",
)
def chargeback_report(context: AssetExecutionContext, warehouse: WarehouseResource) -> MaterializeResult:
    # report_month takes the home's run lock itself: the month close runs it outside a `gpuledger run`
    report = report_month(warehouse.resolved_home(), context.partition_key)
    return MaterializeResult(
        metadata={
            "version": report.version,
            "issued_now": report.issued_now,
            "folder": str(report.folder),
            "files": [path.name for path in report.files],
            "pending_adjustments": report.pending_adjustments,
            "pdf_missing": report.pdf_missing,  # the UI shows why the files list no PDF
        }
    )


STATEMENT_ASSETS = [chargeback_statements, analyst_duckdb, chargeback_report]


focus_ingestion = define_asset_job(
    INGESTION_JOB,
    selection=[FOCUS_KEY],
    description="Nightly: load a billing month's deliveries (on a lake with several workers, a delivery's parts a "
    "step each).",
    tags=LOADER_TAGS,
)  # the code location's executor: on a lake with several workers, steps in processes of their own
monthly_allocation = define_asset_job(
    ALLOCATION_JOB,
    selection=[allocation_and_showback],
    description="Nightly: telemetry, the split and showback of a billing month.",
    tags=WRITER_TAGS,
    executor_def=in_process_executor,
)
publishing = define_asset_job(
    PUBLISH_JOB,
    selection=[advice_opportunities, chargeback_months, analyst_duckdb, warehouse_vacuum],
    description="Nightly: the advice estimates, month states, the analyst file, then the warehouse's vacuum.",
    tags=WRITER_TAGS,
    executor_def=in_process_executor,
)
month_close = define_asset_job(
    MONTH_CLOSE_JOB,
    selection=STATEMENT_ASSETS,
    description="Month close: issue a closed month's statement, publish it to analysts, render its reports.",
    tags=WRITER_TAGS,
    executor_def=in_process_executor,
)
observe_sources = define_asset_job(
    "observe_sources",
    selection=AssetSelection.groups("sources"),
    description="Observe every configured export and telemetry source (their data versions).",
    executor_def=in_process_executor,
)


# What the sensors request: a batch's ingestion runs; the barrier then requests the split and the publish.
DOWNSTREAM_JOBS = [focus_ingestion, publishing]


def delivery_sensor(source_name: str) -> SensorDefinition:
    """Sync one remote source; each delivery it lands requests the FOCUS partition of its month and provider, in one
    batch (the barrier then requests the split of its months and a publish).

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
        months = sorted({str(e.billing_period) for e in new})
        requests = batch_requests(key, [(str(e.billing_period), source.provider) for e in new]) if new else []
        return SensorResult(
            run_requests=requests,
            cursor=json.dumps(len(entries)),
            dynamic_partitions_requests=[BILLING_MONTHS.build_add_request(months)] if months else [],
        )

    return deliveries


@op(tags=WRITER_TAGS, retry_policy=RetryPolicy(max_retries=2, delay=300, backoff=Backoff.EXPONENTIAL))
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


@job(
    description="Land every remote source's new deliveries, then refresh the months still open (refresh sensors).",
    tags=WRITER_TAGS,
    executor_def=in_process_executor,
)
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
    """The nightly refresh: every provider with a source, for each month not closed yet, as one batch.

    Open months change every night even without a new delivery (telemetry grows, the provider restates)."""
    config = load_config(home)
    providers = sorted({s.provider for s in config.sources})
    months = refreshable_months(config.months, lifecycle_now())
    return batch_requests(f"nightly:{run_id}", [(m, p) for m in months for p in providers])


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
        home = warehouse.resolved_home()
        add_billing_months(context.instance, refreshable_months(load_config(home).months, lifecycle_now()))
        return refresh_requests(home, context.dagster_run.run_id)

    return refresh


@sensor(
    name="ingestion_barrier",
    jobs=[monthly_allocation, publishing],
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
)
def ingestion_barrier(context: SensorEvaluationContext) -> SensorResult | SkipReason:
    """Each batch's split once every ingestion run of it succeeded, then its publish once every split did."""
    tick = barrier_tick(context.instance, datetime.now(UTC))
    for reason in tick.waiting:
        context.log.info(reason)
    if tick.requests:
        return SensorResult(run_requests=tick.requests)
    return SkipReason("; ".join(tick.waiting) or "no batch is waiting for its next stage")


def build_definitions(home: Path | None = None, *, in_process: bool = False) -> Definitions:
    """The code location of ``home`` (None: the home ``resolve_home`` chooses): the stage assets, with its
    configured export and telemetry sources observed upstream of ingestion and telemetry, the jobs, the
    nightly schedule and the sensors. On a lake with ``[warehouse] workers`` > 1 the ingestion job stages a
    delivery's parts in steps of their own, that many at once, unless ``in_process`` (the command line's runner
    executes every job in its own process, and stages parts in a pool of processes instead)."""
    config = load_config(resolve_home(home))
    step_processes = 1 if in_process else load_warehouse_config(resolve_home(home)).workers
    exports = [export_source_key(s.name) for s in config.sources]
    telemetry = [telemetry_source_key(t.name) for t in config.telemetry]
    ingestion = focus_costs_asset(exports)
    allocation = allocation_and_showback.map_asset_specs(
        lambda spec: spec.merge_attributes(deps=telemetry) if spec.key.path == TELEMETRY_KEY else spec
    )
    sources = source_assets(config)
    return Definitions(
        assets=[
            *sources,
            ingestion,
            allocation,
            advice_opportunities,
            chargeback_months,
            *STATEMENT_ASSETS,
            warehouse_vacuum,
        ],
        jobs=[
            focus_ingestion,
            monthly_allocation,
            publishing,
            month_close,
            nightly_sync,
            *([observe_sources] if sources else []),
        ],
        schedules=[nightly],
        sensors=[
            *(delivery_sensor(s.name) for s in remote_sources(config.sources)),
            refresh_sensor(DagsterRunStatus.SUCCESS),
            refresh_sensor(DagsterRunStatus.FAILURE),
            ingestion_barrier,
        ],
        resources={
            "warehouse": WarehouseResource(home="" if home is None else str(home), part_steps=step_processes > 1)
        },
        # a run's steps in its one process: steps in processes of their own would each open the warehouse, and a
        # DuckDB file takes one writing process (the runner executes in process too); every job but ingestion says
        # so itself, so that on a lake with several workers a delivery's parts are steps in processes of their own
        executor=multiprocess_executor.configured({"max_concurrent": step_processes})
        if step_processes > 1
        else in_process_executor,
    )


defs = build_definitions()
