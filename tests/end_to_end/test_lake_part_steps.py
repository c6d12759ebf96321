"""A delivery's parts as Dagster steps: on a lake with several workers, the code location's ingestion job stages each
file part of a delivery in a step of its own (the multiprocess executor here; a step executor such as
``k8s_job_executor`` puts each on a machine of its own), then audits and publishes once every part step succeeded.
A part step that dies fails the run with nothing visible, and re-executing the run from the failure stages only
that part; a part whose rows the vacuum removed meanwhile is refused, not published short (docs/decisions/0022)."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from dagster import (
    DagsterEventType,
    DagsterInstance,
    JobDefinition,
    JobExecutionResult,
    ReexecutionOptions,
    execute_job,
    reconstructable,
)

from gpuledger.gates.vacuum import vacuum
from gpuledger.warehouse.failpoints import FAILPOINT_ENV
from gpuledger.warehouse.home import HOME_ENV, open_warehouse
from gpuledger_demo.setup import write_two_provider_home
from models.config import CONFIG_FILE, WAREHOUSE_ENVIRONMENT
from pipelines.batches import INGESTION_JOB, PART_STAGING_POOL, ingestion_partition_key
from pipelines.definitions import add_billing_months, build_definitions
from pipelines.deliveries import load_month
from pipelines.runner import dagster_instance
from tests.conftest import focus_rows_of_month
from tests.fixtures.lake_servers import postgres

pytestmark = [pytest.mark.serial, pytest.mark.slow]

MONTHS = ("2026-09", "2026-10", "2026-11")
AWS_SOURCE = "helios-legacy-cur"
"""Its months are CUR 1 assemblies of two files: two parts each with ``part_size_mb = 0``."""


def code_location_ingestion() -> JobDefinition:
    """The ingestion job as the code location (``$GPULEDGER_HOME``) defines it, rebuilt in every step process."""
    return build_definitions().resolve_job_def(INGESTION_JOB)


@dataclass(frozen=True)
class PartSteps:
    home: Path
    instance: DagsterInstance
    reference: dict[str, list[tuple[object, ...]]]
    """Per month, the FOCUS rows a load of the same files published on the file warehouse (AWS's only: the only
    provider either home loads)."""

    def ingest(self, month: str, *, after_failure_of: str | None = None) -> JobExecutionResult:
        """The AWS partition of ``month`` loaded as the daemon would launch it: the job rebuilt from the code
        location, its steps in processes of their own; or the failed run ``after_failure_of`` re-executed."""
        key = ingestion_partition_key(month, "aws")
        dimensions = {f"dagster/partition/{name}": value for name, value in key.keys_by_dimension.items()}
        again = ReexecutionOptions.from_failure(after_failure_of, self.instance) if after_failure_of else None
        return execute_job(
            reconstructable(code_location_ingestion),
            self.instance,
            tags={"dagster/partition": str(key), **dimensions},
            reexecution_options=again,
        )

    def visible(self, month: str) -> pa.Table:
        """The FOCUS rows of ``month`` readers see now."""
        with closing(open_warehouse(self.home)) as con:
            return focus_rows_of_month(con, self.home, month)


@pytest.fixture(scope="module")
def part_steps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PartSteps]:
    base = tmp_path_factory.mktemp("part-steps")
    home, reference_home = base / "home", base / "reference"
    write_two_provider_home(home, MONTHS)
    shutil.copytree(home, reference_home, symlinks=True)
    with pytest.MonkeyPatch.context() as env, postgres() as server:
        for variable in WAREHOUSE_ENVIRONMENT.values():  # the reference is the file warehouse, whatever the session's
            env.delenv(variable, raising=False)
        with closing(open_warehouse(reference_home)) as con:
            for month in MONTHS:
                load_month(con, reference_home, "aws", month)
            reference = {month: focus_rows_of_month(con, reference_home, month) for month in MONTHS}
            assert all(reference.values())  # every month has rows to compare with
        server.create_database("gpuledger")
        with (home / CONFIG_FILE).open("a", encoding="utf-8") as config:
            config.write(
                f'\n[warehouse]\ncatalog = "{server.catalog("gpuledger")}"\ndata_path = "lake/data"\n'
                "workers = 2\npart_size_mb = 0\n"
            )
        env.setenv(HOME_ENV, str(home))  # the step processes build the code location of this home
        env.setenv("DAGSTER_HOME", str(base / "dagster"))
        with dagster_instance(home) as instance:
            add_billing_months(instance, list(MONTHS))
            yield PartSteps(home, instance, reference)


def _steps(result: JobExecutionResult, event: DagsterEventType) -> dict[str, int]:
    """Step key -> the pid of the process that reported ``event`` for it."""
    return {e.step_key: e.pid for e in result.all_events if e.event_type == event and e.step_key}  # type: ignore[misc]


def _first_events(result: JobExecutionResult, event: DagsterEventType, steps: list[str]) -> list[int]:
    """Where in the run's events each of ``steps`` first reported ``event``."""
    seen = {}
    for number, e in enumerate(result.all_events):
        if e.event_type == event and e.step_key in steps:
            seen.setdefault(e.step_key, number)
    return list(seen.values())


