"""Slurm accounting (``sacct --parsable2`` output) -> jobs (``models.telemetry.JOBS_SCHEMA``).

Expected input, e.g.::

    sacct --allusers --parsable2 --starttime ... --endtime ... \\
      --format=Cluster,JobID,JobName,Account,User,WCKey,Comment,NodeList,AllocTRES,Start,End,State

Steps (``123.batch``, ``123.0``) are not jobs and are skipped, as are records that never ran (pending,
cancelled before start, array ranges not yet split into tasks) and jobs without GPUs.
"""

from __future__ import annotations

import datetime as dt
import gzip
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from models.errors import InputError
from models.telemetry import JOBS_SCHEMA

REQUIRED_FIELDS = ("JobID", "JobName", "Account", "User", "NodeList", "AllocTRES", "Start", "End", "State")

# A job id (array task "1234_7", pending array range "1234_[8-10%2]", heterogeneous component "1234+0"),
# optionally followed by a step (".batch", ".extern", ".0", ".0+1").
_JOB_ID = re.compile(r"(?P<job>[0-9]+(?:_(?:[0-9]+|\[[^\]]+\]))?(?:\+[0-9]+)?)(?P<step>\.[A-Za-z0-9_+-]+)?")
_HOST_TEXT = re.compile(r"[A-Za-z0-9._-]*")
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


def read_sacct(path: Path, *, cluster: str | None = None, timezone: str = "UTC", source: str = "slurm") -> pl.DataFrame:
    """GPU jobs (``JOBS_SCHEMA``) in ``sacct --parsable2`` output (plain or .gz), in file order.

    ``timezone`` is the zone sacct printed Start/End in (the cluster's local time); rows with a wrong
    field count, unknown state, malformed AllocTRES or NodeList, or End before Start are refused with
    their 1-based line number (the header is line 1).
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InputError(path, f"unknown time zone {timezone!r}") from exc
    rows: dict[str, list[object]] = {name: [] for name in JOBS_SCHEMA.names()}
    seen: set[tuple[str, str]] = set()
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
        job = _job(path, number, dict(zip(header, values, strict=True)), cluster, zone)
        if job is None:
            continue
        key = (str(job["cluster"]), str(job["job_id"]))
        if key in seen:
            raise InputError(
                path,
                f"job {key[1]} of cluster {key[0]} appears twice (sacct --duplicates?)",
                row=number,
                column="JobID",
            )
        seen.add(key)
        job["source"] = source
        for name, value in job.items():
            rows[name].append(value)
    return pl.DataFrame(rows, schema=JOBS_SCHEMA)


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
            path, "no Cluster field: add Cluster to sacct --format or pass the cluster name", row=1, column="Cluster"
        )
    return header


def _job(
    path: Path, number: int, record: dict[str, str], cluster: str | None, zone: ZoneInfo
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
    name = record["JobName"] or None
    return {
        "job_id": job_id,
        "cluster": _cluster(path, number, record, cluster),
        "name": name,
        "account": _required(path, number, record, "Account"),
        "project": record.get("WCKey", "").removeprefix("*") or comment.get("project"),
        "user": record["User"] or None,
        "nodes": nodes,
        "gpu_model": gpus.model,
        "gpu_count": gpus.count,
        "start": start,
        "end": end,
        "state": state,
        "run_group": comment.get("run_group") or name or job_id,
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

    ``gres/gpuutil`` (a high-water mark, not an average) and ``gres/gpumem`` are ignored.
    """
    generic: int | None = None
    typed: dict[str, int] = {}
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
    count = generic if generic is not None else sum(typed.values())
    model = next(iter(typed)).upper() if len(typed) == 1 else None
    return _Gpus(count=count, model=model)


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
