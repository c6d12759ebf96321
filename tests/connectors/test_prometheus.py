"""DCGM utilization from a real Prometheus, backfilled with promtool; HTTP failures from a loopback stub."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import polars as pl
import pytest
import requests
from polars.testing import assert_frame_equal

from connectors.telemetry import prometheus
from connectors.telemetry.prometheus import PrometheusResult, TelemetryError
from gpuledger.telemetry.samples import SampleAggregation, sample_aggregator
from models.telemetry import (
    DCGM_DRAM_ACTIVE,
    DCGM_ENGINE_ACTIVE,
    DCGM_FB_USED,
    DCGM_GPU_UTIL,
    DCGM_METRICS,
    DCGM_SM_ACTIVE,
    DCGM_TENSOR_ACTIVE,
    DEFAULT_PRICING_METRICS,
    GPU_ACTIVITY_SCHEMA,
    JOBS_SCHEMA,
)

pytestmark = pytest.mark.serial

# Data sits a few days before a fixed date (2026-11-02), far inside the 100-year retention.
DAY = datetime(2026, 10, 30, tzinfo=UTC)
H10 = DAY + timedelta(hours=10)
H11 = DAY + timedelta(hours=11)
H12 = DAY + timedelta(hours=12)
THRESHOLD = 0.05
MINUTE = timedelta(minutes=1)
TWICE = {"Hostname": "node-e", "gpu": "0"}
ONCE = {"Hostname": "node-f", "gpu": "0"}
EXPORTERS = (
    {"instance": "10.0.0.5:9400", "job": "dcgm-exporter"},
    {"instance": "10.0.0.6:9400", "job": "gpu-operator"},
)


def fetch_gpu_activity(
    url: str,
    start: datetime,
    end: datetime,
    *,
    idle_threshold: float,
    source: str = "prometheus",
    pricing_metrics: Sequence[str] = DEFAULT_PRICING_METRICS,
    **options: Any,
) -> PrometheusResult:
    """The connector with the telemetry stage's aggregation, as the stage calls it."""
    aggregation = SampleAggregation(source, idle_threshold, pricing_metrics)
    with sample_aggregator(aggregation) as aggregate:
        return prometheus.fetch_gpu_activity(url, start, end, aggregate=aggregate, source=source, **options)


def _series(metric: str, labels: dict[str, str], points: list[tuple[datetime, float]]) -> list[str]:
    tags = ",".join(f'{key}="{value}"' for key, value in labels.items())
    return [f"{metric}{{{tags}}} {value} {int(ts.timestamp())}" for ts, value in points]


def _minutes(first: datetime, count: int, value: Callable[[int], float]) -> list[tuple[datetime, float]]:
    return [(first + i * MINUTE, value(i)) for i in range(count)]


def _families(lines: list[str]) -> list[tuple[str, list[str]]]:
    """Lines grouped by metric name, in first-seen order."""
    families: dict[str, list[str]] = {}
    for line in lines:
        families.setdefault(line.split("{", 1)[0], []).append(line)
    return list(families.items())