def _part_steps(keys: object) -> list[str]:
    return sorted(key for key in keys if ".stage_delivery_part[" in key)  # type: ignore[attr-defined]


def test_each_part_of_a_delivery_is_staged_by_a_step_in_a_process_of_its_own(part_steps: PartSteps) -> None:
    result = part_steps.ingest("2026-10")
    assert result.success
    started = _steps(result, DagsterEventType.STEP_START)
    parts = _part_steps(started)
    assert len(parts) == 2  # the assembly's two files
    assert len(set(started.values())) == len(started) == 4  # plan, two parts, publish: a process per step
    # both part steps' processes were launched before either part was staged: they ran side by side
    launched = _first_events(result, DagsterEventType.STEP_WORKER_STARTING, parts)
    staged = _first_events(result, DagsterEventType.STEP_SUCCESS, parts)
    assert len(launched) == len(staged) == 2 and max(launched) < min(staged)
    materialized = result.asset_materializations_for_node("focus__costs")
    assert materialized[0].metadata["parts_staged_by_steps"].value == 2
    assert part_steps.visible("2026-10") == part_steps.reference["2026-10"]


def test_a_dead_part_step_fails_the_run_unseen_and_rerunning_it_stages_that_part_alone(
    part_steps: PartSteps,
) -> None:
    with pytest.MonkeyPatch.context() as env:
        env.setenv(FAILPOINT_ENV, f"load:part-staged@{AWS_SOURCE}:2")
        failed = part_steps.ingest("2026-11")
    assert not failed.success
    assert part_steps.visible("2026-11").num_rows == 0  # part 1 is staged, nothing is published
    again = part_steps.ingest("2026-11", after_failure_of=failed.run_id)
    assert again.success
    rerun = _steps(again, DagsterEventType.STEP_START)
    assert [k for k in rerun if ".stage_delivery_part[" in k] == [k for k in _part_steps(rerun) if k.endswith("part2]")]
    assert not any(k.endswith(".plan_deliveries") for k in rerun)  # the plan (and part 1's rows) kept
    # the part steps' pool holds as many slots as workers, and the killed step's slot was given back
    pool = part_steps.instance.event_log_storage.get_concurrency_info(PART_STAGING_POOL)
    assert (pool.slot_count, pool.claimed_slots) == (2, [])
    assert part_steps.visible("2026-11") == part_steps.reference["2026-11"]


def test_a_part_the_vacuum_removed_before_the_reexecution_is_refused_not_published_short(part_steps: PartSteps) -> None:
    with pytest.MonkeyPatch.context() as env:
        env.setenv(FAILPOINT_ENV, f"load:part-staged@{AWS_SOURCE}:2")
        failed = part_steps.ingest("2026-09")
    with closing(open_warehouse(part_steps.home)) as con:
        removed = vacuum(con, lease=dt.timedelta(0))  # part 1's staged rows: unowned, older than no lease
    assert removed.rows > 0
    again = part_steps.ingest("2026-09", after_failure_of=failed.run_id)
    assert not again.success
    (failure,) = [e for e in again.all_events if e.event_type == DagsterEventType.STEP_FAILURE]
    assert failure.step_key and failure.step_key.endswith(".publish_deliveries")
    assert "the warehouse holds" in str(failure.event_specific_data.error)  # type: ignore[union-attr]
    assert part_steps.visible("2026-09").num_rows == 0
    assert part_steps.ingest("2026-09").success  # a new run plans and stages the whole delivery again
    assert part_steps.visible("2026-09") == part_steps.reference["2026-09"]
