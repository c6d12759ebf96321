"""Run the pipeline through Dagster from the command line (what the nightly schedule does).

Each stage prints one line on stdout as it starts (``loading aws 2026-11 ...``); Dagster's events stay in the
instance, where the runs show as the named jobs of the nightly run (``observe_sources``, ``focus_ingestion``,
``monthly_allocation``, ``publishing``). A failed run's log is written to ``<home>/logs/`` and the error that
stopped it is raised as one line (:class:`RunFailed`). Each run's outcome is recorded in ``<home>/run-status.json``
for ``gpuledger status``.
"""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial
from importlib.resources import files
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import duckdb
import yaml
from dagster import (
    AssetCheckSeverity,
    DagsterInstance,
    DagsterRunStatus,
    Definitions,
    ExecuteInProcessResult,
    MultiPartitionKey,
    RunsFilter,
)

from connectors.ledger import write_atomically
from connectors.sync import remote_sources, sync_source
from gpuledger.gates.load import held_deliveries
from gpuledger.gates.refusals import standing_refusals
from gpuledger.gates.verdicts import published_months
from gpuledger.reports.report import Report
from gpuledger.warehouse.home import exclusive_run, open_warehouse
from models.config import load_config, load_warehouse_config
from models.errors import GpuledgerError, RemoteError
from models.formats import PROVIDERS
from pipelines.batches import (
    ALLOCATION_JOB,
    BATCH_TAG,
    INGESTION_JOB,
    MONTH_CLOSE_JOB,
    PUBLISH_JOB,
    ingestion_partition_key,
    instance_settings,
)
from pipelines.definitions import add_billing_months, build_definitions
from pipelines.deliveries import deliveries_for
from pipelines.inputs import (
    INPUTS_TAG,
    allocation_inputs,
    ingestion_inputs,
    instance_folder,
    last_success,
    month_holds,
    publishing_inputs,
)

# The run's events stay in the Dagster instance (and a failed run's in <home>/logs/): the console shows none.
QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
LOG_FOLDER = "logs"
RUN_STATUS_FILE = "run-status.json"
"""``<home>/run-status.json``: the last ``gpuledger run`` (when, what it ran, failed or held), for ``status``."""


class RunFailed(GpuledgerError):
    """A step of the run failed: ``str()`` is the error that stopped it, one line; ``context`` says where."""

    def __init__(self, reason: str, what: str, log: Path) -> None:
        super().__init__(reason)
        self.context = f"{what} failed; Dagster's log of the run: {log}"
        self.log = log


@dataclass(frozen=True)
class RunOutcome:
    partitions: list[tuple[str, str]]
    """(month, provider, "allocation" or "publishing") materialized, in order."""
    held: dict[str, list[str]]
    """Deliveries held for ``gpuledger accept``, with why."""
    skipped: list[tuple[str, str]]
    """(month, provider, "allocation" or "publishing") not run: a successful run had read the same inputs."""
    refused: list[str]
    """Why each delivery that stands refused was: the rest of the run went on without it."""
    unsynced: list[str]
    """Remote sources the run could not sync, and why: it went on with what each had landed before."""


# The top-level dagster.yaml, shipped in the package through the pipelines/dagster.yaml link.
PROJECT_DAGSTER_YAML = files("pipelines") / "dagster.yaml"
_SEEDED_HEADER = b"# Seeded by gpuledger from its dagster.yaml with the run limits of [warehouse] workers (a lake).\n"


def dagster_home(home: Path) -> Path:
    """The Dagster instance's folder (:func:`instance_folder`), seeded with the project's dagster.yaml when it has
    none (on a lake with several workers, with their run limits)."""
    folder = instance_folder(home)
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "dagster.yaml").exists():
        workers = load_warehouse_config(home).workers
        template = PROJECT_DAGSTER_YAML.read_bytes()
        settings = yaml.safe_dump(instance_settings(yaml.safe_load(template), workers), sort_keys=False).encode()
        (folder / "dagster.yaml").write_bytes(template if workers == 1 else _SEEDED_HEADER + settings)
    return folder


def dagster_instance(home: Path) -> DagsterInstance:
    """The Dagster instance :func:`dagster_home` names."""
    return DagsterInstance.from_config(str(dagster_home(home)))


