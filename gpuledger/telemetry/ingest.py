"""Telemetry ingestion: each configured source's jobs and hourly GPU activity into the ``gpu`` schema.

A source's rows are replaced as a whole (files, Slurm accounting) or for the queried window (Prometheus),
in one transaction per source, so re-running never duplicates anything. Files already loaded as they are now, by
this code and configuration, are not read again: every month's split of a run reads the same files. What could
not be attributed (jobs on nodes mapped to no cloud resource, samples labelled with unknown jobs, times in the
future) is reported, recorded in ``meta.telemetry_loads`` and left out of the split rather than guessed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from connectors.telemetry import prometheus, slurm
from gpuledger.telemetry import files
from gpuledger.telemetry.samples import SampleAggregation, sample_aggregator
from gpuledger.warehouse.database import transaction, write_allocation_config
from gpuledger.warehouse.fingerprints import code_version, file_stats, files_under, fingerprint
from gpuledger.warehouse.sqlfiles import load_sql, quote_ident
from models.allocation import AllocationConfig
from models.billing_month import BillingMonth
from models.config import TelemetryConfig
from models.errors import InputError
from models.telemetry import GPU_ACTIVITY_SCHEMA, JOBS_SCHEMA

log = logging.getLogger(__name__)

_JOB_COLUMNS = {name: name for name in JOBS_SCHEMA.names()} | {"start": "start_time", "end": "end_time"}


@dataclass(frozen=True)
class TelemetryLoad:
    source: str
    kind: str
    jobs: int
    activity_rows: int
    notes: tuple[str, ...]
    read: bool = True
    """False when the source's files were loaded as they are and their rows kept."""


def ingest_telemetry(
    con: duckdb.DuckDBPyConnection,
    sources: Sequence[TelemetryConfig],
    allocation: AllocationConfig,
    month: str,
    *,
    now: datetime | None = None,
) -> list[TelemetryLoad]:
    """Load every telemetry source; Prometheus is queried for billing month ``YYYY-MM`` (up to ``now``)."""
    now = now or datetime.now(UTC)
    with transaction(con):  # one commit for its 24 statements, not one each (on a lake, a snapshot each)
        write_allocation_config(con, allocation)  # node mappings decide what is reported as unattributable
    return [_logged(_ingest(con, source, allocation, month, now)) for source in sources]


def _logged(load: TelemetryLoad) -> TelemetryLoad:
    """``load``, its notes logged as it ends: read or kept, what a source's rows cannot tell is said at every load."""
    for note in load.notes:
        log.warning("telemetry %s: %s", load.source, note)
    return load


