"""Run the pipeline through Dagster from the command line (what the nightly schedule does).

The console stays quiet: a run's events stay in the Dagster instance, a failed run's log is written to
``<home>/logs/`` and the error that stopped it is raised as one line (:class:`RunFailed`). Each run's outcome is
recorded in ``<home>/run-status.json`` for ``gpuledger status``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from contextlib import closing
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from dagster import AssetCheckSeverity, AssetsDefinition, DagsterInstance, MultiPartitionKey, materialize

from connectors.ledger import write_atomically
from connectors.sync import remote_sources, sync_source
from gpuledger.gates.load import held_deliveries
from gpuledger.gates.verdicts import published_months
from gpuledger.warehouse.home import exclusive_run, open_warehouse
from models.config import load_config
from models.errors import GpuledgerError
from models.formats import PROVIDERS
from pipelines.definitions import (
    WarehouseResource,
    allocation_and_showback,
    analyst_duckdb,
    chargeback_months,
    focus_costs,
    ingestion_partition_key,
)
from pipelines.deliveries import deliveries_for

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
    """(month, provider or "allocation") materialized, in order."""
    held: dict[str, list[str]]
    """Deliveries held for ``gpuledger accept``, with why."""


# The top-level dagster.yaml, shipped in the package through the pipelines/dagster.yaml link.
PROJECT_DAGSTER_YAML = files("pipelines") / "dagster.yaml"


def dagster_instance(home: Path) -> DagsterInstance:
    """``$DAGSTER_HOME`` when set, else ``<home>/dagster`` seeded with the project's dagster.yaml."""
    dagster_home = Path(os.environ.get("DAGSTER_HOME") or home / "dagster")
    dagster_home.mkdir(parents=True, exist_ok=True)
    if not (dagster_home / "dagster.yaml").exists():
        (dagster_home / "dagster.yaml").write_bytes(PROJECT_DAGSTER_YAML.read_bytes())
    return DagsterInstance.from_config(str(dagster_home))


def run_pipeline(home: Path) -> RunOutcome:
    """Sync the remote sources, materialize the FOCUS partition of every (billing month, provider) that has a
    delivery, then the split and showback of every billing month with FOCUS rows; record the outcome."""
    with exclusive_run(home):
        started = _now()
        try:
            partitions = _run(home)
        except GpuledgerError as exc:
            log = getattr(exc, "log", None)
            _record_run(home, started, "failed", error=str(exc), log=str(log) if log else None)
            raise
        with closing(open_warehouse(home)) as con:
            held = {delivery: [h.describe() for h in holds] for delivery, holds in held_deliveries(con).items()}
        _record_run(home, started, "held" if held else "ok", held=held)
        return RunOutcome(partitions, held)


def last_run(home: Path) -> dict[str, Any] | None:
    """What :func:`run_pipeline` recorded last (readable while a run holds the warehouse)."""
    path = home / RUN_STATUS_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _record_run(home: Path, started: str, outcome: str, **details: object) -> None:
    status = {"started_at": started, "finished_at": _now(), "outcome": outcome, **details}
    write_atomically(home / RUN_STATUS_FILE, json.dumps(status, indent=2).encode())


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _run(home: Path) -> list[tuple[str, str]]:
    for source in remote_sources(load_config(home).sources):
        sync_source(source)
    partitions = sorted(
        {(d.billing_period or "", provider) for provider in PROVIDERS for d in deliveries_for(home, provider)}
    )
    resources = {"warehouse": WarehouseResource(home=str(home))}
    with dagster_instance(home) as instance:
        for month, provider in partitions:
            key = ingestion_partition_key(month, provider)
            _materialize(instance, focus_costs, key, resources, f"{provider} {month}", home)
        with closing(open_warehouse(home)) as con:
            months = published_months(con)
        for month in months:
            _materialize(instance, allocation_and_showback, f"{month}-01", resources, f"allocation {month}", home)
        _materialize(instance, [chargeback_months, analyst_duckdb], None, resources, "publishing", home)
    return partitions + [(month, "allocation") for month in months]


def _materialize(
    instance: DagsterInstance,
    assets: AssetsDefinition | list[AssetsDefinition],
    partition_key: str | MultiPartitionKey | None,
    resources: dict[str, WarehouseResource],
    what: str,
    home: Path,
) -> None:
    result = materialize(
        assets if isinstance(assets, list) else [assets],
        instance=instance,
        partition_key=partition_key,
        resources=resources,
        run_config=QUIET_CONSOLE,
        raise_on_error=False,
    )
    if not result.success:
        log = _write_log(instance, home, result.run_id, what)
        raise RunFailed(_failure(result), what, log)
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    errors = [c.check_name for c in failed if c.severity == AssetCheckSeverity.ERROR]
    if errors:
        log = _write_log(instance, home, result.run_id, what)
        raise RunFailed(f"checks failed: {', '.join(errors)}", what, log)
    for check in failed:  # warnings do not stop the run, but are never silent (held deliveries: in the summary)
        if check.check_name != "held_deliveries":
            for line in _warning_lines(check.metadata):
                print(f"gpuledger: warning: {what}: {line}", file=sys.stderr)


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