def openmetrics() -> str:
    """The cluster, by metric family (OpenMetrics wants each family contiguous, each series in time order)."""
    pod_a = {"pod": "train-1", "namespace": "team-a", "job_name": "train", "instance_id": "i-0aaa"}
    notebook = {"Hostname": "node-m", "gpu": "0", "pod": "nb-0", "namespace": "team-c"}
    mig_1 = {**notebook, "GPU_I_ID": "1", "GPU_I_PROFILE": "1g.10gb"}
    mig_2 = {**notebook, "GPU_I_ID": "2", "GPU_I_PROFILE": "1g.10gb"}
    full = {"Hostname": "node-s", "gpu": "0"}
    engine = [
        # node-a GPU 0: 15 of 60 minutes busy (0.8), the rest idle (0.02); then 30 unlabelled idle minutes.
        *_series(
            DCGM_ENGINE_ACTIVE,
            {"Hostname": "node-a", "gpu": "0", "UUID": "GPU-a0", "modelName": "NVIDIA H100 80GB HBM3", **pod_a},
            _minutes(H10, 60, lambda i: 0.8 if i < 15 else 0.02),
        ),
        *_series(
            DCGM_ENGINE_ACTIVE,
            {"Hostname": "node-a", "gpu": "0", "UUID": "GPU-a0", "instance_id": "i-0aaa"},
            _minutes(H11, 30, lambda i: 0.0),
        ),
        # node-a GPU 1 has both metrics: the profiling one wins.
        *_series(DCGM_ENGINE_ACTIVE, {"Hostname": "node-a", "gpu": "1", **pod_a}, _minutes(H10, 60, lambda i: 0.6)),
        # node-c GPU known by UUID only, scraped every 15 s: 0, 0, 0, 0.4 each minute -> 0.1 per 1-minute window.
        *_series(
            DCGM_ENGINE_ACTIVE,
            {
                "Hostname": "node-c",
                "UUID": "GPU-c0",
                "pod": "serve-0",
                "namespace": "team-b",
                "created_by_name": "serve",
            },
            [(H10 + i * timedelta(seconds=15), 0.4 if i % 4 == 3 else 0.0) for i in range(480)],
        ),
        # node-d GPU 0 has profiling only in hour 11.
        *_series(DCGM_ENGINE_ACTIVE, {"Hostname": "node-d", "gpu": "0"}, _minutes(H11, 60, lambda i: 0.3)),
        # node-m GPU 0 is split into two MIG slices, both held by one notebook pod without an owner label.
        *_series(DCGM_ENGINE_ACTIVE, mig_1, _minutes(H10, 60, lambda i: 0.5)),
        *_series(DCGM_ENGINE_ACTIVE, mig_2, _minutes(H10, 60, lambda i: 0.25)),
        *_series(DCGM_ENGINE_ACTIVE, full, _minutes(H10, 60, lambda i: 0.7)),
        # node-e GPU 0 is scraped by two exporters 30 s apart (their Prometheus job and instance differ), node-f
        # GPU 0 by one, at the mean of the two.
        *_series(DCGM_ENGINE_ACTIVE, {**TWICE, **EXPORTERS[0]}, _minutes(H10, 60, lambda i: 0.8 if i < 15 else 0.02)),
        *_series(
            DCGM_ENGINE_ACTIVE,
            {**TWICE, **EXPORTERS[1]},
            _minutes(H10 + timedelta(seconds=30), 60, lambda i: 0.6 if i < 15 else 0.02),
        ),
        *_series(DCGM_ENGINE_ACTIVE, {**ONCE, **EXPORTERS[0]}, _minutes(H10, 60, lambda i: 0.7 if i < 15 else 0.02)),
    ]
    # node-s GPU 0 exports every field: SM activity prices it; FB_USED peaks in one 15-second scrape.
    profiling = [
        *_series(DCGM_SM_ACTIVE, full, _minutes(H10, 60, lambda i: 0.4)),
        *_series(DCGM_TENSOR_ACTIVE, full, _minutes(H10, 60, lambda i: 0.2)),
        *_series(DCGM_DRAM_ACTIVE, full, _minutes(H10, 60, lambda i: 0.3)),
    ]
    framebuffer = [
        *_series(
            DCGM_FB_USED,
            full,
            [(H10 + i * timedelta(seconds=15), 30000.0 if i == 101 else 1000.0) for i in range(240)],
        ),
        # one of node-e's exporters misses the peak: the high-water mark is the larger copy, not their mean
        *_series(DCGM_FB_USED, {**TWICE, **EXPORTERS[0]}, _minutes(H10, 60, lambda i: 20000.0 if i == 7 else 1000.0)),
        *_series(DCGM_FB_USED, {**TWICE, **EXPORTERS[1]}, _minutes(H10 + timedelta(seconds=30), 60, lambda i: 1000.0)),
        *_series(DCGM_FB_USED, {**ONCE, **EXPORTERS[0]}, _minutes(H10, 60, lambda i: 20000.0 if i == 7 else 1000.0)),
    ]
    gpu_util = [
        *_series(DCGM_GPU_UTIL, {"Hostname": "node-a", "gpu": "1", **pod_a}, _minutes(H10, 60, lambda i: 99.0)),
        # node-b GPU 0: no profiling; 50 % for 30 minutes under Slurm job 4242, then one NaN.
        *_series(
            DCGM_GPU_UTIL,
            {"Hostname": "node-b", "gpu": "0", "hpc_job": "4242"},
            _minutes(H10, 31, lambda i: 50.0 if i < 30 else float("nan")),
        ),
        *_series(DCGM_GPU_UTIL, {"Hostname": "node-d", "gpu": "0"}, _minutes(H10, 120, lambda i: 20.0)),
        *_series(DCGM_GPU_UTIL, full, _minutes(H10, 60, lambda i: 90.0)),
    ]
    # node-b GPU 1 exports a temperature, but no utilization at all; node-m's temperature is the whole GPU's.
    temperature = [
        *_series("DCGM_FI_DEV_GPU_TEMP", {"Hostname": "node-b", "gpu": "1"}, _minutes(H10, 60, lambda i: 40)),
        *_series("DCGM_FI_DEV_GPU_TEMP", {"Hostname": "node-m", "gpu": "0"}, _minutes(H10, 60, lambda i: 40)),
    ]
    return "\n".join(
        [
            f"# TYPE {DCGM_ENGINE_ACTIVE} gauge",
            *engine,
            f"# TYPE {DCGM_GPU_UTIL} gauge",
            *gpu_util,
            *(line for metric, lines in _families(profiling) for line in (f"# TYPE {metric} gauge", *lines)),
            f"# TYPE {DCGM_FB_USED} gauge",
            *framebuffer,
            "# TYPE DCGM_FI_DEV_GPU_TEMP gauge",
            *temperature,
            "# EOF",
            "",
        ]
    ).replace(" nan ", " NaN ")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _binaries() -> tuple[str, str]:
    promtool, prometheus = shutil.which("promtool"), shutil.which("prometheus")
    if promtool is None or prometheus is None:
        pytest.fail(
            "promtool and prometheus must be on PATH (Debian: apt-get install prometheus; .ci/run installs it)",
            pytrace=False,
        )
    return promtool, prometheus


