"""Plain job and utilization files, for schedulers and metrics systems gpuledger does not speak.

CSV is read as text and cast strictly; Parquet keeps its types. Every check runs in DuckDB first and,
only when one fails, the offending file is scanned again to name the first bad row (1-based data row).
Times are ISO 8601; naive times are UTC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from connectors.telemetry.slurm import expand_nodelist, parse_gpu_indices
from gpuledger.normalize.files import cast_expr, first_bad_row, read_raw
from gpuledger.telemetry.samples import SampleAggregation, aggregate_samples
from gpuledger.warehouse.sqlfiles import create_temp_view, quote_ident
from models.errors import InputError
from models.telemetry import DCGM_FB_USED, JOB_STATES, JOBS_SCHEMA, SAMPLE_FILE_METRICS

_JOBS_REQUIRED = ("job_id", "nodes", "gpu_count", "start", "state")
_JOBS_TEXT = (
    "scheduler_job_id",
    "name",
    "project",
    "user",
    "partition",
    "qos",
    "gpu_model",
    "gpus",
    "mig_profile",
    "run_group",
    "checkpoint_uri",
)
_SAMPLES_REQUIRED = ("node", "gpu", "timestamp")
_SAMPLES_TEXT = ("gpu_instance", "mig_profile", "job_id", "instance_id")
_UTILIZATION = "utilization"
"""The value column whose metric the optional ``metric`` column names."""
# regexp_full_match pattern of a MIG profile ("1g.10gb", "3g.40gb"), compared in lower case.
_MIG_PROFILE = r"[0-9]+g\.[0-9]+gb"


@dataclass(frozen=True)
class _Check:
    """A rule every value of ``column`` must pass.

    ``predicate`` is SQL over ``{t}`` (the value as trimmed text, NULL if empty), true for a bad value;
    it is written by this module, never taken from input. ``typed`` is the same rule over a typed (Parquet)
    column's own values ``{t}``, for the column types starting with one of ``typed_for``: it skips the text
    conversion that would dominate a large scan. Other types are checked as text, like CSV.
    """

    column: str
    predicate: str
    problem: str  # may name the raw value as {value}
    params: dict[str, object] = field(default_factory=dict)
    typed: str | None = None
    typed_for: tuple[str, ...] = ("",)


def _text(value_sql: str) -> str:
    return f"nullif(trim(CAST({value_sql} AS VARCHAR)), '')"


def _required_value(column: str) -> _Check:
    return _Check(column, "{t} IS NULL", "value is empty", typed="{t} IS NULL")


def _timestamp(column: str) -> _Check:
    """An ISO 8601 time; naive ones (text or a Parquet TIMESTAMP without zone) are UTC. A typed date or
    timestamp is a time by its type, so only its infinities are refused (cheaply: no cast to TIMESTAMPTZ)."""
    return _Check(
        column,
        "{t} IS NOT NULL AND NOT coalesce(isfinite(TRY_CAST({t} AS TIMESTAMPTZ)), false)",
        "{value!r} is not an ISO 8601 time (naive times are UTC)",
        typed="NOT isfinite({t})",
        typed_for=("TIMESTAMP", "DATE"),
    )


def read_jobs_file(path: Path, *, cluster: str | None = None, source: str = "files") -> pl.DataFrame:
    """Jobs (``JOBS_SCHEMA``) of a CSV or Parquet file, in file order; jobs without GPUs are left out.

    Columns: job_id, scheduler_job_id? (default job_id; an attempt's id may differ, e.g. ``1234#1``), cluster
    (unless ``cluster`` is given), name?, account (or team), project?, user?, partition?, qos?, nodes
    (``;``-separated and/or Slurm hostlist expressions; a list in Parquet), gpu_model?, gpu_count, gpus? (which
    GPUs: ``0-1`` = those indices on every node, or per node ``gpu-01:0-1;gpu-02:0,3``; for whole GPUs it must
    name gpu_count of them), mig_profile? (``1g.10gb``: gpu_count counts slices), start, end? (empty while
    running), state (one of JOB_STATES), run_group? (only as given: empty is no run group), checkpoint_uri?.
    """
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        raw = read_raw(con, [path])
        types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
        owner = _owner_column(path, types)
        _require_columns(path, types, (*_JOBS_REQUIRED, *(() if cluster else ("cluster",))))
        create_temp_view(con, "jobs_raw", raw)
        checks = [
            _required_value("job_id"),
            _required_value(owner),
            _required_value("gpu_count"),
            _Check(
                "gpu_count",
                "{t} IS NOT NULL AND (NOT regexp_full_match({t}, '[0-9]+') OR TRY_CAST({t} AS INTEGER) IS NULL)",
                "{value!r} is not a whole number of GPUs",
            ),
            _required_value("start"),
            _timestamp("start"),
            _required_value("state"),
            _Check(
                "state",
                "{t} IS NOT NULL AND NOT list_contains($job_states, upper({t}))",
                f"unknown state {{value!r}} (expected one of {', '.join(JOB_STATES)})",
                {"job_states": list(JOB_STATES)},
            ),
        ]
        if "mig_profile" in types:
            checks.append(_mig_profile())
        if "end" in types:
            checks.append(_timestamp("end"))
        if "cluster" in types and not cluster:
            checks.append(_required_value("cluster"))
        _check(con, [path], "jobs_raw", checks, types)
        is_list = types["nodes"].endswith("[]")
        nodes = 'CAST("nodes" AS VARCHAR[])' if is_list else cast_expr("nodes", types["nodes"], "VARCHAR")
        end = cast_expr("end", types["end"], "TIMESTAMPTZ") if "end" in types else "NULL::TIMESTAMPTZ"
        selects = [
            f"{cast_expr('job_id', types['job_id'], 'VARCHAR')} AS job_id",
            f"{_cluster_expr(types)} AS cluster",
            f"{cast_expr(owner, types[owner], 'VARCHAR')} AS account",
            *(f"{_optional_text(name, types)} AS {quote_ident(name)}" for name in _JOBS_TEXT if name != "mig_profile"),
            f"lower({_optional_text('mig_profile', types)}) AS mig_profile",
            f"{nodes} AS nodes",
            f"CAST({_text(quote_ident('gpu_count'))} AS INTEGER) AS gpu_count",
            f"{cast_expr('start', types['start'], 'TIMESTAMPTZ')} AS start",
            f'{end} AS "end"',
            f"upper({_text(quote_ident('state'))}) AS state",
        ]
        _bind_defaults(con, cluster)
        # columns from the file's header, quoted; configured values bound in sample_defaults
        frame = con.sql(f"SELECT {', '.join(selects)} FROM jobs_raw CROSS JOIN sample_defaults").pl()  # noqa: S608
    return _jobs(path, frame, source)


def _owner_column(path: Path, types: dict[str, str]) -> str:
    """``account``, or ``team`` as its alias; one of the two, not both."""
    if "account" in types and "team" in types:
        raise InputError(path, "both account and team columns; keep one (team is an alias of account)", column="team")
    if "team" in types:
        return "team"
    _require_columns(path, types, ("account",))
    return "account"


def _jobs(path: Path, frame: pl.DataFrame, source: str) -> pl.DataFrame:
    """Expand nodes and GPUs and check what SQL cannot: end against start and state, one row per
    (cluster, job_id)."""
    rows: dict[str, list[object]] = {name: [] for name in JOBS_SCHEMA.names()}
    seen: set[tuple[str, str]] = set()
    for index, job in enumerate(frame.iter_rows(named=True)):
        row = index + 1
        key = (job["cluster"], job["job_id"])
        if key in seen:
            raise InputError(path, f"job {key[1]} of cluster {key[0]} appears twice", row=row, column="job_id")
        seen.add(key)
        if (job["end"] is None) != (job["state"] == "RUNNING"):
            problem = "a running job has an end time" if job["end"] else f"a {job['state']} job needs an end time"
            raise InputError(path, problem, row=row, column="end")
        if job["end"] is not None and job["end"] < job["start"]:
            raise InputError(path, "end is before start", row=row, column="end")
        if job["gpu_count"] == 0:
            continue
        job["nodes"] = _nodes(path, row, job["nodes"])
        job["gpu_ids"] = _gpu_ids(path, row, job)
        job["scheduler_job_id"] = job["scheduler_job_id"] or job["job_id"]
        job["source"] = source
        for name in JOBS_SCHEMA.names():
            rows[name].append(job[name])
    return pl.DataFrame(rows, schema=JOBS_SCHEMA)


def _nodes(path: Path, row: int, value: str | list[str | None] | None) -> list[str]:
    """Node names of a ``;``-separated list of Slurm hostlist expressions, or of a Parquet list."""
    try:
        if isinstance(value, list):
            nodes = [node.strip() if node else "" for node in value]
            if not all(nodes):
                raise ValueError("empty node name in the list")
        else:
            nodes = [node for part in (value or "").split(";") for node in expand_nodelist(part.strip())]
        if not nodes:
            raise ValueError("no nodes")
        if len(set(nodes)) < len(nodes):
            raise ValueError("a node is listed twice")
    except ValueError as exc:
        raise InputError(path, str(exc), row=row, column="nodes") from exc
    return nodes


def _gpu_ids(path: Path, row: int, job: dict[str, object]) -> list[str] | None:
    """``node:index`` of a ``gpus`` value: indices for every node (``0-1``) or per node (``gpu-01:0-1;gpu-02:3``)."""
    value, nodes = job["gpus"], job["nodes"]
    if value is None:
        return None
    assert isinstance(value, str) and isinstance(nodes, list)
    try:
        if ":" not in value:
            indices = parse_gpu_indices(value)
            ids = [f"{node}:{index}" for node in nodes for index in indices]
        else:
            held: dict[str, tuple[int, ...]] = {}
            for part in value.split(";"):
                node, _, text = (piece.strip() for piece in part.partition(":"))
                if node not in nodes:
                    raise ValueError(f"{node!r} is not one of the job's nodes")
                if node in held:
                    raise ValueError(f"node {node!r} is listed twice")
                held[node] = parse_gpu_indices(text)
            ids = [f"{node}:{index}" for node in nodes for index in held.get(node, ())]
    except ValueError as exc:
        raise InputError(path, str(exc), row=row, column="gpus") from exc
    # MIG slices are counted, not the GPUs they are cut from: only whole GPUs must match the count.
    if job["mig_profile"] is None and len(ids) != job["gpu_count"]:
        raise InputError(path, f"names {len(ids)} GPU(s), gpu_count is {job['gpu_count']}", row=row, column="gpus")
    return ids


def read_samples_file(
    path: Path | Sequence[Path],
    *,
    cluster: str | None = None,
    aggregation: SampleAggregation,
    interval_seconds: float,
    con: duckdb.DuckDBPyConnection | None = None,
) -> pl.DataFrame:
    """Hourly GPU activity (``GPU_ACTIVITY_SCHEMA``) of GPU sample files (CSV or Parquet).

    Columns: node, gpu, gpu_instance? and mig_profile? (a MIG slice), timestamp, job_id?, instance_id?, cluster
    (unless ``cluster`` is given), and one or more value columns (``SAMPLE_FILE_METRICS``): utilization,
    sm_active, tensor_active, dram_active, engine_active, gpu_util (ratios 0..1), fb_used_mib (MiB, not
    negative); metric? names the metric of the utilization column (default ``file:utilization``). An empty
    value is no sample of that metric, unless the file has only one value column. Each value is one sample of
    its metric; ``aggregation`` picks the pricing metric per GPU-hour. Samples stay in DuckDB; ``con`` lends its
    database and settings (a cursor of it is used, so its session is left as it was).
    """
    files = [path] if isinstance(path, Path) else list(path)
    if not files:
        raise ValueError("no sample files given")
    with con.cursor() if con is not None else duckdb.connect() as session:
        session.execute("SET TimeZone = 'UTC'")
        raw = read_raw(session, files)
        types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
        _require_columns(files[0], types, (*_SAMPLES_REQUIRED, *(() if cluster else ("cluster",))))
        values = [name for name in SAMPLE_FILE_METRICS if name in types]
        if not values:
            raise InputError(
                files[0], f"no value column: one of {', '.join(SAMPLE_FILE_METRICS)} is required", column=_UTILIZATION
            )
        create_temp_view(session, "samples_raw", raw)
        checks = [
            _required_value("node"),
            _required_value("gpu"),
            _required_value("timestamp"),
            _timestamp("timestamp"),
            *(_required_value(name) for name in values if len(values) == 1),
            *(check for name in values for check in _sample_value(name)),
        ]
        if "mig_profile" in types:
            checks.append(_mig_profile())
        if "cluster" in types and not cluster:
            checks.append(_required_value("cluster"))
        _check(session, files, "samples_raw", checks, types)
        _bind_defaults(session, cluster)
        _bind_sample_metrics(session, values)
        keys = [
            f"{_cluster_expr(types)} AS cluster",
            f"{cast_expr('node', types['node'], 'VARCHAR')} AS node",
            f"{cast_expr('gpu', types['gpu'], 'VARCHAR')} AS gpu",
            *(f"{_optional_text(name, types)} AS {quote_ident(name)}" for name in _SAMPLES_TEXT),
            f"{_sample_time(types['timestamp'])} AS ts",
            f"{_optional_text('metric', types)} AS row_metric",
        ]
        casts = [f"{cast_expr(name, types[name], 'DOUBLE')} AS {quote_ident(name)}" for name in values]
        # columns from the files' header, quoted; configured values bound in sample_defaults and sample_metrics
        wide = f"SELECT {', '.join(keys + casts)} FROM samples_raw CROSS JOIN sample_defaults"  # noqa: S608
        columns = ", ".join(quote_ident(name) for name in values)
        # One row per non-empty value (UNPIVOT leaves NULLs out), streamed: samples never leave DuckDB.
        samples = session.sql(
            "SELECT cluster, node, gpu, gpu_instance, lower(mig_profile) AS mig_profile, ts,"  # noqa: S608
            " CASE WHEN sample_metrics.takes_row_metric THEN coalesce(row_metric, sample_metrics.metric)"
            " ELSE sample_metrics.metric END AS metric, value, job_id, instance_id"
            f" FROM (UNPIVOT ({wide}) ON {columns} INTO NAME value_column VALUE value)"
            " JOIN sample_metrics USING (value_column)"
        )
        return aggregate_samples(session, samples, aggregation, interval_seconds=interval_seconds)


def _sample_value(column: str) -> list[_Check]:
    """A number: a ratio 0..1, or for the framebuffer a finite number of MiB, not negative."""
    number = _Check(
        column,
        "{t} IS NOT NULL AND TRY_CAST({t} AS DOUBLE) IS NULL",
        "{value!r} is not a number",
        typed="{t} IS NOT NULL AND TRY_CAST({t} AS DOUBLE) IS NULL",
    )
    if SAMPLE_FILE_METRICS[column] == DCGM_FB_USED:
        bounded = "NOT (isfinite(TRY_CAST({t} AS DOUBLE)) AND TRY_CAST({t} AS DOUBLE) >= 0)"
        return [number, _Check(column, bounded, f"{column} {{value}} is not a number of MiB >= 0", typed=bounded)]
    ratio = "NOT (TRY_CAST({t} AS DOUBLE) BETWEEN 0 AND 1)"
    problem = f"{column} {{value}} is outside 0..1; it is a ratio (divide percentages by 100)"
    return [number, _Check(column, ratio, problem, typed=ratio)]


def _mig_profile() -> _Check:
    return _Check(
        "mig_profile",
        "{t} IS NOT NULL AND NOT regexp_full_match(lower({t}), $mig_profile)",
        "{value!r} is not a MIG profile (e.g. 1g.10gb)",
        {"mig_profile": _MIG_PROFILE},
    )


def _sample_time(raw_type: str) -> str:
    """A naive Parquet timestamp is UTC and goes through as is: the aggregation only takes its epoch, and
    the cast to TIMESTAMPTZ would cost more than the whole aggregation."""
    if raw_type.startswith("TIMESTAMP") and "TIME ZONE" not in raw_type:
        return quote_ident("timestamp")
    return cast_expr("timestamp", raw_type, "TIMESTAMPTZ")


def _require_columns(file: Path, types: dict[str, str], names: Sequence[str]) -> None:
    for name in names:
        if name not in types:
            raise InputError(file, "required column is missing", column=name)


def _optional_text(name: str, types: dict[str, str]) -> str:
    return cast_expr(name, types[name], "VARCHAR") if name in types else "NULL::VARCHAR"


def _bind_defaults(con: duckdb.DuckDBPyConnection, cluster: str | None) -> None:
    """Configured values as a one-row table: a relation built with bound parameters is materialized
    eagerly, which would pull every sample into memory before aggregating."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE sample_defaults AS SELECT CAST($cluster AS VARCHAR) AS default_cluster",
        {"cluster": cluster},
    )


