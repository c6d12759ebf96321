"""Batches of the runs the sensors request, and the barrier between their stages (docs/decisions/0020).

A sensor that finds work (deliveries it landed, the nightly refresh of the open months) requests a *batch*: the
ingestion runs of its (billing month, provider) partitions, which on a lake load at once (``dagster.yaml``: the
``loader`` limit). The barrier sensor requests each month's allocation only when every ingestion run of the
batch has succeeded, and the batch's publish only when every allocation has: the order is the barrier's, not the
queue's. A run that failed holds its batch until a new attempt of it succeeds (the run-retry policy's, or an
operator's re-execution, which keeps the run's tags).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dagster import DagsterInstance, DagsterRun, DagsterRunStatus, MultiPartitionKey, RunRequest, RunsFilter

BATCH_TAG = "gpuledger/batch"
"""The batch a sensor-requested run belongs to (a digest of the requesting sensor's key)."""
BATCH_SIZE_TAG = "gpuledger/batch-size"
"""How many runs of the run's job its batch has: the barrier waits for all of them."""
BATCH_WINDOW = timedelta(days=7)
"""The barrier looks at runs created this recently; an older batch that never finished is left to the operator."""
LOAD_WINDOW = timedelta(hours=6)
"""An ingestion run still "started" after this is taken for one whose process died unnoticed: it no longer holds the
vacuum back."""
WAREHOUSE_TAG = "gpuledger/warehouse"
"""The run tag ``dagster.yaml`` limits: ``loader`` runs (ingestion) may run side by side on a lake, ``writer``
runs (everything else that writes the warehouse) one at a time."""
PART_STAGING_POOL = "gpuledger_part_staging"
"""The op concurrency pool of the steps that stage a delivery's parts: on a lake with ``workers`` = N, N at once over
every ingestion run (docs/decisions/0022)."""
LOADER_TAGS = {WAREHOUSE_TAG: "loader"}
WRITER_TAGS = {WAREHOUSE_TAG: "writer"}
INGESTION_JOB, ALLOCATION_JOB, PUBLISH_JOB = "focus_ingestion", "monthly_allocation", "publishing"
MONTH_CLOSE_JOB = "month_close"
"""Issues a closed month's statement and publishes the analyst file too: a nightly publish of the same inputs after
it has nothing to do."""
_MONTH_TAG = "dagster/partition/month"
_PARTITION_TAG = "dagster/partition"


def ingestion_partition_key(month: str, provider: str) -> MultiPartitionKey:
    """Partition key for billing month ``YYYY-MM`` of ``provider``."""
    return MultiPartitionKey({"month": month, "provider": provider})


def batch_requests(key: str, slices: Sequence[tuple[str, str]]) -> list[RunRequest]:
    """The ingestion runs of the (month, provider) ``slices`` as one batch, named by the sensor's ``key``; a batch
    without any publishes at once (the barrier requests the rest)."""
    batch = hashlib.sha256(key.encode()).hexdigest()[:16]
    partitions = sorted(set(slices))
    if not partitions:
        return [RunRequest(run_key=f"{key}:publish", job_name=PUBLISH_JOB, tags={BATCH_TAG: batch})]
    tags = {BATCH_TAG: batch, BATCH_SIZE_TAG: str(len(partitions))}
    return [
        RunRequest(
            run_key=f"{key}:focus:{m}:{p}",
            job_name=INGESTION_JOB,
            partition_key=ingestion_partition_key(m, p),
            tags=tags,
        )
        for m, p in partitions
    ]


@dataclass(frozen=True)
class BarrierTick:
    requests: list[RunRequest]
    """The next stage of every batch whose stage before it succeeded whole."""
    waiting: list[str]
    """Why each other unfinished batch waits (runs still going, or which run failed)."""


def barrier_tick(instance: DagsterInstance, now: datetime) -> BarrierTick:
    """What the barrier requests now: a batch's allocations once all its ingestion runs succeeded, its publish once
    all its allocations did; only the runs not requested yet (the run keys guard against a second request too)."""
    since = now - BATCH_WINDOW
    ingestion, allocation, published = (_newest_attempts(instance, job, since) for job in
                                        (INGESTION_JOB, ALLOCATION_JOB, PUBLISH_JOB))  # fmt: skip
    requests: list[RunRequest] = []
    waiting: list[str] = []
    for batch, loads in sorted(ingestion.items()):
        if not _stage_succeeded(batch, "ingestion", loads, waiting):
            continue
        months = sorted({run.tags[_MONTH_TAG] for run in loads.values()})
        splits = allocation.get(batch, {})
        missing = [m for m in months if m not in splits]
        tags = {BATCH_TAG: batch, BATCH_SIZE_TAG: str(len(months))}
        requests += [
            RunRequest(run_key=f"{batch}:allocation:{m}", job_name=ALLOCATION_JOB, partition_key=m, tags=tags)
            for m in missing
        ]
        if missing or not _stage_succeeded(batch, "allocation", splits, waiting) or batch in published:
            continue
        requests.append(RunRequest(run_key=f"{batch}:publish", job_name=PUBLISH_JOB, tags={BATCH_TAG: batch}))
    return BarrierTick(requests, waiting)


def _newest_attempts(instance: DagsterInstance, job: str, since: datetime) -> dict[str, dict[str, DagsterRun]]:
    """batch -> partition -> the newest run of ``job`` for it (a retry or re-execution replaces its parent)."""
    newest: dict[str, dict[str, DagsterRun]] = defaultdict(dict)
    for record in instance.get_run_records(RunsFilter(job_name=job, created_after=since)):  # newest first
        run = record.dagster_run
        batch = run.tags.get(BATCH_TAG)
        if batch is not None:  # else a run of `gpuledger run` or by hand: not the barrier's
            newest[batch].setdefault(run.tags.get(_PARTITION_TAG, ""), run)
    return newest


def _stage_succeeded(batch: str, stage: str, runs: Mapping[str, DagsterRun], waiting: list[str]) -> bool:
    """Whether every run of the batch's ``stage`` exists and succeeded; else why not, appended to ``waiting``."""
    size = max((int(run.tags.get(BATCH_SIZE_TAG, "0")) for run in runs.values()), default=0)
    failed = sorted(f"{p or run.job_name} (run {run.run_id[:8]})" for p, run in runs.items()
                    if run.status in (DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED))  # fmt: skip
    if failed:
        waiting.append(f"batch {batch}: {stage} failed for {', '.join(failed)}; re-execute it to go on")
    elif len(runs) < size or any(run.status != DagsterRunStatus.SUCCESS for run in runs.values()):
        done = sum(run.status == DagsterRunStatus.SUCCESS for run in runs.values())
        waiting.append(f"batch {batch}: {stage} {done} of {size} runs succeeded so far")
    else:
        return bool(runs)
    return False


def loads_in_progress(instance: DagsterInstance, now: datetime) -> list[str]:
    """Ingestion runs started within ``LOAD_WINDOW`` and not ended: on a lake, the vacuum's deletes would abort their
    commits (DuckLake refuses an insert into a table another transaction deleted from)."""
    going = (DagsterRunStatus.STARTING, DagsterRunStatus.STARTED)
    records = instance.get_run_records(
        RunsFilter(job_name=INGESTION_JOB, statuses=going, created_after=now - LOAD_WINDOW)
    )
    return [record.dagster_run.tags.get(_PARTITION_TAG, record.dagster_run.run_id) for record in records]


def instance_settings(template: Mapping[str, Any], workers: int) -> dict[str, Any]:
    """The Dagster instance settings ``template`` (``dagster.yaml``) with the run limits of a lake ingesting in
    ``workers`` runs at once: that many loaders beside one writer, and that many part steps over all of them (the
    pools' default limit: ``PART_STAGING_POOL`` is the only pool)."""
    settings = dict(template)
    settings["concurrency"] = {
        **template.get("concurrency", {}),
        "pools": {**template.get("concurrency", {}).get("pools", {}), "default_limit": workers},
        "runs": {
            **template.get("concurrency", {}).get("runs", {}),
            "max_concurrent_runs": workers + 1,
            "tag_concurrency_limits": [
                {"key": WAREHOUSE_TAG, "value": WRITER_TAGS[WAREHOUSE_TAG], "limit": 1},
                {"key": WAREHOUSE_TAG, "value": LOADER_TAGS[WAREHOUSE_TAG], "limit": workers},
            ],
        },
    }
    return settings