@pytest.fixture(scope="module")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    promtool, prometheus = _binaries()
    root = tmp_path_factory.mktemp("prometheus")
    metrics, data = root / "metrics.om", root / "data"
    metrics.write_text(openmetrics())
    # Backfilled 2-hour blocks do not overlap and are loaded at startup: no flag and no wait needed (2.42).
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(metrics), str(data)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    config = root / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\n")
    url = f"http://127.0.0.1:{_free_port()}"
    log_path = root / "prometheus.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                "--storage.tsdb.retention.time=100y",
                f"--web.listen-address={urlsplit(url).netloc}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_ready(url, process, log_path)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"prometheus exited with {process.returncode}:\n{log_path.read_text()}", pytrace=False)
        try:
            if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    pytest.fail(f"prometheus not ready after 20 s:\n{log_path.read_text()}", pytrace=False)


@pytest.fixture(scope="module")
def result(prometheus_url: str) -> PrometheusResult:
    return fetch_gpu_activity(
        prometheus_url, H10, H12, cluster="k8s-east", idle_threshold=THRESHOLD, instance_label="instance_id"
    )


def _row(activity: pl.DataFrame, node: str, gpu: str, hour: datetime) -> dict[str, Any]:
    rows = activity.filter(node=node, gpu=gpu, hour=hour).to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def test_activity_is_counted_by_hand(result: PrometheusResult) -> None:
    assert result.activity.schema == GPU_ACTIVITY_SCHEMA
    busy = _row(result.activity, "node-a", "0", H10)
    assert busy["samples"] == 60
    assert busy["sampled_seconds"] == 3600
    assert busy["active_seconds"] == 900
    assert busy["mean_utilization"] == pytest.approx((15 * 0.8 + 45 * 0.02) / 60)
    assert busy["metric"] == DCGM_ENGINE_ACTIVE
    assert busy["job_id"] == "team-a/train-1"
    assert busy["instance_id"] == "i-0aaa"
    assert busy["cluster"] == "k8s-east"
    assert busy["source"] == "prometheus"
    idle = _row(result.activity, "node-a", "0", H11)
    assert (idle["samples"], idle["active_seconds"], idle["mean_utilization"], idle["job_id"]) == (30, 0, 0, None)