def run_pipeline(home: Path) -> RunOutcome:
    """Sync the remote sources, observe the configured sources, materialize the FOCUS partition of every (billing
    month, provider) that has a delivery, then the split and showback of every billing month with FOCUS rows,
    then publish; record the outcome."""
    with exclusive_run(home):
        started = _now()
        try:
            partitions, skipped, unsynced = _run(home)
        except GpuledgerError as exc:
            log = getattr(exc, "log", None)
            _record_run(home, started, "failed", error=str(exc), log=str(log) if log else None)
            raise
        with closing(open_warehouse(home)) as con:
            held = {delivery: [h.describe() for h in holds] for delivery, holds in held_deliveries(con).items()}
            refused = [refusal.reason for refusal in standing_refusals(con)]
        outcome = "refused" if refused or unsynced else "held" if held else "ok"
        _record_run(home, started, outcome, held=held, refused=refused, unsynced=unsynced)
        return RunOutcome(partitions, held, skipped, refused, unsynced)


def last_run(home: Path) -> dict[str, Any] | None:
    """What :func:`run_pipeline` recorded last (readable while a run holds the warehouse)."""
    path = home / RUN_STATUS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _record_run(home: Path, started: str, outcome: str, **details: object) -> None:
    status = {"started_at": started, "finished_at": _now(), "outcome": outcome, **details}
    write_atomically(home / RUN_STATUS_FILE, json.dumps(status, indent=2).encode())


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _run(home: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]:
    """The nightly run; returns the partitions run, those skipped because their inputs had not changed, and the
    remote sources that could not be synced (the run goes on with what each landed before)."""
    config = load_config(home)
    unsynced = []
    for source in remote_sources(config.sources):
        _starting(f"syncing {source.name}")
        try:
            sync_source(source)
        except RemoteError as exc:
            unsynced.append(f"source {source.name!r} not synced, its deliveries as last landed: {exc}")
    deliveries = {provider: deliveries_for(home, provider) for provider in PROVIDERS}
    partitions = sorted({(d.billing_period or "", provider) for provider, found in deliveries.items() for d in found})

    def ingestion_on(con: duckdb.DuckDBPyConnection, month: str, provider: str) -> str:
        in_month = [d for d in deliveries[provider] if d.billing_period == month]
        return ingestion_inputs(home, month, provider, in_month, month_holds(con, month))

    def ingestion(month: str, provider: str) -> str:
        with closing(open_warehouse(home)) as con:
            return ingestion_on(con, month, provider)

    month_inputs: dict[str, str | None] = {}

    def allocation(month: str) -> str | None:
        with closing(open_warehouse(home)) as con:
            month_inputs[month] = allocation_inputs(con, home, config, month)
        return month_inputs[month]

    def publishing() -> str | None:
        with closing(open_warehouse(home)) as con:
            return publishing_inputs(con, home, config, month_inputs)

    with dagster_instance(home) as instance:
        jobs = _StaleJobs(instance, build_definitions(home, in_process=True), home)
        add_billing_months(instance, [month for month, _ in partitions])
        with closing(open_warehouse(home)) as con:  # one for all: a nothing-new run is mostly this
            ingestion_now = {p: ingestion_on(con, *p) for p in partitions}  # once: it decides the observation too
        if (config.sources or config.telemetry) and any(
            not last_success(instance, INGESTION_JOB, inputs) for inputs in ingestion_now.values()
        ):
            _starting("observing sources")
            _execute(instance, jobs.definitions, "observe_sources", None, "observing sources", home)
        stale = [p for p, inputs in ingestion_now.items() if jobs.stale(INGESTION_JOB, p, inputs)]
        workers = load_warehouse_config(home).workers
        if workers > 1 and len(stale) > 1:
            jobs.run_in_workers(stale, workers, ingestion)
        else:
            for partition in stale:
                key = ingestion_partition_key(*partition)
                jobs.run(INGESTION_JOB, key, partition, partial(ingestion, *partition))
        with closing(open_warehouse(home)) as con:
            months = published_months(con)
        add_billing_months(instance, months)
        for month in months:
            if jobs.stale(ALLOCATION_JOB, (month, "allocation"), allocation(month)):
                jobs.run(ALLOCATION_JOB, month, (month, "allocation"), partial(allocation, month))
        if jobs.stale(PUBLISH_JOB, ("", "publishing"), publishing()):
            jobs.run(PUBLISH_JOB, None, ("", "publishing"), publishing)
    return jobs.ran, jobs.skipped, unsynced


_ALSO_DONE_BY = {PUBLISH_JOB: (MONTH_CLOSE_JOB,)}
"""Other jobs whose successful run on the same inputs leaves a job nothing to do: a month close publishes too."""


