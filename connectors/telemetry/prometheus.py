"""DCGM GPU activity from Prometheus' HTTP API, as hourly GPU activity and the Kubernetes pods seen in it.

Samples
    The range ``[start, end)`` is cut into windows of ``step_seconds``; each window is one sample, the
    time-weighted mean of the scrapes inside it: ``avg_over_time(M[<step - 1 ms>])`` evaluated at the window's
    last millisecond reads exactly ``[window start, window end)``, so a scrape on a boundary falls in one
    window only (Prometheus 2.x ranges include both ends; 3.x ranges exclude the left one, where a scrape on the
    exact first millisecond of a window is dropped, never counted twice). A window without scrapes yields no
    sample: missing data is never read as idle. Samples are stamped with their window's start, so they land in
    the right UTC hour. ``avg by (<the labels read below>, instance, job)`` keeps answers small and keeps apart the
    copies of one GPU's series that several exporters or scrape jobs hand over: the aggregation merges them (their
    mean, the largest FB_USED) and counts them (``duplicate_samples``). One exporter per GPU answers as many series
    and points as without the two labels; each further copy adds its own.

Chunks
    ``query_range`` runs on consecutive, non-overlapping runs of windows, each at most ``chunk`` long and at
    most 11,000 points (Prometheus' limit per series). ``query_range`` includes both its endpoints, so each
    chunk's last evaluation is one step before the next chunk's first: no sample is fetched twice. Whole UTC
    hours are decided and aggregated as soon as a chunk completes them, so memory follows the chunk size,
    not the range.

Metrics and GPUs
    Every field of ``DCGM_METRICS`` is fetched (SM, tensor-pipe, DRAM and graphics-engine activity, GPU_UTIL,
    FB_USED) and handed over as long samples, each scaled by ``METRIC_SCALE`` (GPU_UTIL percent / 100):
    the aggregation picks the pricing metric per GPU-hour (the first configured one with samples), so an
    hour's result is independent of the range it was queried in. FB_USED is a high-water mark: its windows
    take the largest scrape (``max_over_time``), not the mean. A GPU is (node label, ``gpu`` label, else
    ``UUID``), and a MIG slice of it is the ``GPU_I_ID`` label (its profile ``GPU_I_PROFILE``, "1g.10gb"),
    kept apart in the grouping. The GPUs that exist are listed with the series API (index only, no samples
    read) for any ``DCGM_FI_*`` series in each chunk; a GPU without any activity metric is reported and gets
    no activity rows, and so is a GPU-hour priced by GPU_UTIL because no SM or engine activity was exported.

Labels
    ``node_label`` -> node; ``gpu`` (else ``UUID``) -> gpu; ``GPU_I_ID`` -> gpu_instance; ``GPU_I_PROFILE`` ->
    mig_profile; ``instance_label`` -> instance_id; a pod (``pod_label``, ``namespace_label``) -> job_id
    ``namespace/pod`` (pod names are unique only within a namespace), else dcgm-exporter's Slurm mapping
    ``hpc_job`` -> job_id. When Prometheus scrapes dcgm-exporter without ``honor_labels``, the workload's labels
    are ``exported_pod``/``exported_namespace``: configure those.
    A pod's jobs row spans its first to last sampled window within the queried range only (metrics do not say
    when a pod started or how it ended): RUNNING without an end if sampled in the range's last window, else
    UNKNOWN. It holds the GPUs (or MIG slices) it was sampled on, ``gpu_ids`` "node:gpu" with the ``gpu`` as
    the activity rows name it; its run group is the ``job_name``/``created_by_name`` label, null without one.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import polars as pl
import requests

from models.errors import GpuledgerError
from models.telemetry import (
    DCGM_ENGINE_ACTIVE,
    DCGM_FB_USED,
    DCGM_GPU_UTIL,
    DCGM_METRICS,
    DCGM_SM_ACTIVE,
    GPU_SAMPLES_SCHEMA,
    JOBS_SCHEMA,
    METRIC_SCALE,
    UTC_TIME,
)

log = logging.getLogger(__name__)

MAX_POINTS_PER_SERIES = 11_000
"""Prometheus refuses a query_range answer with more points per series."""

INVENTORY_SELECTOR = '{__name__=~"DCGM_FI_.+"}'
"""Any dcgm-exporter series: tells which GPUs existed in a window, whatever metrics they export."""

GPU_LABEL = "gpu"
UUID_LABEL = "UUID"
MIG_INSTANCE_LABEL = "GPU_I_ID"
MIG_PROFILE_LABEL = "GPU_I_PROFILE"
HPC_JOB_LABEL = "hpc_job"
OWNER_LABELS = ("job_name", "created_by_name")
"""Labels naming what created a pod (a Job, a JobSet, ...): its run group."""
TARGET_LABELS = ("instance", "job")
"""Labels Prometheus gives each scrape target: grouped by, never read, so that the copies of one GPU's series that
two exporters or a double scrape hand over reach the aggregation apart, which merges them and counts them."""

PROFILING_METRICS = (DCGM_SM_ACTIVE, DCGM_ENGINE_ACTIVE)
"""Activity a GPU-hour priced by GPU_UTIL lacked, for the fallback report."""

_LABEL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_HOUR_MS = 3_600_000


SampleAggregator = Callable[[pl.DataFrame, int], pl.DataFrame]
"""Samples (``GPU_SAMPLES_SCHEMA``, one per window of the given seconds) -> hourly activity (``GPU_ACTIVITY_SCHEMA``):
the telemetry stage's aggregation, applied to each batch of whole hours as soon as it is complete."""


