"""The barrier between a sensor batch's stages, on a real Dagster instance: allocation only after every ingestion run
of the batch succeeded, publish only after every allocation; and run limits that match the tags the jobs carry."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from dagster import DagsterInstance, DagsterRun, DagsterRunStatus, build_sensor_context

from pipelines.batches import (
    ALLOCATION_JOB,
    BATCH_TAG,
    INGESTION_JOB,
    LOAD_WINDOW,
    PART_STAGING_POOL,
    PUBLISH_JOB,
    barrier_tick,
    batch_requests,
    ingestion_partition_key,
    instance_settings,
    loads_in_progress,
)
from pipelines.definitions import defs, ingestion_barrier
from pipelines.runner import dagster_home
from tests.fixtures.paths import REPO

SLICES = [("2026-10", "aws"), ("2026-10", "gcp"), ("2026-11", "aws")]


@pytest.fixture
def instance() -> DagsterInstance:
    return DagsterInstance.ephemeral()


def _submit(instance: DagsterInstance, request_tags: dict[str, str], job: str, partition: object,
            status: DagsterRunStatus, **run: str) -> DagsterRun:  # fmt: skip
    """A run as the daemon would have created it from a request of the batch, in ``status``."""
    tags = dict(request_tags)
    if partition is not None:
        tags["dagster/partition"] = str(partition)
        keys = getattr(partition, "keys_by_dimension", {})
        tags.update({f"dagster/partition/{dimension}": key for dimension, key in keys.items()})
    dagster_run = DagsterRun(job_name=job, run_id=str(uuid.uuid4()), status=status, tags=tags, **run)
    instance.add_run(dagster_run)
    return dagster_run


def _ingest(instance: DagsterInstance, statuses: list[DagsterRunStatus]) -> list[DagsterRun]:
    requests = batch_requests("deliveries:test", SLICES)
    return [
        _submit(instance, dict(r.tags), INGESTION_JOB, ingestion_partition_key(*s), status)
        for r, s, status in zip(requests, SLICES, statuses, strict=True)
    ]


def _requested(instance: DagsterInstance) -> list[tuple[str | None, str | None]]:
    return [(r.job_name, r.partition_key) for r in barrier_tick(instance, datetime.now(UTC)).requests]


def test_a_sensor_requests_only_its_batch_s_ingestion_runs_and_an_empty_batch_publishes():
    requests = batch_requests("nightly:r1", [*SLICES, SLICES[0]])
    assert [(r.job_name, r.partition_key) for r in requests] == [
        (INGESTION_JOB, ingestion_partition_key(*s)) for s in SLICES
    ]
    assert {r.tags[BATCH_TAG] for r in requests} != {None} and len({r.tags[BATCH_TAG] for r in requests}) == 1
    assert all(r.tags["gpuledger/batch-size"] == "3" for r in requests)
    assert [r.job_name for r in batch_requests("nightly:r2", [])] == [PUBLISH_JOB]


@pytest.mark.parametrize(
    "last",
    [DagsterRunStatus.NOT_STARTED, DagsterRunStatus.STARTED, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED],
)
def test_no_split_while_one_ingestion_run_of_the_batch_has_not_succeeded(instance, last):
    _ingest(instance, [DagsterRunStatus.SUCCESS, DagsterRunStatus.SUCCESS, last])
    tick = barrier_tick(instance, datetime.now(UTC))
    assert tick.requests == []
    assert len(tick.waiting) == 1 and "ingestion" in tick.waiting[0]
    if last in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED):
        assert "failed for 2026-11|aws" in tick.waiting[0]


def test_no_split_before_every_requested_ingestion_run_exists(instance):
    requests = batch_requests("deliveries:test", SLICES)
    _submit(instance, dict(requests[0].tags), INGESTION_JOB, ingestion_partition_key(*SLICES[0]),
            DagsterRunStatus.SUCCESS)  # fmt: skip
    assert _requested(instance) == []


def test_the_batch_s_months_are_split_once_all_its_loads_succeeded_then_published_once_all_splits_did(instance):
    loads = _ingest(instance, [DagsterRunStatus.SUCCESS] * 3)
    assert _requested(instance) == [(ALLOCATION_JOB, "2026-10"), (ALLOCATION_JOB, "2026-11")]
    splits = barrier_tick(instance, datetime.now(UTC)).requests
    october = _submit(instance, dict(splits[0].tags), ALLOCATION_JOB, "2026-10", DagsterRunStatus.SUCCESS)
    assert _requested(instance) == [(ALLOCATION_JOB, "2026-11")]  # only what is not requested yet
    _submit(instance, dict(splits[1].tags), ALLOCATION_JOB, "2026-11", DagsterRunStatus.STARTED)
    assert _requested(instance) == []  # the publish waits for the last split
    _submit(instance, dict(splits[1].tags), ALLOCATION_JOB, "2026-11", DagsterRunStatus.SUCCESS)
    (publish,) = barrier_tick(instance, datetime.now(UTC)).requests
    assert (publish.job_name, publish.tags[BATCH_TAG]) == (PUBLISH_JOB, loads[0].tags[BATCH_TAG])
    assert publish.run_key and october.tags[BATCH_TAG] in publish.run_key
    _submit(instance, dict(publish.tags), PUBLISH_JOB, None, DagsterRunStatus.STARTED)
    assert _requested(instance) == []  # published: the batch is done


def test_a_failed_load_whose_new_attempt_succeeded_lets_the_batch_go_on(instance):
    loads = _ingest(instance, [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.SUCCESS])
    assert _requested(instance) == []
    failed = loads[1]
    # the run-retry policy's new attempt: the same tags, the parent named
    _submit(instance, dict(failed.tags), INGESTION_JOB, None, DagsterRunStatus.SUCCESS,
            parent_run_id=failed.run_id, root_run_id=failed.run_id)  # fmt: skip
    assert _requested(instance) == [(ALLOCATION_JOB, "2026-10"), (ALLOCATION_JOB, "2026-11")]


def test_runs_of_gpuledger_run_and_other_batches_do_not_count(instance):
    _ingest(instance, [DagsterRunStatus.SUCCESS, DagsterRunStatus.SUCCESS, DagsterRunStatus.STARTED])
    _submit(instance, {}, INGESTION_JOB, ingestion_partition_key("2026-11", "aws"), DagsterRunStatus.SUCCESS)
    other = batch_requests("deliveries:other", [("2026-12", "aws")])
    _submit(instance, dict(other[0].tags), INGESTION_JOB, ingestion_partition_key("2026-12", "aws"),
            DagsterRunStatus.SUCCESS)  # fmt: skip
    assert _requested(instance) == [(ALLOCATION_JOB, "2026-12")]


def test_the_barrier_sensor_is_in_the_definitions_and_requests_through_dagster(instance):
    _ingest(instance, [DagsterRunStatus.SUCCESS] * 3)
    assert defs.resolve_sensor_def("ingestion_barrier").default_status.value == "RUNNING"
    result = ingestion_barrier(build_sensor_context(instance=instance))
    assert [(r.job_name, r.partition_key) for r in result.run_requests] == [
        (ALLOCATION_JOB, "2026-10"),
        (ALLOCATION_JOB, "2026-11"),
    ]
    assert all(r.run_key for r in result.run_requests)  # Dagster never launches a run key twice


def _limits(settings: dict[str, object]) -> tuple[int, dict[str, int]]:
    runs = settings["concurrency"]["runs"]  # type: ignore[index]
    return runs["max_concurrent_runs"], {f"{x['key']}={x['value']}": x["limit"] for x in runs["tag_concurrency_limits"]}


def _job_tag(job: str) -> str:
    (tag,) = [f"{k}={v}" for k, v in defs.resolve_job_def(job).tags.items() if k.startswith("gpuledger/")]
    return tag


def test_the_run_limits_match_the_tags_the_jobs_carry_on_a_file_and_on_a_lake_with_workers(tmp_path, monkeypatch):
    project = yaml.safe_load((REPO / "dagster.yaml").read_text())
    writers = ("monthly_allocation", "publishing", "month_close", "nightly_sync")
    # a limit on an op tag never matches: queued runs are limited by their run tags
    assert _limits(project) == (1, {_job_tag(INGESTION_JOB): 1, **{_job_tag(job): 1 for job in writers}})
    home = tmp_path / "home"
    home.mkdir()
    (home / "gpuledger.toml").write_text(
        '[warehouse]\ncatalog = "ducklake:postgres:dbname=lake host=pg"\ndata_path = "s3://b/lake/"\nworkers = 3\n'
    )
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    seeded = yaml.safe_load((dagster_home(home) / "dagster.yaml").read_text())
    assert seeded == instance_settings(project, 3)
    assert _limits(seeded) == (4, {_job_tag(INGESTION_JOB): 3, _job_tag("publishing"): 1})
    assert seeded["run_retries"] == project["run_retries"]
    # part steps: as many at once as workers, over every ingestion run
    (stage,) = [op for op in defs.resolve_job_def(INGESTION_JOB).graph.iterate_op_defs() if op.pool]
    assert (stage.name, stage.pool, seeded["concurrency"]["pools"]["default_limit"]) == (
        "stage_delivery_part",
        PART_STAGING_POOL,
        3,
    )


def test_the_vacuum_waits_for_loads_still_running_but_not_for_one_that_died_long_ago(instance):
    loads = _ingest(instance, [DagsterRunStatus.SUCCESS, DagsterRunStatus.STARTED, DagsterRunStatus.FAILURE])
    now = datetime.now(UTC)
    assert loads_in_progress(instance, now) == [loads[1].tags["dagster/partition"]]
    assert loads_in_progress(instance, now + LOAD_WINDOW + timedelta(minutes=1)) == []
