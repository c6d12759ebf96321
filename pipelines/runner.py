"""Run the pipeline through Dagster from the command line (what the nightly schedule does)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dagster import DagsterInstance, materialize

from gpuledger.errors import GpuledgerError
from gpuledger.pipeline import deliveries_for
from pipelines.definitions import PROVIDERS, WarehouseResource, focus_costs, ingestion_partition_key

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
    """Materialize the FOCUS partition of every (billing month, provider) that has a delivery."""
    partitions = sorted(
        {(d.billing_period, provider) for provider in PROVIDERS for d in deliveries_for(home, provider)}
    )
    with dagster_instance(home) as instance:
        for month, provider in partitions:
            assert month is not None  # configured sources always come with manifests naming the month
            result = materialize(
                [focus_costs],
                instance=instance,
                partition_key=ingestion_partition_key(month, provider),
                resources={"warehouse": WarehouseResource(home=str(home))},
                run_config=QUIET_CONSOLE,
                raise_on_error=False,
            )
            if not result.success:
                raise GpuledgerError(f"Dagster run {result.run_id} for {provider} {month} failed: {_failure(result)}")
            failed_checks = [c.check_name for c in result.get_asset_check_evaluations() if not c.passed]
            if failed_checks:
                raise GpuledgerError(f"{provider} {month}: checks failed: {', '.join(failed_checks)}")
    return [(month or "", provider) for month, provider in partitions]


def _failure(result: object) -> str:
    for event in getattr(result, "all_events", []):
        if event.is_failure and event.step_failure_data is not None:
            error = event.step_failure_data.error
            return error.message.strip() if error else "unknown error"
    return "unknown error"