class TelemetryError(GpuledgerError):
    """A metrics source failed or answered incompletely; nothing from the fetch is published."""


@dataclass(frozen=True)
class PrometheusResult:
    activity: pl.DataFrame
    """Hourly GPU activity, ``GPU_ACTIVITY_SCHEMA``."""
    jobs: pl.DataFrame
    """Kubernetes pods seen in the labels, ``JOBS_SCHEMA``."""
    fallbacks: list[str]
    """Report lines: GPUs priced by GPU_UTIL for want of SM/engine activity, GPUs without any activity, skipped
    samples."""


def redact_url(url: str) -> str:
    """The URL without user:password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


class PrometheusClient:
    """GETs on Prometheus' ``/api/v1`` with bounded retries; returns the ``data`` of complete answers only."""

    def __init__(
        self,
        url: str,
        session: requests.Session,
        *,
        token_env: str | None = None,
        timeout_seconds: float = 30.0,
        attempts: int = 3,
        backoff_seconds: float = 1.0,
    ) -> None:
        if attempts < 1:
            raise ValueError("attempts must be at least 1")
        self.url = url.rstrip("/")
        self.display_url = redact_url(url)
        self.timeout_seconds = timeout_seconds
        self.attempts = attempts
        self.backoff_seconds = backoff_seconds
        self._session = session
        self._headers = {"Accept": "application/json"}
        if token_env:
            token = os.environ.get(token_env)
            if not token:
                raise TelemetryError(f"Prometheus {self.display_url}: environment variable {token_env} is not set")
            self._headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str, params: dict[str, str], *, what: str) -> Any:
        """``data`` of the answer; retries connection errors, 429 and 5xx with exponential backoff."""
        where = f"Prometheus {self.display_url}: {what}"
        problem = ""
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(self.backoff_seconds * 2 ** (attempt - 1))
            try:
                response = self._session.get(
                    self.url + path, params=params, headers=self._headers, timeout=self.timeout_seconds
                )
            except requests.RequestException as exc:
                problem = f"unreachable ({type(exc).__name__})"
                log.info("%s: %s, attempt %d of %d", where, problem, attempt + 1, self.attempts)
                continue
            if response.status_code == 429 or response.status_code >= 500:
                problem = f"HTTP {response.status_code}{_api_error(response)}"
                log.info("%s: %s, attempt %d of %d", where, problem, attempt + 1, self.attempts)
                continue
            return _answer_data(response, where)
        raise TelemetryError(f"{where}: {problem} after {self.attempts} attempts")

    def query_range(self, query: str, first_ms: int, last_ms: int, step_ms: int, *, what: str) -> list[dict[str, Any]]:
        """Matrix result of ``query`` evaluated at ``first_ms``, every ``step_ms``, through ``last_ms``."""
        params = {
            "query": query,
            "start": _seconds(first_ms),
            "end": _seconds(last_ms),
            "step": _seconds(step_ms),
            # Thanos and Cortex answer partially by default; Prometheus ignores the parameter.
            "partial_response": "false",
        }
        data = self.get("/api/v1/query_range", params, what=what)
        if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
            raise TelemetryError(f"Prometheus {self.display_url}: {what}: expected a matrix result")
        return data["result"]

    def series(self, selector: str, first_ms: int, last_ms: int, *, what: str) -> list[dict[str, str]]:
        """Label sets of the series matching ``selector`` with data between the two instants."""
        params = {"match[]": selector, "start": _seconds(first_ms), "end": _seconds(last_ms)}
        data = self.get("/api/v1/series", params, what=what)
        if not isinstance(data, list):
            raise TelemetryError(f"Prometheus {self.display_url}: {what}: expected a list of series")
        return data


