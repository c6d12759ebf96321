"""The nightly graph as a deployment runs it: the Dagster daemon (schedules, sensors, the run queue with the limits
of dagster.yaml) on the demo home. The nightly sync's refresh requests a batch of ingestion runs; the barrier
sensor requests the split of each month only after all of them succeeded, and the publish after every split."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterInstance, DagsterRunStatus, RunRecord

from gpuledger.publish.snapshot import last_attempt
from pipelines.batches import ALLOCATION_JOB, BATCH_TAG, INGESTION_JOB, PUBLISH_JOB
from pipelines.runner import PROJECT_DAGSTER_YAML

pytestmark = [pytest.mark.serial, pytest.mark.slow]

BIN = Path(sys.executable).parent
ENDED = (DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED)


@pytest.fixture
def daemon(demo_copy_cold: Path) -> Iterator[Path]:
    """``dagster-daemon`` on a copy of the demo home without its run history (the runs counted are the daemon's),
    stopped (with its run processes) at the end."""
    instance = demo_copy_cold / "dagster"
    instance.mkdir()
    env = {**os.environ, "GPULEDGER_HOME": str(demo_copy_cold), "DAGSTER_HOME": str(instance)}
    (instance / "dagster.yaml").write_bytes(PROJECT_DAGSTER_YAML.read_bytes())  # as gpuledger seeds it
    DagsterInstance.from_config(str(instance)).dispose()  # its storage made once: not by daemon and CLI at once
    log = (demo_copy_cold / "daemon.log").open("w")
    process = subprocess.Popen(
        [BIN / "dagster-daemon", "run", "-m", "pipelines.definitions"], env=env, stdout=log, stderr=log,
        start_new_session=True,
    )  # fmt: skip
    try:
        launched = subprocess.run(
            [BIN / "dagster", "job", "launch", "-m", "pipelines.definitions", "-j", "nightly_sync"],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert launched.returncode == 0, launched.stderr
        yield demo_copy_cold
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        log.close()


def _records(home: Path, job: str) -> list[RunRecord]:
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        return [r for r in instance.get_run_records() if r.dagster_run.job_name == job]


def test_the_daemon_splits_a_month_only_after_its_batch_loaded_and_publishes_after_every_split(daemon: Path):
    published_before = last_attempt(daemon)
    deadline = time.monotonic() + 600
    while not any(r.dagster_run.status in ENDED for r in _records(daemon, PUBLISH_JOB)):
        assert time.monotonic() < deadline, (daemon / "daemon.log").read_text()[-3000:]
        time.sleep(5)
    loads, splits, publishes = (_records(daemon, job) for job in (INGESTION_JOB, ALLOCATION_JOB, PUBLISH_JOB))
    runs = [*loads, *splits, *publishes]
    assert all(r.dagster_run.status == DagsterRunStatus.SUCCESS for r in runs), [
        (r.dagster_run.job_name, r.dagster_run.status) for r in runs
    ]
    assert len({r.dagster_run.tags[BATCH_TAG] for r in runs}) == 1  # one batch: the nightly refresh's
    # the open months (the tests' clock: November, December) of the demo's 4 providers, then each month's split
    assert len(loads) == 8 and sorted(r.dagster_run.tags["dagster/partition"] for r in splits) == ["2026-11", "2026-12"]
    assert min(r.start_time or 0 for r in splits) >= max(r.end_time or 0 for r in loads)
    assert min(r.start_time or 0 for r in publishes) >= max(r.end_time or 0 for r in splits)
    published = last_attempt(daemon)
    assert published and published_before and published["published_at"] != published_before["published_at"]
    assert published["failed_checks"] == []