def _bind_sample_metrics(con: duckdb.DuckDBPyConnection, values: Sequence[str]) -> None:
    """The metric of each value column, as a table (bound, like ``sample_defaults``); the utilization column's
    is the default of the row's ``metric`` column."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE sample_metrics AS SELECT unnest($columns) AS value_column,"
        " unnest($metrics) AS metric, unnest($columns) = $utilization AS takes_row_metric",
        {
            "columns": list(values),
            "metrics": [SAMPLE_FILE_METRICS[name] for name in values],
            "utilization": _UTILIZATION,
        },
    )


def _cluster_expr(types: dict[str, str]) -> str:
    """The row's cluster, else the configured one (a file may leave the column out)."""
    if "cluster" in types:
        return f"coalesce({cast_expr('cluster', types['cluster'], 'VARCHAR')}, sample_defaults.default_cluster)"
    return "sample_defaults.default_cluster"


def _check(
    con: duckdb.DuckDBPyConnection,
    files: Sequence[Path],
    view: str,
    checks: Sequence[_Check],
    types: dict[str, str] | None = None,
) -> None:
    """Raise an InputError naming the first row (in the first file that has one) that fails a check.

    With ``types``, a check with a ``typed`` rule for the column's type reads the values as they are; every
    other check reads them as text. Either way every check runs on every column it names.
    """
    types = types or {}
    predicates = []
    for check in checks:
        column_type = types.get(check.column, "VARCHAR")
        if check.typed is not None and column_type != "VARCHAR" and column_type.startswith(check.typed_for):
            predicates.append(check.typed.format(t=quote_ident(check.column)))
        else:
            predicates.append(check.predicate.format(t=_text(quote_ident(check.column))))
    flags = con.execute(
        # our checks over the file's columns, quoted; their values are bound
        "SELECT " + ", ".join(f"coalesce(bool_or({p}), false)" for p in predicates) + f" FROM {view}",  # noqa: S608
        {name: value for check in checks for name, value in check.params.items()},
    ).fetchone()
    assert flags is not None
    failing = [check for check, flag in zip(checks, flags, strict=True) if flag]
    for file in files:
        found = []
        for order, check in enumerate(failing):
            hit = first_bad_row(con, file, check.column, check.predicate.format(t=_text("v")), check.params)
            if hit:
                found.append((hit[0], order, hit[1]))
        if found:
            row, order, value = min(found)
            check = failing[order]
            raise InputError(file, check.problem.format(value=value), row=row, column=check.column)
    if failing:
        # Reached only if a re-read of the files disagrees with the first read (a file changed meanwhile).
        raise InputError(files[0], failing[0].problem.format(value="?"), column=failing[0].column)