def fetch_gpu_activity(
    url: str,
    start: datetime,
    end: datetime,
    *,
    cluster: str,
    aggregate: SampleAggregator,
    step_seconds: int = 60,
    chunk: timedelta = timedelta(hours=6),
    node_label: str = "Hostname",
    instance_label: str | None = None,
    pod_label: str = "pod",
    namespace_label: str = "namespace",
    session: requests.Session | None = None,
    source: str = "prometheus",
    token_env: str | None = None,
    timeout_seconds: float = 30.0,
    attempts: int = 3,
    backoff_seconds: float = 1.0,
) -> PrometheusResult:
    """Hourly GPU activity of ``[start, end)`` and the pods seen in it (see the module docstring).

    ``start`` and ``end`` are timezone-aware multiples of ``step_seconds``, which divides an hour.
    ``aggregate`` turns each batch of whole hours' samples into activity (``gpuledger.telemetry.samples``).
    ``token_env`` names the environment variable holding a bearer token (the token never appears in config).
    Raises :class:`TelemetryError` when Prometheus is unreachable after ``attempts``, answers an error, or
    answers with warnings (partial data is never published).
    """
    first_ms, windows = _window_grid(start, end, step_seconds)
    step_ms = step_seconds * 1000
    per_chunk = min(chunk // timedelta(seconds=step_seconds), MAX_POINTS_PER_SERIES)
    if per_chunk < 1:
        raise ValueError(f"chunk {chunk} is shorter than one step of {step_seconds} s")
    labels = _Labels(node_label, pod_label, namespace_label, instance_label)
    range_text = f"{_iso(first_ms)}..{_iso(first_ms + windows * step_ms)}"

    inventory: set[tuple[str, str]] = set()
    unlabelled: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    batches: list[_HourBatch] = []
    with ExitStack() as stack:
        http = session if session is not None else stack.enter_context(requests.Session())
        client = PrometheusClient(
            url,
            http,
            token_env=token_env,
            timeout_seconds=timeout_seconds,
            attempts=attempts,
            backoff_seconds=backoff_seconds,
        )
        pending = _samples_frame({}, labels, step_ms, unlabelled)
        for offset in range(0, windows, per_chunk):
            chunk_start = first_ms + offset * step_ms
            chunk_end = chunk_start + min(per_chunk, windows - offset) * step_ms
            window_text = f"{_iso(chunk_start)}..{_iso(chunk_end)}"
            answers = {
                metric: client.query_range(
                    labels.query(metric, step_ms),
                    chunk_start + step_ms - 1,
                    chunk_end - 1,
                    step_ms,
                    what=f"query_range {metric} {window_text}",
                )
                for metric in DCGM_METRICS
            }
            found = client.series(INVENTORY_SELECTOR, chunk_start, chunk_end - 1, what=f"series {window_text}")
            inventory.update(key for key in map(labels.gpu_key, found) if key is not None)
            raw = pl.concat([pending, _samples_frame(answers, labels, step_ms, unlabelled)])
            # Hours complete at this chunk's end are decided and aggregated now: memory stays about one chunk.
            last = offset + per_chunk >= windows
            boundary = _timestamp(chunk_end if last else chunk_end - chunk_end % _HOUR_MS)
            ready, pending = raw.filter(pl.col("ts") < boundary), raw.filter(pl.col("ts") >= boundary)
            if ready.height or last:
                batches.append(_HourBatch.of(ready, aggregate, cluster=cluster, step_seconds=step_seconds))
        log.info("Prometheus %s: %s in %d chunk(s)", client.display_url, range_text, -(-windows // per_chunk))

    counts = Counter(metric for metric, _ in unlabelled)
    report = [
        f"{n} {metric} series without a {labels.node!r} and a {GPU_LABEL!r}/{UUID_LABEL!r} label skipped"
        for metric, n in sorted(counts.items())
    ]
    skipped = (
        pl.concat([batch.skipped for batch in batches])
        .group_by("node", "gpu", "metric")
        .agg(pl.col("len").sum())
        .sort("node", "gpu", "metric")
    )
    report += [
        f"{node} GPU {gpu}: {n} non-finite {metric} sample(s) skipped" for node, gpu, metric, n in skipped.iter_rows()
    ]
    measured = set(pl.concat([batch.gpus for batch in batches]).unique().iter_rows())
    report += _fallback_lines(pl.concat([batch.fallback_hours for batch in batches]))
    report += [
        f"{node} GPU {gpu}: no sample of a pricing metric in {range_text}; no activity rows (not counted as idle)"
        for node, gpu in sorted(inventory - measured)
    ]
    jobs = _pod_jobs(
        pl.concat([batch.pods for batch in batches]),
        cluster=cluster,
        source=source,
        step=timedelta(seconds=step_seconds),
        final_window=_timestamp(first_ms + (windows - 1) * step_ms),
    )
    activity = pl.concat([batch.activity for batch in batches])
    return PrometheusResult(activity=activity, jobs=jobs, fallbacks=report)


@dataclass(frozen=True)
class _HourBatch:
    """Whole UTC hours of samples, aggregated; small summaries of them for the report and jobs."""

    activity: pl.DataFrame
    skipped: pl.DataFrame
    """Non-finite samples per node, gpu, metric."""
    gpus: pl.DataFrame
    """node, gpu of every GPU with activity rows."""
    fallback_hours: pl.DataFrame
    """node, gpu, gpu_instance, hour priced by GPU_UTIL without SM or engine activity."""
    pods: pl.DataFrame
    """Per job_id (pods only), node, gpu and MIG instance: name, account, owner, profile, first and last sample."""

    @classmethod
    def of(cls, raw: pl.DataFrame, aggregate: SampleAggregator, *, cluster: str, step_seconds: int) -> _HourBatch:
        scale = pl.col("metric").replace_strict(METRIC_SCALE, default=1.0, return_dtype=pl.Float64)
        finite = raw.filter(pl.col("value").is_finite())
        samples = finite.with_columns(cluster=pl.lit(cluster), value=pl.col("value") / scale)
        activity = aggregate(samples.select(GPU_SAMPLES_SCHEMA.names()).cast(dict(GPU_SAMPLES_SCHEMA)), step_seconds)
        slice_hour = ["node", "gpu", "gpu_instance", "hour"]
        profiled = (
            finite.filter(pl.col("metric").is_in(PROFILING_METRICS))
            .select("node", "gpu", "gpu_instance", hour=pl.col("ts").dt.truncate("1h"))
            .unique()
        )
        fallback_hours = (
            activity.filter(pl.col("metric") == DCGM_GPU_UTIL)
            .select(slice_hour)
            .unique()
            .join(profiled, on=slice_hour, how="anti", nulls_equal=True)
        )
        pods = (
            finite.filter(pl.col("pod").is_not_null())
            .group_by("job_id", "node", "gpu", "gpu_instance")
            .agg(
                name=pl.col("pod").first(),
                account=pl.col("namespace").first(),
                owner=pl.col("owner").drop_nulls().first(),
                mig_profile=pl.col("mig_profile").drop_nulls().first(),
                first=pl.col("ts").min(),
                last=pl.col("ts").max(),
            )
        )
        return cls(
            activity=activity,
            skipped=raw.filter(~pl.col("value").is_finite()).group_by("node", "gpu", "metric").len(),
            gpus=activity.select("node", "gpu").unique(),
            fallback_hours=fallback_hours,
            pods=pods,
        )


@dataclass(frozen=True)
class _Labels:
    """Names of the labels read, as configured."""

    node: str
    pod: str
    namespace: str
    instance: str | None

    def __post_init__(self) -> None:
        for name in self.names():
            if not _LABEL_NAME.match(name):
                raise ValueError(f"{name!r} is not a Prometheus label name")

    def names(self) -> tuple[str, ...]:
        wanted = (
            self.node,
            GPU_LABEL,
            UUID_LABEL,
            MIG_INSTANCE_LABEL,
            MIG_PROFILE_LABEL,
            self.pod,
            self.namespace,
            HPC_JOB_LABEL,
            *OWNER_LABELS,
        )
        return tuple(dict.fromkeys((*wanted, self.instance) if self.instance else wanted))

    def query(self, metric: str, step_ms: int) -> str:
        # step - 1 ms evaluated at a window's last millisecond reads exactly that window (module docstring).
        how = "max" if metric == DCGM_FB_USED else "avg"
        by = ", ".join(dict.fromkeys((*self.names(), *TARGET_LABELS)))
        return f"{how} by ({by}) ({how}_over_time({metric}[{step_ms - 1}ms]))"

    def gpu_key(self, series: dict[str, str]) -> tuple[str, str] | None:
        node = series.get(self.node)
        gpu = series.get(GPU_LABEL) or series.get(UUID_LABEL)
        return (node, gpu) if node and gpu else None


def _samples_frame(
    answers: dict[str, list[dict[str, Any]]],
    labels: _Labels,
    step_ms: int,
    unlabelled: set[tuple[str, tuple[tuple[str, str], ...]]],
) -> pl.DataFrame:
    """One row per (series, window): node, gpu, MIG instance and profile, ts (window start), value as exported,
    metric and job labels.

    Series without node or GPU labels are left out and added to ``unlabelled``.
    """
    names = (
        "node",
        "gpu",
        "gpu_instance",
        "mig_profile",
        "ts",
        "value",
        "metric",
        "job_id",
        "instance_id",
        "pod",
        "namespace",
        "owner",
    )
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for metric, found in answers.items():
        for series in found:
            try:
                tags: dict[str, str] = series["metric"]
                points = [(round(float(t) * 1000) - step_ms + 1, float(v)) for t, v in series["values"]]
            except (KeyError, TypeError, ValueError) as exc:
                raise TelemetryError(f"unexpected {metric} series in a Prometheus answer: {exc!r}") from exc
            key = labels.gpu_key(tags)
            if key is None:
                unlabelled.add((metric, tuple(sorted(tags.items()))))
                continue
            pod = tags.get(labels.pod)
            namespace = tags.get(labels.namespace)
            if pod:
                job_id: str | None = f"{namespace}/{pod}" if namespace else pod
            else:
                job_id = tags.get(HPC_JOB_LABEL)
            fixed = {
                "node": key[0],
                "gpu": key[1],
                "gpu_instance": tags.get(MIG_INSTANCE_LABEL) or None,
                "mig_profile": tags.get(MIG_PROFILE_LABEL) or None,
                "metric": metric,
                "job_id": job_id,
                "instance_id": tags.get(labels.instance) if labels.instance else None,
                "pod": pod,
                "namespace": namespace if pod else None,
                "owner": next((tags[name] for name in OWNER_LABELS if tags.get(name)), None) if pod else None,
            }
            for name, value in fixed.items():
                columns[name].extend([value] * len(points))
            columns["ts"].extend(ts for ts, _ in points)
            columns["value"].extend(value for _, value in points)
    schema = {name: pl.String for name in columns} | {"ts": pl.Int64, "value": pl.Float64}
    frame = pl.DataFrame(columns, schema=schema)
    return frame.with_columns(pl.col("ts").cast(pl.Datetime("ms", "UTC")).cast(UTC_TIME))


def _fallback_lines(fallback_hours: pl.DataFrame) -> list[str]:
    fell_back = (
        fallback_hours.group_by("node", "gpu", "gpu_instance")
        .agg(hours=pl.col("hour").n_unique(), first=pl.col("hour").min(), last=pl.col("hour").max())
        .sort("node", "gpu", "gpu_instance", nulls_last=False)
    )
    return [
        f"{node} GPU {gpu}{f' MIG {instance}' if instance else ''}: no {' or '.join(PROFILING_METRICS)}, "
        f"used {DCGM_GPU_UTIL} / 100 in {hours} hour(s) from {first:%Y-%m-%dT%H:%MZ} to {last:%Y-%m-%dT%H:%MZ}"
        for node, gpu, instance, hours, first, last in fell_back.iter_rows()
    ]


def _pod_jobs(
    pods: pl.DataFrame, *, cluster: str, source: str, step: timedelta, final_window: datetime
) -> pl.DataFrame:
    """One JOBS_SCHEMA row per pod: first and last sampled window; RUNNING if sampled in the final window.

    Its MIG profile is the one every slice it held has; null for whole GPUs or a mix.
    """
    profile = pl.col("mig_profile")
    jobs = (
        pods.group_by("job_id")
        .agg(
            name=pl.col("name").first(),
            account=pl.col("account").first(),
            nodes=pl.col("node").unique().sort(),
            gpu_count=pl.struct("node", "gpu", "gpu_instance").n_unique().cast(pl.Int32),
            gpu_ids=pl.concat_str("node", pl.lit(":"), "gpu").unique().sort(),
            mig_profile=pl.when(profile.is_not_null().all() & (profile.n_unique() == 1)).then(profile.first()),
            start=pl.col("first").min(),
            last=pl.col("last").max(),
            run_group=pl.col("owner").drop_nulls().first(),
        )
        .sort("job_id")
    )
    running = pl.col("last") == pl.lit(final_window, dtype=UTC_TIME)
    return jobs.with_columns(
        cluster=pl.lit(cluster),
        end=pl.when(running).then(None).otherwise(pl.col("last") + step),
        state=pl.when(running).then(pl.lit("RUNNING")).otherwise(pl.lit("UNKNOWN")),
        scheduler_job_id=pl.col("job_id"),
        project=None,
        user=None,
        partition=None,
        qos=None,
        gpu_model=None,
        checkpoint_uri=None,
        source=pl.lit(source),
    ).select([pl.col(name).cast(dtype) for name, dtype in JOBS_SCHEMA.items()])


def _window_grid(start: datetime, end: datetime, step_seconds: int) -> tuple[int, int]:
    """First window's start in epoch milliseconds and the number of windows."""
    if step_seconds < 1 or _HOUR_MS % (step_seconds * 1000):
        raise ValueError(f"step_seconds must divide an hour, not {step_seconds}")
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("start and end must be timezone-aware")
    step_ms = step_seconds * 1000
    start_ms = (start - _EPOCH) // timedelta(milliseconds=1)
    end_ms = (end - _EPOCH) // timedelta(milliseconds=1)
    if start_ms % step_ms or end_ms % step_ms:
        raise ValueError(f"start and end must be multiples of the {step_seconds} s step: {start}, {end}")
    if end_ms <= start_ms:
        raise ValueError(f"empty range {start}..{end}")
    return start_ms, (end_ms - start_ms) // step_ms


def _api_error(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    return f" {body.get('errorType')}: {body.get('error')}" if isinstance(body, dict) else ""


def _answer_data(response: requests.Response, where: str) -> Any:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise TelemetryError(f"{where}: HTTP {response.status_code}, not a Prometheus API answer")
    if body.get("status") == "error":
        raise TelemetryError(f"{where}: {body.get('errorType')}: {body.get('error')}")
    if body.get("status") != "success" or "data" not in body:
        raise TelemetryError(f"{where}: HTTP {response.status_code}, not a Prometheus API answer")
    if body.get("warnings"):
        raise TelemetryError(f"{where}: partial answer, Prometheus warned: {'; '.join(map(str, body['warnings']))}")
    return body["data"]


def _seconds(ms: int) -> str:
    return f"{ms // 1000}.{ms % 1000:03d}"


def _timestamp(ms: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=ms)


def _iso(ms: int) -> str:
    return f"{_timestamp(ms):%Y-%m-%dT%H:%M:%SZ}"