@dataclass
class _StaleJobs:
    """Runs a job's partition only when no successful run read the same inputs (pipelines/inputs.py)."""

    instance: DagsterInstance
    definitions: Definitions
    home: Path
    ran: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def stale(self, job: str, partition: tuple[str, str], inputs_now: str | None) -> bool:
        """Whether ``job`` must run for ``partition``: no successful run read the inputs ``inputs_now`` (its
        fingerprint now); says so when it is skipped."""
        done_by = (job, *_ALSO_DONE_BY.get(job, ()))
        if previous := next(filter(None, (last_success(self.instance, name, inputs_now) for name in done_by)), None):
            print(f"{_stage(job, partition)}: inputs unchanged since run {previous[:8]}, skipped", flush=True)
            self.skipped.append(partition)
            return False
        return True

    def run(
        self,
        job: str,
        key: str | MultiPartitionKey | None,
        partition: tuple[str, str],
        inputs: Callable[[], str | None],
    ) -> None:
        """Run ``job``'s partition in this process; ``inputs`` computes its fingerprint again once it is done."""
        what = _stage(job, partition)
        _starting(what)
        result = _execute(self.instance, self.definitions, job, key, what, self.home)
        self._done(partition, result.run_id, inputs())

    def run_in_workers(
        self, partitions: list[tuple[str, str]], workers: int, inputs: Callable[[str, str], str | None]
    ) -> None:
        """Load the ingestion ``partitions`` in ``workers`` processes at once (a lake takes many writers); returns
        once every one has ended, the first failure raised then: what follows never starts before all are in."""
        for partition in partitions:
            _starting(_stage(INGESTION_JOB, partition))
        with ThreadPoolExecutor(max_workers=workers) as pool:  # each thread waits on one worker process
            outcomes = list(pool.map(lambda p: _ingest_in_process(self.home, *p), partitions))
        for partition, (run_id, failure) in zip(partitions, outcomes, strict=True):
            if failure is None:
                self._done(partition, run_id, inputs(*partition))
        if failures := [failure for _, failure in outcomes if failure is not None]:
            reason, what, log = failures[0]
            raise RunFailed(reason, what, Path(log))

    def _done(self, partition: tuple[str, str], run_id: str, inputs_after: str | None) -> None:
        self.ran.append(partition)
        # tagged with the inputs as the run left them: the next run skips unless something changed since
        if inputs_after is not None:
            self.instance.add_run_tags(run_id, {INPUTS_TAG: inputs_after})


WorkerOutcome = tuple[str, tuple[str, str, str] | None]
"""A worker's ingestion run: its run id, and (reason, what, log) when it failed."""


def _ingest_in_process(home: Path, month: str, provider: str) -> WorkerOutcome:
    """One ingestion partition in a process of its own, so a worker killed midway (OOM, a lost machine) fails its
    partition alone; spawned, not forked: a fork would share this process's Dagster storage connections."""
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    # not daemonic: a worker stages a delivery's parts in processes of its own (docs/decisions/0021)
    worker = context.Process(target=_ingest_in_worker, args=(str(home), month, provider, send), daemon=False)
    worker.start()
    send.close()
    try:
        outcome: WorkerOutcome = receive.recv()
    except EOFError:  # the worker died before it answered: its run's events are in the instance
        worker.join()
        what = _stage(INGESTION_JOB, (month, provider))
        reason = f"its worker process died (exit code {worker.exitcode})"
        _fail_dead_workers_run(home, ingestion_partition_key(month, provider), reason)
        return "", (reason, what, str(dagster_home(home)))
    worker.join()
    return outcome


def _fail_dead_workers_run(home: Path, key: MultiPartitionKey, reason: str) -> None:
    """The run a dead worker started stays "started" in the instance: marked failed, so nothing waits on it (the
    vacuum waits for loads in progress). Runs the daemon launched (batch-tagged) are its run monitor's."""
    going = [DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]
    with dagster_instance(home) as instance:
        records = instance.get_run_records(
            RunsFilter(job_name=INGESTION_JOB, statuses=going, tags={"dagster/partition": str(key)})
        )
        for record in records:
            if BATCH_TAG not in record.dagster_run.tags:
                instance.report_run_failed(record.dagster_run, reason)


def _ingest_in_worker(home: str, month: str, provider: str, send: Connection) -> None:
    what = _stage(INGESTION_JOB, (month, provider))
    key = ingestion_partition_key(month, provider)
    with dagster_instance(Path(home)) as instance:
        try:
            definitions = build_definitions(Path(home), in_process=True)
            result = _execute(instance, definitions, INGESTION_JOB, key, what, Path(home))
            send.send((result.run_id, None))
        except RunFailed as failed:
            send.send(("", (str(failed), what, str(failed.log))))


_STAGES = {
    INGESTION_JOB: "loading {provider} {month}",
    ALLOCATION_JOB: "splitting {month}",
    PUBLISH_JOB: "publishing",
}


def _stage(job: str, partition: tuple[str, str]) -> str:
    """What ``job`` does for ``partition`` (month, provider), as the run's lines say it."""
    return _STAGES[job].format(month=partition[0], provider=partition[1])