def _whole_number(column: str) -> _Check:
    return _Check(
        column,
        # digits only: DuckDB would round '1.5' to 2 when casting to an integer
        "{t} IS NOT NULL AND NOT regexp_matches({t}, '^[0-9]{{1,18}}$')",
        "{value!r} is not a whole, non-negative number",
    )


def _read_byte_counts(
    path: Path,
    required: Sequence[str],
    checks: Sequence[_Check],
    casts: dict[str, str],
    cluster: str | bool | None = False,
    optional: Mapping[str, str] | None = None,
) -> pl.DataFrame:
    """Shared reader of the byte-count files: required columns present, every check passed, then each column
    cast to its type in ``casts``. ``cluster`` False: the file has no cluster; else the row's or this one.
    ``optional`` columns are cast likewise when the file has them, else NULL; checks of absent ones are skipped."""
    with duckdb.connect() as con:
        con.execute("SET TimeZone = 'UTC'")
        raw = read_raw(con, [path])
        types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
        _require_columns(path, types, (*required, *(("cluster",) if cluster is None else ())))
        create_temp_view(con, "counts_raw", raw)
        present = [check for check in checks if check.column in types]
        _check(con, [path], "counts_raw", [*(_required_value(c) for c in required), *present], types)
        _bind_defaults(con, cluster or None)
        columns = [
            f"{cast_expr(name, types[name], sql_type)} AS {quote_ident(name)}" for name, sql_type in casts.items()
        ]
        columns += [
            f"{cast_expr(name, types[name], sql_type) if name in types else f'NULL::{sql_type}'} AS {quote_ident(name)}"
            for name, sql_type in (optional or {}).items()
        ]
        if cluster is not False:
            columns.insert(0, f"{_cluster_expr(types)} AS cluster")
        # columns from the file's header, quoted; configured values bound in sample_defaults
        return con.sql(f"SELECT {', '.join(columns)} FROM counts_raw CROSS JOIN sample_defaults").pl()  # noqa: S608


