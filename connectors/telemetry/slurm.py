"""Slurm accounting (``sacct --parsable2`` output) -> jobs (``models.telemetry.JOBS_SCHEMA``).

Expected input, e.g.::

    sacct --allusers --duplicates --parsable2 --starttime ... --endtime ... \\
      --format=Cluster,JobID,JobName,Partition,QOS,Account,User,WCKey,Comment,NodeList,AllocTRES,Start,End,State

Partition, QOS, WCKey, Comment and Cluster are optional. Steps (``123.batch``, ``123.0``) are not jobs and are
skipped, as are records that never ran (pending, cancelled before start, array ranges not yet split into tasks)
and jobs without GPUs.

Requeues
    With ``--duplicates`` (``-D``) a requeued job is listed once per attempt: earlier records REQUEUED,
    PREEMPTED or NODE_FAIL, the last one its final state. Each attempt is a row; an attempt is identified by
    (JobID, Start), so the same attempt in two periodic dumps is one attempt (``number_attempts`` numbers them
    again once dumps are merged). In start order, earlier attempts get job_id ``<JobID>#1``, ``<JobID>#2``, ...,
    the last keeps ``<JobID>``; all have scheduler_job_id ``<JobID>``.

Run group
    ``run_group_from`` lists, in order, where a job's run group may come from (``RUN_GROUP_SOURCES``):
    ``comment`` (a ``run_group=<value>`` token in Comment), ``wckey`` (the WCKey without its leading ``*``),
    ``array`` (the array job id: ``1234`` of task ``1234_7``). The first that yields a value wins; else null.

GPUs
    AllocTRES ``gres/gpu=N`` or typed ``gres/gpu:<type>=N`` give the count; a type that is a MIG profile
    (``1g.10gb``, optionally after a model: ``a100_3g.40gb``) gives mig_profile and counts slices. A prolog
    may record which GPUs each job got (``read_gpu_map``); ``with_gpu_ids`` turns that into gpu_ids.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from models.errors import InputError
from models.telemetry import JOBS_SCHEMA, RUN_GROUP_SOURCES

REQUIRED_FIELDS = ("JobID", "JobName", "Account", "User", "NodeList", "AllocTRES", "Start", "End", "State")

# A job id (array task "1234_7", pending array range "1234_[8-10%2]", heterogeneous component "1234+0"),
# optionally followed by a step (".batch", ".extern", ".0", ".0+1").
_JOB_ID = re.compile(r"(?P<job>[0-9]+(?:_(?:[0-9]+|\[[^\]]+\]))?(?:\+[0-9]+)?)(?P<step>\.[A-Za-z0-9_+-]+)?")
_HOST_TEXT = re.compile(r"[A-Za-z0-9._-]*")
_ARRAY_TASK = re.compile(r"(?P<array>[0-9]+)_[0-9]+")
# A MIG profile as a gres type, alone ("1g.10gb") or after the GPU model ("a100_3g.40gb", "h100-1g.10gb").
_MIG_TYPE = re.compile(r"(?:(?P<model>.+?)[_-])?(?P<profile>[0-9]+g\.[0-9]+gb)", re.IGNORECASE)
_GPU_INDICES = re.compile(r"[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*")
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
_DIGITS = re.compile(r"[0-9]+")
_TIME = "%Y-%m-%dT%H:%M:%S"
_NO_TIME = ("", "Unknown", "None")
_NO_NODES = "None assigned"
# An expression expanding to more nodes than this is a typo ("[0-99999999]"), not a job.
_MAX_NODES = 100_000

# sacct states -> JOB_STATES. PENDING never ran; a REQUEUED record with a start is an attempt that was cut short.
_STATES = {
    "COMPLETED": "COMPLETED",
    "FAILED": "FAILED",
    "BOOT_FAIL": "FAILED",
    "OUT_OF_MEMORY": "OUT_OF_MEMORY",
    "TIMEOUT": "TIMEOUT",
    "DEADLINE": "TIMEOUT",
    "CANCELLED": "CANCELLED",
    "NODE_FAIL": "NODE_FAIL",
    "PREEMPTED": "PREEMPTED",
    "REQUEUED": "PREEMPTED",
    "RUNNING": "RUNNING",
}
_NEVER_RAN_STATES = ("PENDING",)
_CANCELLED_BY = re.compile(r"CANCELLED by \S+")


def expand_nodelist(expr: str) -> list[str]:
    """Node names of a Slurm hostlist expression (``gpu-[01-04,07],cpu-01``), zero padding kept.

    Raises ValueError for an expression Slurm would not print.
    """
    if not expr:
        raise ValueError("empty node list")
    nodes: list[str] = []
    for group in _split_groups(expr):
        choices = [_expand_segment(segment, group) for segment in re.split(r"(\[[^\[\]]*\])", group)]
        count = 1
        for options in choices:
            count *= len(options)
        if len(nodes) + count > _MAX_NODES:
            raise ValueError(f"{expr!r} expands to more than {_MAX_NODES} nodes")
        nodes.extend("".join(parts) for parts in itertools.product(*choices))
    # A node listed twice would get its GPUs counted twice when they are spread over the nodes.
    seen: set[str] = set()
    for node in nodes:
        if node in seen:
            raise ValueError(f"node {node!r} is listed twice in {expr!r}")
        seen.add(node)
    return nodes


def _split_groups(expr: str) -> Iterator[str]:
    """Split on commas outside brackets."""
    depth, start = 0, 0
    for index, char in enumerate(expr):
        if char == "[":
            depth += 1
            if depth > 1:
                raise ValueError(f"nested brackets in {expr!r}")
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced ']' in {expr!r}")
        elif char == "," and depth == 0:
            yield _non_empty_group(expr, start, index)
            start = index + 1
    if depth:
        raise ValueError(f"unclosed '[' in {expr!r}")
    yield _non_empty_group(expr, start, len(expr))


def _non_empty_group(expr: str, start: int, end: int) -> str:
    if start == end:
        raise ValueError(f"empty host name in {expr!r}")
    return expr[start:end]


def _expand_segment(segment: str, group: str) -> list[str]:
    """A bracket's numbers (``[01-03,7]`` -> 01, 02, 03, 7) or literal host text."""
    if not (segment.startswith("[") and segment.endswith("]")):
        if not _HOST_TEXT.fullmatch(segment):
            raise ValueError(f"invalid character in host name {group!r}")
        return [segment]
    values: list[str] = []
    for part in segment[1:-1].split(","):
        match = _RANGE.fullmatch(part)
        if not match:
            raise ValueError(f"invalid range {part!r} in {group!r}")
        low, high = match.group(1), match.group(2) or match.group(1)
        if int(high) < int(low):
            raise ValueError(f"range {part!r} runs backwards in {group!r}")
        if int(high) - int(low) >= _MAX_NODES:
            raise ValueError(f"range {part!r} in {group!r} expands to more than {_MAX_NODES} nodes")
        # Slurm pads to the width of the range's first number: [01-10] -> 01..10, [8-10] -> 8, 9, 10.
        values.extend(str(number).zfill(len(low)) for number in range(int(low), int(high) + 1))
    return values