def close_month(home: Path, month: str) -> Report:
    """Run the ``month_close`` job on closed billing month ``YYYY-MM``: issue its statement (unless its figures
    equal the latest version's), publish the analyst file, write its reports; the reports written. Not under the
    run lock: the report step takes it (a ``gpuledger run`` meanwhile fails that step, naming the run)."""
    with dagster_instance(home) as instance:
        add_billing_months(instance, [month])
        _starting(f"closing {month}")
        definitions = build_definitions(home, in_process=True)
        result = _execute(instance, definitions, MONTH_CLOSE_JOB, month, f"closing {month}", home)
        config = load_config(home)
        with closing(open_warehouse(home)) as con:  # what it published from: the next run's publish has nothing to do
            months = {m: allocation_inputs(con, home, config, m) for m in published_months(con)}
            published = publishing_inputs(con, home, config, months)
        if published is not None:
            instance.add_run_tags(result.run_id, {INPUTS_TAG: published})
    recorded = {
        event.asset_key.to_user_string(): {name: entry.value for name, entry in event.materialization.metadata.items()}
        for event in result.get_asset_materialization_events()
    }
    statement, report = recorded["chargeback/statements"], recorded["reports/chargeback_report"]
    folder = Path(report["folder"])
    # issued by the statements step (the report step renders what is issued); a refused publish fails the run
    return Report(
        month, report["version"], statement["issued_now"], folder, [folder / name for name in report["files"]],
        report["pending_adjustments"],
    )  # fmt: skip


def _starting(stage: str) -> None:
    """One line as a stage starts: a long run is never silent."""
    print(f"{stage} ...", flush=True)


def _execute(
    instance: DagsterInstance,
    definitions: Definitions,
    job_name: str,
    partition_key: str | MultiPartitionKey | None,
    what: str,
    home: Path,
) -> ExecuteInProcessResult:
    """Run one of the definitions' jobs in this process; a failed step or ERROR check raises :class:`RunFailed`."""
    result = definitions.resolve_job_def(job_name).execute_in_process(
        instance=instance, partition_key=partition_key, run_config=QUIET_CONSOLE, raise_on_error=False
    )
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    # A failed ERROR check blocks (fails) its step: name the checks, not Dagster's wrapper error.
    errors = [c.check_name for c in failed if c.severity == AssetCheckSeverity.ERROR]
    if errors or not result.success:
        log = _write_log(instance, home, result.run_id, what)
        raise RunFailed(f"checks failed: {', '.join(errors)}" if errors else _failure(result), what, log)
    for check in failed:  # warnings do not stop the run, but are never silent (held, refused: in the summary)
        if check.check_name == "refused_deliveries":
            log = _write_log(instance, home, result.run_id, what)
            print(f"gpuledger: {what} refused a delivery; Dagster's log of the run: {log}", file=sys.stderr)
        elif check.check_name != "held_deliveries":
            for line in _warning_lines(check.metadata):
                print(f"gpuledger: warning: {what}: {line}", file=sys.stderr)
    return result


def _warning_lines(metadata: dict[str, Any]) -> list[str]:
    """A warning check's metadata as lines a person reads: each item of a list on its own line."""
    lines: list[str] = []
    for key, entry in metadata.items():
        value = getattr(entry, "value", entry)
        lines.extend(map(str, value) if isinstance(value, list) else [f"{key}: {value}"])
    return lines


def _failure(result: Any) -> str:
    """The error that failed the run's step, as the code raised it (Dagster wraps it in its own)."""
    for event in result.all_events:
        if event.is_failure and event.step_failure_data is not None and event.step_failure_data.error:
            error = event.step_failure_data.error
            while error.cause is not None and error.cls_name.startswith("Dagster"):
                error = error.cause
            message = error.message.strip()
            # "models.errors.InputError: file, row 6, ...": the text after the class
            prefix = f"{error.cls_name}: "
            return message.split(prefix, 1)[1] if prefix in message else message
    return "the run failed without an error (see its log)"


def _write_log(instance: DagsterInstance, home: Path, run_id: str, what: str) -> Path:
    """The run's events, with every error's traceback, in ``<home>/logs/<time>-<what>.log``."""
    folder = home / LOG_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}-{what.replace(' ', '-')}-{run_id[:8]}.log"
    lines = [f"Dagster run {run_id}: {what}"]
    for entry in instance.all_logs(run_id):
        moment = dt.datetime.fromtimestamp(entry.timestamp, dt.UTC).isoformat(timespec="seconds")
        event = entry.dagster_event
        kind = event.event_type_value if event else "LOG"
        message = entry.user_message or (event.message if event else "")
        lines.append(f"{moment} {kind} {entry.step_key or '-'}: {message}")
        if event and event.is_step_failure and event.step_failure_data.error:
            lines.append(event.step_failure_data.error.to_string())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