def test_scrapes_on_window_boundaries_are_counted_once(result: PrometheusResult) -> None:
    for hour in (H10, H11):
        served = _row(result.activity, "node-c", "GPU-c0", hour)
        # Each 1-minute window holds exactly the 4 scrapes 0, 0, 0, 0.4 (with the next :00 it would be 0.08).
        assert served["samples"] == 60
        assert served["active_seconds"] == 3600
        assert served["mean_utilization"] == pytest.approx(0.1)


def test_profiling_metric_wins_and_gpu_util_is_the_fallback(result: PrometheusResult) -> None:
    both = _row(result.activity, "node-a", "1", H10)
    assert (both["metric"], both["mean_utilization"]) == (DCGM_ENGINE_ACTIVE, pytest.approx(0.6))
    fallback = _row(result.activity, "node-b", "0", H10)
    assert fallback["metric"] == DCGM_GPU_UTIL
    assert fallback["mean_utilization"] == pytest.approx(0.5)
    assert (fallback["samples"], fallback["sampled_seconds"], fallback["active_seconds"]) == (30, 1800, 1800)
    # Per GPU and hour: node-d's hour 10 has only GPU_UTIL, its hour 11 has the profiling metric.
    assert _row(result.activity, "node-d", "0", H10)["metric"] == DCGM_GPU_UTIL
    assert _row(result.activity, "node-d", "0", H10)["mean_utilization"] == pytest.approx(0.2)
    assert _row(result.activity, "node-d", "0", H11)["metric"] == DCGM_ENGINE_ACTIVE
    assert _row(result.activity, "node-d", "0", H11)["mean_utilization"] == pytest.approx(0.3)
    lines = "\n".join(result.fallbacks)
    fallback = f"no {DCGM_SM_ACTIVE} or {DCGM_ENGINE_ACTIVE}, used {DCGM_GPU_UTIL} / 100 in 1 hour(s)"
    assert f"node-b GPU 0: {fallback} from 2026-10-30T10:00Z to 2026-10-30T10:00Z" in lines
    assert f"node-d GPU 0: {fallback}" in lines
    assert "node-a GPU 1" not in lines
    assert "node-s GPU 0" not in lines


def test_gpu_without_utilization_is_reported_not_idle(result: PrometheusResult) -> None:
    assert result.activity.filter(node="node-b", gpu="1").is_empty()
    assert "node-b GPU 1: no sample of a pricing metric in 2026-10-30T10:00:00Z..2026-10-30T12:00:00Z" in "\n".join(
        result.fallbacks
    )
    # node-m's whole-GPU temperature series is not a GPU without activity: its MIG slices have it.
    assert not any(line.startswith("node-m") for line in result.fallbacks), result.fallbacks


def test_non_finite_samples_are_skipped_and_reported(result: PrometheusResult) -> None:
    assert f"node-b GPU 0: 1 non-finite {DCGM_GPU_UTIL} sample(s) skipped" in result.fallbacks