def read_checkpoint_inventory(path: Path) -> pl.DataFrame:
    """Stored checkpoint bytes: ``as_of`` (time of the listing), ``uri`` (``s3://bucket/key-or-prefix``), ``bytes``,
    ``last_modified``? (when the object was last written, e.g. S3 Inventory's LastModifiedDate; empty if unknown).

    One row per object or prefix and listing, e.g. from S3 Inventory or ``aws s3 ls --recursive --summarize``.
    The split shares a checkpoint bucket's storage charge by these bytes (newest listing before it ends).
    """
    checks = [
        _timestamp("as_of"),
        _Check("uri", "{t} IS NOT NULL AND NOT regexp_matches({t}, '^[a-z0-9]+://[^/]+')", "{value!r} is not a URI"),
        _whole_number("bytes"),
        _timestamp("last_modified"),
    ]
    casts = {"as_of": "TIMESTAMPTZ", "uri": "VARCHAR", "bytes": "BIGINT"}
    optional = {"last_modified": "TIMESTAMPTZ"}
    return _read_byte_counts(path, ("as_of", "uri", "bytes"), checks, casts, optional=optional)


def read_egress_file(path: Path, *, cluster: str | None = None) -> pl.DataFrame:
    """Bytes each job sent out per node and hour: ``node``, ``hour`` (any time in it), ``job_id``, ``bytes``,
    ``cluster`` unless configured. The split shares a resource's egress charges by these bytes."""
    checks = [_timestamp("hour"), _whole_number("bytes")]
    casts = {"node": "VARCHAR", "hour": "TIMESTAMPTZ", "job_id": "VARCHAR", "bytes": "BIGINT"}
    frame = _read_byte_counts(path, ("node", "hour", "job_id", "bytes"), checks, casts, cluster=cluster)
    return frame.with_columns(pl.col("hour").dt.truncate("1h"))