@dataclass(frozen=True)
class _Gpus:
    count: int
    model: str | None
    mig_profile: str | None


def read_sacct(
    path: Path,
    *,
    cluster: str | None = None,
    timezone: str = "UTC",
    source: str = "slurm",
    run_group_from: Sequence[str] = ("comment",),
) -> pl.DataFrame:
    """GPU jobs (``JOBS_SCHEMA``) in ``sacct --parsable2`` output (plain or .gz), in file order, one row per
    attempt of a requeued job (see the module docstring).

    ``timezone`` is the zone sacct printed Start/End in (the cluster's local time); rows with a wrong
    field count, unknown state, malformed AllocTRES or NodeList, End before Start, or the same attempt
    twice are refused with their 1-based line number (the header is line 1).
    """
    unknown = sorted(set(run_group_from) - set(RUN_GROUP_SOURCES))
    if unknown:
        raise ValueError(f"unknown run_group_from {unknown}; expected some of {', '.join(RUN_GROUP_SOURCES)}")
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InputError(path, f"unknown time zone {timezone!r}") from exc
    rows: dict[str, list[object]] = {name: [] for name in JOBS_SCHEMA.names()}
    seen: set[tuple[str, str, object]] = set()
    lines = _lines(path)
    header = _header(path, next(lines, None), cluster)
    for number, line in lines:
        if not line:
            continue
        values = line.split("|")
        if len(values) != len(header):
            raise InputError(
                path,
                f"{len(values)} fields, the header has {len(header)} (a '|' inside a job name or comment?)",
                row=number,
            )
        job = _job(path, number, dict(zip(header, values, strict=True)), cluster, zone, run_group_from)
        if job is None:
            continue
        key = (str(job["cluster"]), str(job["job_id"]), job["start"])
        if key in seen:
            raise InputError(
                path, f"job {key[1]} of cluster {key[0]} appears twice with the same start", row=number, column="JobID"
            )
        seen.add(key)
        job["source"] = source
        for name, value in job.items():
            rows[name].append(value)
    return number_attempts(pl.DataFrame(rows, schema=JOBS_SCHEMA))