def test_slurm_hpc_job_label_is_the_job_id(result: PrometheusResult) -> None:
    assert _row(result.activity, "node-b", "0", H10)["job_id"] == "4242"


def test_kubernetes_pods_become_jobs(result: PrometheusResult) -> None:
    assert result.jobs.schema == JOBS_SCHEMA
    jobs = {row["job_id"]: row for row in result.jobs.to_dicts()}
    assert set(jobs) == {"team-a/train-1", "team-b/serve-0", "team-c/nb-0"}
    train = jobs["team-a/train-1"]
    assert (train["name"], train["account"], train["nodes"], train["gpu_count"]) == ("train-1", "team-a", ["node-a"], 2)
    assert (train["start"], train["end"], train["state"]) == (H10, H11, "UNKNOWN")
    assert (train["run_group"], train["cluster"], train["source"]) == ("train", "k8s-east", "prometheus")
    assert (train["scheduler_job_id"], train["gpu_ids"], train["mig_profile"]) == (
        "team-a/train-1",
        ["node-a:0", "node-a:1"],
        None,
    )
    # serve-0 is sampled in the range's last window: still running.
    serve = jobs["team-b/serve-0"]
    assert (serve["start"], serve["end"], serve["state"], serve["run_group"]) == (H10, None, "RUNNING", "serve")
    assert (serve["nodes"], serve["gpu_count"], serve["account"]) == (["node-c"], 1, "team-b")
    assert serve["gpu_ids"] == ["node-c:GPU-c0"]
    # No job_name/created_by_name label: no run group (never the pod name); two MIG slices of one GPU.
    notebook = jobs["team-c/nb-0"]
    assert (notebook["run_group"], notebook["name"], notebook["end"]) == (None, "nb-0", H11)
    assert (notebook["gpu_count"], notebook["mig_profile"], notebook["gpu_ids"]) == (2, "1g.10gb", ["node-m:0"])


def test_mig_slices_keep_their_instance_and_profile(result: PrometheusResult) -> None:
    slices = result.activity.filter(node="node-m", gpu="0").sort("gpu_instance")
    assert slices.select("gpu_instance", "mig_profile", "job_id", "metric", "mean_utilization", "samples").rows() == [
        ("1", "1g.10gb", "team-c/nb-0", DCGM_ENGINE_ACTIVE, 0.5, 60),
        ("2", "1g.10gb", "team-c/nb-0", DCGM_ENGINE_ACTIVE, 0.25, 60),
    ]
    # The Kubernetes GPUs are whole: no instance, no profile.
    assert result.activity.filter(node="node-a")["gpu_instance"].is_null().all()
    assert result.activity.filter(node="node-a")["mig_profile"].is_null().all()


def test_sm_activity_is_preferred_and_the_other_fields_are_kept(result: PrometheusResult) -> None:
    every = _row(result.activity, "node-s", "0", H10)
    assert (every["metric"], every["samples"]) == (DCGM_SM_ACTIVE, 60)
    assert every["mean_utilization"] == pytest.approx(0.4)
    assert every["busy_seconds"] == pytest.approx(0.4 * 3600)
    assert (every["sm_active"], every["tensor_active"], every["dram_active"]) == (
        pytest.approx(0.4),
        pytest.approx(0.2),
        pytest.approx(0.3),
    )
    # The high-water mark is the largest scrape (a window's mean would say 8,250 MiB).
    assert every["fb_used_mib"] == 30000
    # Profiling-less GPUs have no profiling fields.
    fallback = _row(result.activity, "node-b", "0", H10)
    assert [fallback[name] for name in ("sm_active", "tensor_active", "dram_active", "fb_used_mib")] == [None] * 4