def _ingest(
    con: duckdb.DuckDBPyConnection, source: TelemetryConfig, allocation: AllocationConfig, month: str, now: datetime
) -> TelemetryLoad:
    window: tuple[datetime, datetime] | None = None
    notes: list[str] = []
    checkpoints = egress = None
    activity = pl.DataFrame(schema=GPU_ACTIVITY_SCHEMA)
    aggregation = SampleAggregation(source.name, allocation.idle_threshold, allocation.pricing_metrics)
    version = None
    if source.kind != "prometheus":
        version = fingerprint(
            code_version(), source.name, source.kind, source.cluster, sorted(source.options.items()),
            aggregation, allocation.sample_interval_seconds, source_files(source),
        )  # fmt: skip
        if kept := _kept_load(con, source, version):
            return kept
    if source.kind == "slurm":
        run_group_from = source.options.get("run_group_from", ("comment",))
        assert isinstance(run_group_from, tuple)  # the config parses it as a list of names
        frames = [
            slurm.read_sacct(
                p,
                cluster=source.cluster,
                timezone=str(source.options.get("timezone", "UTC")),
                source=source.name,
                run_group_from=run_group_from,
            )
            for p in _files(source.paths["path"])
        ]
        # Periodic dumps repeat attempts that span them (RUNNING in one, finished in the next): the newest
        # file, by name, holds the latest record of an attempt, (JobID, start); attempts are numbered over all.
        attempt = ["cluster", "scheduler_job_id", "start"]
        jobs = slurm.number_attempts(
            _concat(frames, JOBS_SCHEMA).unique(subset=attempt, keep="last", maintain_order=True)
        )
        if "gpu_map" in source.paths:
            jobs = slurm.with_gpu_ids(jobs, slurm.read_gpu_map(source.paths["gpu_map"]), cluster=source.cluster)
    elif source.kind == "prometheus":
        billing_month = BillingMonth.parse(month)
        start, end = billing_month.start, billing_month.end
        window = (start, min(end, now.replace(minute=0, second=0, microsecond=0)))
        with sample_aggregator(aggregation) as aggregate:
            result = prometheus.fetch_gpu_activity(
                str(source.options["url"]),
                *window,
                cluster=source.cluster,
                aggregate=aggregate,
                step_seconds=int(source.options.get("step_seconds", allocation.sample_interval_seconds)),
                node_label=str(source.options.get("node_label", "Hostname")),
                instance_label=_optional(source.options.get("instance_label")),
                token_env=_optional(source.options.get("token_env")),
                source=source.name,
            )
        jobs, activity = result.jobs, result.activity
        notes.extend(result.fallbacks)
    else:
        jobs = _concat(
            [
                files.read_jobs_file(p, cluster=source.cluster, source=source.name)
                for p in _files(source.paths.get("jobs"))
            ],
            JOBS_SCHEMA,
        )
        sample_files = _files(source.paths.get("samples"))
        if sample_files:
            activity = files.read_samples_file(
                sample_files,
                cluster=source.cluster,
                aggregation=aggregation,
                interval_seconds=allocation.sample_interval_seconds,
                con=con,
            )
        checkpoints = _concat([files.read_checkpoint_inventory(p) for p in _files(source.paths.get("checkpoints"))])
        egress = _concat(
            [files.read_egress_file(p, cluster=source.cluster) for p in _files(source.paths.get("egress"))]
        )
    notes.extend(_future_times(jobs, activity, now))
    with transaction(con):
        _replace(con, source, jobs, activity, window, checkpoints, egress)
        notes.extend(_unattributable(con, source.name))
        con.execute(
            "INSERT INTO meta.telemetry_loads VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [source.name, source.kind, now, *(window or (None, None)), jobs.height, activity.height, notes, version],
        )
    return TelemetryLoad(source.name, source.kind, jobs.height, activity.height, tuple(notes))


def source_files(source: TelemetryConfig) -> dict[str, list[tuple[str, int, int]]]:
    """Each configured path's files, named from the path's folder (a home moved elsewhere names them alike), with
    their sizes and modification times: what a new or rewritten file changes."""
    return {name: file_stats(path.parent, files_under(path)) for name, path in sorted(source.paths.items())}


def _kept_load(con: duckdb.DuckDBPyConnection, source: TelemetryConfig, version: str) -> TelemetryLoad | None:
    """The source's last load, when it read these files with this code and configuration, its rows are all still
    there and it named nothing but what cannot be attributed now (times in the future were not): reading the files
    again would change nothing. None: read them."""
    last = con.execute(load_sql("telemetry/last_load.sql"), {"source": source.name}).fetchone()
    if last is None:
        return None
    last_version, jobs, activity_rows, jobs_now, activity_rows_now, last_notes = last
    if last_version != version or (jobs, activity_rows) != (jobs_now, activity_rows_now):
        return None
    notes = _unattributable(con, source.name)
    if list(last_notes) != notes:
        return None
    return TelemetryLoad(source.name, source.kind, jobs, activity_rows, tuple(notes), read=False)