def number_attempts(jobs: pl.DataFrame) -> pl.DataFrame:
    """job_id of each attempt: ``<scheduler_job_id>#<n>`` in start order, the last attempt the plain id.

    Rows must be one per attempt: (cluster, scheduler_job_id, start) unique.
    """
    key = ("cluster", "scheduler_job_id")
    attempt = pl.col("start").rank("ordinal").over(key)
    earlier = attempt < pl.len().over(key)
    return jobs.with_columns(
        job_id=pl.when(earlier).then(pl.format("{}#{}", "scheduler_job_id", attempt)).otherwise("scheduler_job_id")
    )


def read_gpu_map(path: Path) -> dict[tuple[str, str], tuple[int, ...]]:
    """(JobID, node) -> GPU indices, from a prolog-written CSV ``job_id,node,gpus``.

    ``gpus`` is indices as ``parse_gpu_indices`` reads them (``0-3``, ``0,2``).
    Rows are 1-based data rows (the header is not counted); a (job_id, node) listed twice is refused.
    """
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = [name.strip() for name in next(reader, [])]
            for name in ("job_id", "node", "gpus"):
                if name not in header:
                    raise InputError(path, "required column is missing", column=name)
            positions = {name: header.index(name) for name in ("job_id", "node", "gpus")}
            gpu_map: dict[tuple[str, str], tuple[int, ...]] = {}
            for row, values in enumerate(reader, start=1):
                if not values:
                    continue
                if len(values) != len(header):
                    raise InputError(path, f"{len(values)} fields, the header has {len(header)}", row=row)
                job_id, node, gpus = (values[positions[name]].strip() for name in ("job_id", "node", "gpus"))
                match = _JOB_ID.fullmatch(job_id)
                if not match or match.group("step") or "[" in job_id:
                    raise InputError(path, f"invalid job id {job_id!r}", row=row, column="job_id")
                if not node or not _HOST_TEXT.fullmatch(node):
                    raise InputError(path, f"invalid node name {node!r}", row=row, column="node")
                if (job_id, node) in gpu_map:
                    raise InputError(path, f"job {job_id} on {node} is listed twice", row=row, column="node")
                try:
                    gpu_map[job_id, node] = parse_gpu_indices(gpus)
                except ValueError as exc:
                    raise InputError(path, str(exc), row=row, column="gpus") from exc
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(path, f"unreadable: {exc}") from exc
    return gpu_map


def parse_gpu_indices(text: str) -> tuple[int, ...]:
    """GPU indices as Slurm and CUDA_VISIBLE_DEVICES print them: ``0-3``, ``0,2``, ``0-1,4``.

    Raises ValueError for anything else, a backwards range or an index listed twice.
    """
    if not _GPU_INDICES.fullmatch(text):
        raise ValueError(f"{text!r} is not a list of GPU indices (e.g. 0-3 or 0,2)")
    indices: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        if high and int(high) < int(low):
            raise ValueError(f"range {part!r} runs backwards")
        indices.extend(range(int(low), int(high or low) + 1))
    if len(set(indices)) < len(indices):
        raise ValueError(f"a GPU is listed twice in {text!r}")
    return tuple(indices)


