"""Run the pipeline through Dagster from the command line (what the nightly schedule does)."""

from __future__ import annotations

import os
import shutil
import sys
from contextlib import closing
from pathlib import Path

from dagster import AssetCheckSeverity, AssetsDefinition, DagsterInstance, MultiPartitionKey, materialize

from connectors.sync import remote_sources, sync_source
from gpuledger.errors import GpuledgerError
from gpuledger.pipeline import billing_months, deliveries_for, exclusive_run, open_warehouse
from models.config import load_config
from pipelines.definitions import (
    PROVIDERS,
    WarehouseResource,
    allocation_and_showback,
    analyst_duckdb,
    chargeback_months,
    focus_costs,
    ingestion_partition_key,
)

# The run's events stay in the Dagster instance; the console shows warnings and errors only.
QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
PROJECT_DAGSTER_YAML = Path(__file__).resolve().parent.parent / "dagster.yaml"


def dagster_instance(home: Path) -> DagsterInstance:
    """``$DAGSTER_HOME`` when set, else ``<home>/dagster`` seeded with the project's dagster.yaml."""
    dagster_home = Path(os.environ.get("DAGSTER_HOME") or home / "dagster")
    dagster_home.mkdir(parents=True, exist_ok=True)
    if not (dagster_home / "dagster.yaml").exists():
        shutil.copyfile(PROJECT_DAGSTER_YAML, dagster_home / "dagster.yaml")
    return DagsterInstance.from_config(str(dagster_home))


def run_pipeline(home: Path) -> list[tuple[str, str]]:
    """Sync the remote sources, materialize the FOCUS partition of every (billing month, provider) that has a
    delivery, then the split and showback of every billing month with FOCUS rows."""
    with exclusive_run(home):
        return _run(home)


def _run(home: Path) -> list[tuple[str, str]]:
    for source in remote_sources(load_config(home).sources):
        sync_source(source)
    partitions = sorted(
        {(d.billing_period or "", provider) for provider in PROVIDERS for d in deliveries_for(home, provider)}
    )
    resources = {"warehouse": WarehouseResource(home=str(home))}
    with dagster_instance(home) as instance:
        for month, provider in partitions:
            _materialize(
                instance, focus_costs, ingestion_partition_key(month, provider), resources, f"{provider} {month}"
            )
        with closing(open_warehouse(home)) as con:
            months = billing_months(con)
        for month in months:
            _materialize(instance, allocation_and_showback, f"{month}-01", resources, f"allocation {month}")
        _materialize(instance, [chargeback_months, analyst_duckdb], None, resources, "publishing")
    return partitions + [(month, "allocation") for month in months]


def _materialize(
    instance: DagsterInstance,
    assets: AssetsDefinition | list[AssetsDefinition],
    partition_key: str | MultiPartitionKey | None,
    resources: dict[str, WarehouseResource],
    what: str,
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
        raise GpuledgerError(f"Dagster run {result.run_id} for {what} failed: {_failure(result)}")
    failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
    errors = [c.check_name for c in failed if c.severity == AssetCheckSeverity.ERROR]
    if errors:
        raise GpuledgerError(f"{what}: checks failed: {', '.join(errors)}")
    for check in failed:  # warnings (a stale source) do not stop the run, but are never silent
        print(f"gpuledger: warning: {what}: check {check.check_name} failed: {check.metadata}", file=sys.stderr)


def _failure(result: object) -> str:
    for event in getattr(result, "all_events", []):
        if event.is_failure and event.step_failure_data is not None:
            error = event.step_failure_data.error
            return error.message.strip() if error else "unknown error"
    return "unknown error"