def test_a_gpu_two_exporters_hand_over_is_one_gpu_and_its_copies_are_counted(result: PrometheusResult) -> None:
    twice, once = _row(result.activity, "node-e", "0", H10), _row(result.activity, "node-f", "0", H10)
    # 60 windows of the engine activity and of FB_USED, each handed over by both exporters
    assert (twice.pop("duplicate_samples"), once.pop("duplicate_samples")) == (120, 0)
    assert twice | {"node": "node-f"} == once
    assert (once["samples"], once["active_seconds"], once["fb_used_mib"]) == (60, 900, 20000)
    assert once["mean_utilization"] == pytest.approx((15 * 0.7 + 45 * 0.02) / 60)


@pytest.mark.parametrize(
    ("metric", "mean"),
    [
        (DCGM_SM_ACTIVE, 0.4),
        (DCGM_TENSOR_ACTIVE, 0.2),
        (DCGM_DRAM_ACTIVE, 0.3),
        (DCGM_ENGINE_ACTIVE, 0.7),
        (DCGM_GPU_UTIL, 0.9),
    ],
)
def test_every_activity_field_is_fetched_and_may_price(prometheus_url: str, metric: str, mean: float) -> None:
    # The connector hands every field over; which one prices the hour is the aggregation's configuration.
    only = fetch_gpu_activity(
        prometheus_url, H10, H11, cluster="c", idle_threshold=THRESHOLD, pricing_metrics=(metric,)
    )
    row = _row(only.activity, "node-s", "0", H10)
    assert (row["metric"], row["mean_utilization"], row["fb_used_mib"]) == (metric, pytest.approx(mean), 30000)


def test_chunks_neither_lose_nor_double_count(prometheus_url: str, result: PrometheusResult) -> None:
    # 7-minute chunks put chunk boundaries on sample timestamps, and across the hour.
    chunked = fetch_gpu_activity(
        prometheus_url,
        H10,
        H12,
        cluster="k8s-east",
        idle_threshold=THRESHOLD,
        instance_label="instance_id",
        chunk=timedelta(minutes=7),
    )
    key = ["node", "gpu", "gpu_instance", "hour", "job_id"]
    assert_frame_equal(chunked.activity.sort(key), result.activity.sort(key))
    assert_frame_equal(chunked.jobs, result.jobs)
    assert chunked.fallbacks == result.fallbacks


def test_chunks_respect_the_points_limit(prometheus_url: str) -> None:
    # 4 hours at a 1-second step is 14,400 points: more than Prometheus allows in one query_range.
    fine = fetch_gpu_activity(
        prometheus_url, H10, H10 + timedelta(hours=4), cluster="c", idle_threshold=THRESHOLD, step_seconds=1
    )
    busy = _row(fine.activity, "node-a", "0", H10)
    assert (busy["samples"], busy["sampled_seconds"], busy["active_seconds"]) == (60, 60, 15)
    assert _row(fine.activity, "node-c", "GPU-c0", H11)["samples"] == 240


def test_range_must_be_aligned_to_the_step(prometheus_url: str) -> None:
    with pytest.raises(ValueError, match="multiples"):
        fetch_gpu_activity(prometheus_url, H10 + timedelta(seconds=30), H12, cluster="c", idle_threshold=THRESHOLD)


def test_prometheus_down_names_url_and_window() -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    started = time.monotonic()
    with pytest.raises(TelemetryError) as raised:
        fetch_gpu_activity(url, H10, H12, cluster="c", idle_threshold=THRESHOLD, backoff_seconds=0.01)
    assert time.monotonic() - started < 5
    message = str(raised.value)
    assert url in message
    assert "2026-10-30T10:00:00Z..2026-10-30T12:00:00Z" in message
    assert "after 3 attempts" in message


def _matrix(path: str) -> tuple[int, dict[str, Any]]:
    if path.endswith("/series"):
        return 200, {"status": "success", "data": []}
    return 200, {"status": "success", "data": {"resultType": "matrix", "result": []}}


@dataclass(frozen=True)
class Request:
    headers: dict[str, str]
    query: dict[str, list[str]]