def with_gpu_ids(
    jobs: pl.DataFrame, gpu_map: Mapping[tuple[str, str], Sequence[int]], *, cluster: str | None
) -> pl.DataFrame:
    """gpu_ids ("node:index") of the jobs of ``cluster`` (None: of every cluster) whose every node is in the map;
    others keep theirs.

    The map is keyed by JobID, so every attempt of a requeued job on a mapped node gets that node's GPUs.
    """
    ids: list[list[str] | None] = []
    for scheduler_job_id, job_cluster, nodes, known in jobs.select(
        "scheduler_job_id", "cluster", "nodes", "gpu_ids"
    ).iter_rows():
        held = [gpu_map.get((scheduler_job_id, node)) for node in nodes] if cluster in (None, job_cluster) else [None]
        if any(indices is None for indices in held):
            ids.append(known)
        else:
            ids.append(
                [f"{node}:{index}" for node, indices in zip(nodes, held, strict=True) for index in indices or ()]
            )
    return jobs.with_columns(gpu_ids=pl.Series(ids, dtype=JOBS_SCHEMA["gpu_ids"]))


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its line ending); only '\\n' ends a line."""
    try:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", newline="\n") as handle:
            for number, line in enumerate(handle, start=1):
                yield number, line.rstrip("\n").removesuffix("\r")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise InputError(path, f"unreadable: {exc}") from exc


def _header(path: Path, first: tuple[int, str] | None, cluster: str | None) -> list[str]:
    if first is None:
        raise InputError(path, "empty file; expected sacct --parsable2 output with its header line")
    header = first[1].split("|")
    for name in REQUIRED_FIELDS:
        if name not in header:
            raise InputError(path, "required field missing from the header (sacct --noheader?)", row=1, column=name)
    if "Cluster" not in header and cluster is None:
        raise InputError(
            path,
            "no Cluster field: add Cluster to sacct --format or set cluster in its [[telemetry]] section",
            row=1,
            column="Cluster",
        )
    return header


def _job(
    path: Path,
    number: int,
    record: dict[str, str],
    cluster: str | None,
    zone: ZoneInfo,
    run_group_from: Sequence[str],
) -> dict[str, object] | None:
    """One JOBS_SCHEMA row (without source), or None for records that are not GPU jobs that ran."""
    match = _JOB_ID.fullmatch(record["JobID"])
    if not match:
        raise InputError(path, f"invalid job id {record['JobID']!r}", row=number, column="JobID")
    job_id = match.group("job")
    if match.group("step") or "[" in job_id:
        return None
    state = _state(path, number, record["State"])
    if state is None:
        return None
    start = _time(path, number, record, "Start", zone)
    if start is None or record["NodeList"] == _NO_NODES:
        return None
    gpus = _gpus(path, number, record["AllocTRES"])
    if gpus.count == 0:
        return None
    try:
        nodes = expand_nodelist(record["NodeList"])
    except ValueError as exc:
        raise InputError(path, str(exc), row=number, column="NodeList") from exc
    end = _time(path, number, record, "End", zone)
    if (end is None) != (state == "RUNNING"):
        problem = "a running job has an end time" if end else f"a {state} job needs an end time"
        raise InputError(path, problem, row=number, column="End")
    if end is not None and end < start:
        raise InputError(
            path, f"ends ({record['End']}) before it starts ({record['Start']}): clock skew?", row=number, column="End"
        )
    comment = _comment_fields(record.get("Comment", ""))
    wckey = record.get("WCKey", "").strip().removeprefix("*") or None
    array = _ARRAY_TASK.fullmatch(job_id)
    run_groups = {
        "comment": comment.get("run_group"),
        "wckey": wckey,
        "array": array.group("array") if array else None,
    }
    return {
        "job_id": job_id,
        "scheduler_job_id": job_id,
        "cluster": _cluster(path, number, record, cluster),
        "name": record["JobName"] or None,
        "account": _required(path, number, record, "Account"),
        "project": wckey or comment.get("project"),
        "user": record["User"] or None,
        "partition": record.get("Partition") or None,
        "qos": record.get("QOS") or None,
        "nodes": nodes,
        "gpu_model": gpus.model,
        "gpu_count": gpus.count,
        "gpu_ids": None,
        "mig_profile": gpus.mig_profile,
        "start": start,
        "end": end,
        "state": state,
        "run_group": next((run_groups[key] for key in run_group_from if run_groups[key]), None),
        "checkpoint_uri": comment.get("checkpoint"),
    }


def _state(path: Path, number: int, value: str) -> str | None:
    """The JOB_STATES value of a sacct State, or None for a job that has not run."""
    if value in _STATES:
        return _STATES[value]
    if _CANCELLED_BY.fullmatch(value):
        return "CANCELLED"
    if value in _NEVER_RAN_STATES:
        return None
    raise InputError(path, f"unknown job state {value!r}", row=number, column="State")


def _time(path: Path, number: int, record: dict[str, str], field: str, zone: ZoneInfo) -> dt.datetime | None:
    """A sacct time in UTC; local wall-clock time in ``zone``, or Unix seconds (SLURM_TIME_FORMAT=%s).

    Unix seconds avoid the repeated local hour when clocks go back, which local times cannot name.
    """
    value = record[field]
    if value in _NO_TIME:
        return None
    if _DIGITS.fullmatch(value):
        return dt.datetime.fromtimestamp(int(value), dt.UTC)
    try:
        local = dt.datetime.strptime(value, _TIME)
    except ValueError as exc:
        raise InputError(path, f"invalid time {value!r} (expected {_TIME})", row=number, column=field) from exc
    return local.replace(tzinfo=zone).astimezone(dt.UTC)


def _gpus(path: Path, number: int, tres: str) -> _Gpus:
    """GPUs in AllocTRES: generic ``gres/gpu=N``, else the sum of typed ``gres/gpu:<type>=N``.

    A MIG-profile type (``1g.10gb``, ``a100_3g.40gb``) counts slices and names the profile (one profile only,
    else null) and its model prefix, if any, the model. ``gres/gpuutil`` (a high-water mark, not an average)
    and ``gres/gpumem`` are ignored.
    """
    generic: int | None = None
    typed: dict[str, int] = {}
    models: set[str] = set()
    profiles: set[str] = set()
    for entry in tres.split(",") if tres else []:
        key, sep, value = entry.partition("=")
        if not (sep and key and value):
            raise InputError(
                path, f"malformed TRES entry {entry!r} (expected name=value)", row=number, column="AllocTRES"
            )
        if key != "gres/gpu" and not key.startswith("gres/gpu:"):
            continue
        if not _DIGITS.fullmatch(value):
            raise InputError(
                path, f"GPU count {value!r} of {key} is not a whole number", row=number, column="AllocTRES"
            )
        if key == "gres/gpu":
            generic = int(value)
        else:
            gpu_type = key.removeprefix("gres/gpu:")
            typed[gpu_type] = typed.get(gpu_type, 0) + int(value)
            mig = _MIG_TYPE.fullmatch(gpu_type)
            if mig:
                profiles.add(mig.group("profile").lower())
            model = mig.group("model") if mig else gpu_type
            if model:
                models.add(model.upper())
    count = generic if generic is not None else sum(typed.values())
    return _Gpus(
        count=count,
        model=next(iter(models)) if len(models) == 1 else None,
        mig_profile=next(iter(profiles)) if len(profiles) == 1 else None,
    )


def _comment_fields(comment: str) -> dict[str, str]:
    """``key=value`` pairs of a ``key=value;key=value`` comment; free text between them is ignored."""
    fields: dict[str, str] = {}
    for part in comment.split(";"):
        key, sep, value = part.partition("=")
        if sep and key.strip() and value.strip():
            fields.setdefault(key.strip().lower(), value.strip())
    return fields


def _cluster(path: Path, number: int, record: dict[str, str], cluster: str | None) -> str:
    value = record.get("Cluster") or cluster
    if not value:
        raise InputError(path, "no cluster name (empty Cluster and none passed)", row=number, column="Cluster")
    return value


def _required(path: Path, number: int, record: dict[str, str], field: str) -> str:
    if not record[field]:
        raise InputError(path, f"empty {field}", row=number, column=field)
    return record[field]
