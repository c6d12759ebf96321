"""Run the pipeline through Dagster from the command line (what the nightly schedule does)."""

from __future__ import annotations

import os
import shutil
from contextlib import closing
from pathlib import Path

from dagster import AssetsDefinition, DagsterInstance, MultiPartitionKey, materialize

from connectors.sync import remote_sources, sync_source
from gpuledger.errors import GpuledgerError
from gpuledger.pipeline import billing_months, deliveries_for, open_warehouse
from models.config import load_config
from pipelines.definitions import (
    PROVIDERS,
    WarehouseResource,
    allocation_and_showback,
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
    return partitions + [(month, "allocation") for month in months]


def _materialize(
    instance: DagsterInstance,
    assets: AssetsDefinition,
    partition_key: str | MultiPartitionKey,
    resources: dict[str, WarehouseResource],
    what: str,
) -> None:
    result = materialize(
        [assets],
        instance=instance,
        partition_key=partition_key,
        resources=resources,
        run_config=QUIET_CONSOLE,
        raise_on_error=False,
    )
    if not result.success:
        raise GpuledgerError(f"Dagster run {result.run_id} for {what} failed: {_failure(result)}")
    failed_checks = [c.check_name for c in result.get_asset_check_evaluations() if not c.passed]
    if failed_checks:
        raise GpuledgerError(f"{what}: checks failed: {', '.join(failed_checks)}")


def _failure(result: object) -> str:
    for event in getattr(result, "all_events", []):
        if event.is_failure and event.step_failure_data is not None:
            error = event.step_failure_data.error
            return error.message.strip() if error else "unknown error"
    return "unknown error"