@contextmanager
def stub_prometheus(answer: Callable[[str], tuple[int, dict[str, Any]]]) -> Iterator[tuple[str, list[Request]]]:
    """A loopback HTTP server answering ``answer(path)``; yields its URL and each request it got."""
    seen: list[Request] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(Request(dict(self.headers), parse_qs(urlsplit(self.path).query)))
            status, body = answer(urlsplit(self.path).path)
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test asserts on what it needs."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _fetch(url: str, **options: Any) -> PrometheusResult:
    return fetch_gpu_activity(url, H10, H11, cluster="c", idle_threshold=THRESHOLD, backoff_seconds=0.01, **options)


def test_warnings_mean_partial_data_and_raise() -> None:
    partial = {
        "status": "success",
        "warnings": ["store eu-1 unavailable"],
        "data": {"resultType": "matrix", "result": []},
    }
    with stub_prometheus(lambda path: (200, partial)) as (url, _), pytest.raises(TelemetryError) as raised:
        _fetch(url)
    assert "partial answer" in str(raised.value)
    assert "store eu-1 unavailable" in str(raised.value)


def test_error_status_is_raised_with_prometheus_reason_without_retry() -> None:
    error = {"status": "error", "errorType": "execution", "error": "query processing would load too many samples"}
    with stub_prometheus(lambda path: (422, error)) as (url, seen), pytest.raises(TelemetryError) as raised:
        _fetch(url)
    assert "execution: query processing would load too many samples" in str(raised.value)
    assert len(seen) == 1


def test_server_errors_are_retried_a_bounded_number_of_times() -> None:
    busy = {"status": "error", "errorType": "unavailable", "error": "overloaded"}
    with stub_prometheus(lambda path: (503, busy)) as (url, seen), pytest.raises(TelemetryError) as raised:
        _fetch(url, attempts=3)
    assert len(seen) == 3
    assert "HTTP 503 unavailable: overloaded after 3 attempts" in str(raised.value)


def test_a_transient_error_is_retried() -> None:
    answers = iter([(429, {}), (200, {"status": "success", "data": {"resultType": "matrix", "result": []}})])
    with stub_prometheus(lambda path: next(answers, None) or _matrix(path)) as (url, seen):
        fetched = _fetch(url)
    assert fetched.activity.is_empty() and fetched.jobs.is_empty() and fetched.fallbacks == []
    assert len(seen) == 1 + len(DCGM_METRICS) + 1


def test_every_dcgm_field_is_queried_with_the_mig_labels() -> None:
    with stub_prometheus(_matrix) as (url, seen):
        _fetch(url)
    queries = [request.query["query"][0] for request in seen if "query" in request.query]
    assert len(queries) == len(DCGM_METRICS)
    for metric, query in zip(DCGM_METRICS, queries, strict=True):
        assert f"_over_time({metric}[59999ms])" in query
        assert "GPU_I_ID" in query and "GPU_I_PROFILE" in query
    assert [query.split(" ", 1)[0] for query in queries] == [
        "max" if m == DCGM_FB_USED else "avg" for m in DCGM_METRICS
    ]


def test_bearer_token_comes_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROM_TOKEN", "s3cret")
    with stub_prometheus(_matrix) as (url, seen):
        _fetch(url, token_env="PROM_TOKEN")
    assert {request.headers["Authorization"] for request in seen} == {"Bearer s3cret"}
    monkeypatch.delenv("PROM_TOKEN")
    with pytest.raises(TelemetryError, match="PROM_TOKEN is not set"):
        _fetch(url, token_env="PROM_TOKEN")


def test_credentials_in_the_url_stay_out_of_messages() -> None:
    with stub_prometheus(lambda path: (500, {})) as (url, _), pytest.raises(TelemetryError) as raised:
        _fetch(url.replace("http://", "http://reader:hunter2@"))
    assert "hunter2" not in str(raised.value)
    assert url in str(raised.value)