def _replace(
    con: duckdb.DuckDBPyConnection,
    source: TelemetryConfig,
    jobs: pl.DataFrame,
    activity: pl.DataFrame,
    window: tuple[datetime, datetime] | None,
    checkpoints: pl.DataFrame | None,
    egress: pl.DataFrame | None,
) -> None:
    params = {"source": source.name}
    if window is None:
        con.execute("DELETE FROM gpu.jobs WHERE source = $source", params)
        con.execute("DELETE FROM gpu.activity WHERE source = $source", params)
    else:
        # A metrics server is queried for one window: only that window's rows (and the pods seen in it) change.
        window_params = params | {"start": window[0], "end": window[1]}
        con.execute("DELETE FROM gpu.activity WHERE source = $source AND hour >= $start AND hour < $end", window_params)
        # A pod seen in an earlier window keeps its first start: each window only sees its own samples.
        ids = params | {"ids": jobs["job_id"].to_list()}
        earlier = con.execute(
            "SELECT job_id, start_time FROM gpu.jobs WHERE source = $source AND job_id IN (SELECT unnest($ids))", ids
        ).fetchall()
        if earlier:
            starts = pl.DataFrame(
                earlier, schema={"job_id": pl.String, "earlier_start": JOBS_SCHEMA["start"]}, orient="row"
            )
            jobs = (
                jobs.join(starts, on="job_id", how="left")
                .with_columns(start=pl.min_horizontal("start", "earlier_start"))
                .drop("earlier_start")
            )
        con.execute("DELETE FROM gpu.jobs WHERE source = $source AND job_id IN (SELECT unnest($ids))", ids)
    duplicates = jobs.group_by("cluster", "job_id").len().filter(pl.col("len") > 1)
    if duplicates.height:
        first = duplicates.row(0, named=True)
        raise InputError(source.name, f"job {first['job_id']} of cluster {first['cluster']} appears twice")
    insert_frame(con, "gpu.jobs", jobs.rename(_JOB_COLUMNS))
    insert_frame(con, "gpu.activity", activity)
    replaced = (
        ("gpu.checkpoint_bytes", "telemetry/delete_checkpoint_bytes.sql", checkpoints),
        ("gpu.egress_bytes", "telemetry/delete_egress_bytes.sql", egress),
    )
    for table, delete, frame in replaced:
        if frame is not None:
            con.execute(load_sql(delete), params)
            insert_frame(con, table, frame.with_columns(source=pl.lit(source.name)))


_INSERT_SLICE_ROWS = 500_000
"""Rows handed to DuckDB at a time: a month of a large fleet's activity is millions of rows, and converting it
whole would hold a second copy of it while it is inserted."""


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    """Append a frame's rows to ``table`` (a project table name) by column name."""
    name = ".".join(quote_ident(part) for part in table.split("."))
    for rows in frame.iter_slices(_INSERT_SLICE_ROWS):
        con.register("telemetry_frame", rows.to_arrow())
        try:
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM telemetry_frame")  # noqa: S608  (table name quoted)
        finally:
            con.unregister("telemetry_frame")


def _unattributable(con: duckdb.DuckDBPyConnection, source: str) -> list[str]:
    """Reported, never priced: what the split cannot tie to a job or to a cloud resource, and samples handed over
    more than once (counted once)."""
    return [
        row[0]
        for name in ("telemetry/unattributable.sql", "telemetry/duplicate_samples.sql")
        for row in con.execute(load_sql(name), {"source": source}).fetchall()
    ]


def _future_times(jobs: pl.DataFrame, activity: pl.DataFrame, now: datetime) -> list[str]:
    """Clock skew: times after now are kept as reported but named, so a wrong clock is noticed."""
    horizon = now + timedelta(minutes=5)
    notes = []
    late_jobs = jobs.filter((pl.col("start") > horizon) | (pl.col("end") > horizon))
    if late_jobs.height:
        notes.append(
            f"{late_jobs.height} job(s) start or end in the future (clock skew?), e.g. {late_jobs['job_id'][0]}"
        )
    late_hours = activity.filter(pl.col("hour") > horizon)
    if late_hours.height:
        notes.append(f"{late_hours.height} activity row(s) are timed in the future (clock skew?)")
    return notes


def _files(path: Path | None) -> list[Path]:
    """A configured file, or the data files of a configured folder, sorted; a missing path is an error."""
    if path is None:
        return []
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(path, "telemetry path does not exist")
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


def _concat(frames: list[pl.DataFrame], schema: pl.Schema | None = None) -> pl.DataFrame:
    if frames:
        return pl.concat(frames)
    return pl.DataFrame(schema=schema) if schema is not None else pl.DataFrame()


def _optional(value: str | int | tuple[str, ...] | None) -> str | None:
    return None if value is None else str(value)
