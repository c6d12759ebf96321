"""Slurm accounting (sacct --parsable2) -> jobs."""

from __future__ import annotations

import datetime as dt
import gzip

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from connectors.telemetry.slurm import expand_nodelist, read_gpu_map, read_sacct, with_gpu_ids
from models.errors import InputError
from models.telemetry import JOB_STATES, JOBS_SCHEMA

HEADER = (
    "Cluster|JobID|JobIDRaw|JobName|Partition|Account|User|WCKey|Comment|NodeList|AllocTRES|Start|End|ElapsedRaw|State"
)
H100x8 = "billing=96,cpu=96,gres/gpu:h100=8,gres/gpu=8,mem=1000G,node=1"

# Cluster-local times (America/Los_Angeles, PST = UTC-8 in November 2026).
SACCT = "\n".join(
    [
        HEADER,
        # A training run with its checkpoint location in the comment; its steps are not jobs.
        f"helios|1001|1001|llama-pt|gpu|ml-research|alice|*proj-llm|run_group=llama-70b;checkpoint=s3://ckpt/llama/|"
        f"gpu-01|{H100x8}|2026-11-03T14:05:00|2026-11-03T16:05:00|7200|COMPLETED",
        f"helios|1001.batch|1001.batch|batch||ml-research|||||{H100x8}|2026-11-03T14:05:00|2026-11-03T16:05:00|7200|COMPLETED",
        f"helios|1001.extern|1001.extern|extern||ml-research||||gpu-01|{H100x8}|2026-11-03T14:05:00|"
        "2026-11-03T16:05:00|7200|COMPLETED",
        f"helios|1001.0|1001.0|python||ml-research||||gpu-01|{H100x8}|2026-11-03T14:05:10|2026-11-03T16:04:00|7130|"
        "COMPLETED",
        # Restart of the run after OOM: free text plus key=value in the comment; gpuutil/gpumem are ignored.
        "helios|1002|1002|llama-pt|gpu|ml-research|alice||restarted after OOM; project=vision|gpu-[02-03]|"
        "billing=192,cpu=192,gres/gpu:h100=16,gres/gpu=16,gres/gpumem=1280G,gres/gpuutil=100,mem=2000G,node=2|"
        "2026-11-03T16:10:00|2026-11-03T17:00:00|3000|OUT_OF_MEMORY",
        # Array task with typed gres only; the pending rest of the array is not a job yet.
        "helios|1003_7|1010|sweep|gpu|vision|bob|proj-cv||a100-[1-2]|cpu=16,gres/gpu:a100=4,mem=64G,node=2|"
        "2026-11-03T10:00:00|2026-11-03T10:30:00|1800|FAILED",
        "helios|1003_7.batch|1010.batch|batch||vision|||||cpu=8,gres/gpu:a100=2,mem=32G,node=1|2026-11-03T10:00:00|"
        "2026-11-03T10:30:00|1800|FAILED",
        "helios|1003_[8-10]|1003|sweep|gpu|vision|bob|proj-cv||None assigned||Unknown|Unknown|0|PENDING",
        # Two GPU types: count from the generic entry, no single model. Node groups and a plain node.
        "helios|1004|1004|mixed|gpu|vision|bob|||gpu-[04-05],a100-3|"
        "cpu=8,gres/gpu:a100=2,gres/gpu:h100=2,gres/gpu=4,node=3|2026-11-03T09:00:00|2026-11-03T09:20:00|1200|"
        "CANCELLED by 4242",
        # Still running; nodes across racks.
        "helios|1005|1005|eval|gpu|ml-research|carol|||rack[1-2]-n[01-02]|cpu=32,gres/gpu=32,node=4|"
        "2026-11-03T18:00:00|Unknown|600|RUNNING",
        # No GPUs, never started, cancelled while pending: not GPU jobs that ran.
        "helios|1006|1006|prep|cpu|ml-research|alice|||cpu-01|billing=4,cpu=4,mem=16G,node=1|2026-11-03T08:00:00|"
        "2026-11-03T08:10:00|600|COMPLETED",
        "helios|1007|1007|queued|gpu|ml-research|alice|||None assigned||Unknown|Unknown|0|PENDING",
        "helios|1008|1008|gave-up|gpu|ml-research|alice|||None assigned||None|2026-11-03T08:30:00|0|CANCELLED by 501",
        "helios|1009|1009|long|gpu|nlp|dave|||gpu-06|gres/gpu=1|2026-11-03T00:00:00|2026-11-03T04:00:00|14400|TIMEOUT",
        "helios|1010|1010|unlucky|gpu|nlp|dave|||gpu-07|gres/gpu=2|2026-11-03T01:00:00|2026-11-03T02:00:00|3600|"
        "NODE_FAIL",
        "helios|1011|1011|low-prio|gpu|nlp|dave|||gpu-08|gres/gpu=2|2026-11-03T02:00:00|2026-11-03T03:00:00|3600|"
        "PREEMPTED",
        "helios|1012|1012|low-prio|gpu|nlp|dave|||gpu-08|gres/gpu=2|2026-11-03T03:00:00|2026-11-03T03:30:00|1800|"
        "REQUEUED",
        "helios|1013|1013|bad-node|gpu|nlp|dave|||gpu-09|gres/gpu=1|2026-11-03T04:00:00|2026-11-03T04:00:00|0|"
        "BOOT_FAIL",
        "helios|1014|1014|deadline|gpu|nlp|dave|||gpu-09|gres/gpu=1|2026-11-03T05:00:00|2026-11-03T06:00:00|3600|"
        "DEADLINE",
        "helios|1015+0|1015|het|gpu|nlp|dave|||gpu-10|gres/gpu=1|2026-11-03T06:00:00|2026-11-03T07:00:00|3600|"
        "COMPLETED",
        "helios|1016|1016|waiting|gpu|nlp|dave|||None assigned||Unknown|Unknown|0|REQUEUED",
    ]
)


def _utc(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.UTC)


def _expected(rows: list[dict[str, object]], source: str = "slurm") -> pl.DataFrame:
    defaults = {name: None for name in JOBS_SCHEMA.names()} | {
        "cluster": "helios",
        "partition": "gpu",
        "source": source,
    }
    return pl.DataFrame([{**defaults, "scheduler_job_id": row["job_id"], **row} for row in rows], schema=JOBS_SCHEMA)


def _simple(job_id: str, name: str, node: str, gpus: int, start: dt.datetime, end: dt.datetime, state: str) -> dict:
    return {
        "job_id": job_id,
        "name": name,
        "account": "nlp",
        "user": "dave",
        "nodes": [node],
        "gpu_count": gpus,
        "start": start,
        "end": end,
        "state": state,
    }


def test_sacct_jobs_parse_exactly(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text(SACCT + "\n")
    jobs = read_sacct(path, timezone="America/Los_Angeles")
    expected = _expected(
        [
            {
                "job_id": "1001",
                "name": "llama-pt",
                "account": "ml-research",
                "project": "proj-llm",
                "user": "alice",
                "nodes": ["gpu-01"],
                "gpu_model": "H100",
                "gpu_count": 8,
                "start": _utc(3, 22, 5),
                "end": _utc(4, 0, 5),
                "state": "COMPLETED",
                "run_group": "llama-70b",
                "checkpoint_uri": "s3://ckpt/llama/",
            },
            {
                "job_id": "1002",
                "name": "llama-pt",
                "account": "ml-research",
                "project": "vision",
                "user": "alice",
                "nodes": ["gpu-02", "gpu-03"],
                "gpu_model": "H100",
                "gpu_count": 16,
                "start": _utc(4, 0, 10),
                "end": _utc(4, 1),
                "state": "OUT_OF_MEMORY",
            },
            {
                "job_id": "1003_7",
                "name": "sweep",
                "account": "vision",
                "project": "proj-cv",
                "user": "bob",
                "nodes": ["a100-1", "a100-2"],
                "gpu_model": "A100",
                "gpu_count": 4,
                "start": _utc(3, 18),
                "end": _utc(3, 18, 30),
                "state": "FAILED",
            },
            {
                "job_id": "1004",
                "name": "mixed",
                "account": "vision",
                "user": "bob",
                "nodes": ["gpu-04", "gpu-05", "a100-3"],
                "gpu_count": 4,
                "start": _utc(3, 17),
                "end": _utc(3, 17, 20),
                "state": "CANCELLED",
            },
            {
                "job_id": "1005",
                "name": "eval",
                "account": "ml-research",
                "user": "carol",
                "nodes": ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"],
                "gpu_count": 32,
                "start": _utc(4, 2),
                "end": None,
                "state": "RUNNING",
            },
            _simple("1009", "long", "gpu-06", 1, _utc(3, 8), _utc(3, 12), "TIMEOUT"),
            _simple("1010", "unlucky", "gpu-07", 2, _utc(3, 9), _utc(3, 10), "NODE_FAIL"),
            _simple("1011", "low-prio", "gpu-08", 2, _utc(3, 10), _utc(3, 11), "PREEMPTED"),
            _simple("1012", "low-prio", "gpu-08", 2, _utc(3, 11), _utc(3, 11, 30), "PREEMPTED"),
            _simple("1013", "bad-node", "gpu-09", 1, _utc(3, 12), _utc(3, 12), "FAILED"),
            _simple("1014", "deadline", "gpu-09", 1, _utc(3, 13), _utc(3, 14), "TIMEOUT"),
            _simple("1015+0", "het", "gpu-10", 1, _utc(3, 14), _utc(3, 15), "COMPLETED"),
        ]
    )
    assert_frame_equal(jobs, expected)
    assert set(jobs["state"]) <= set(JOB_STATES)


def test_gzip_file_and_cluster_argument(tmp_path):
    path = tmp_path / "sacct.txt.gz"
    lines = [
        "JobID|JobName|Account|User|NodeList|AllocTRES|Start|End|State|Partition",
        "77|train|ml|alice|gpu-01|gres/gpu=2|2026-11-03T14:00:00|2026-11-03T15:00:00|COMPLETED|gpu",
    ]
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    jobs = read_sacct(path, cluster="orion", source="slurm-orion")
    expected = pl.DataFrame(
        [
            {
                "job_id": "77",
                "scheduler_job_id": "77",
                "cluster": "orion",
                "name": "train",
                "account": "ml",
                "project": None,
                "user": "alice",
                "partition": "gpu",
                "qos": None,
                "nodes": ["gpu-01"],
                "gpu_model": None,
                "gpu_count": 2,
                "gpu_ids": None,
                "mig_profile": None,
                "start": _utc(3, 14),
                "end": _utc(3, 15),
                "state": "COMPLETED",
                "run_group": None,
                "checkpoint_uri": None,
                "source": "slurm-orion",
            }
        ],
        schema=JOBS_SCHEMA,
    )
    assert_frame_equal(jobs, expected)


def test_unix_second_times_and_crlf_line_endings(tmp_path):
    # SLURM_TIME_FORMAT=%s prints Unix seconds, which are UTC whatever the cluster's zone.
    path = tmp_path / "sacct.txt"
    path.write_bytes(
        b"JobID|JobName|Account|User|NodeList|AllocTRES|Start|End|State\r\n"
        b"5|x|ml|alice|gpu-01|gres/gpu=1|1793714400|1793718000|COMPLETED\r\n"
    )
    jobs = read_sacct(path, cluster="c", timezone="Asia/Kolkata")
    assert jobs.select("start", "end").row(0) == (_utc(3, 14), _utc(3, 15))
    # Without the optional fields: no partition, QOS, project or run group.
    assert jobs.select("partition", "qos", "project", "run_group").row(0) == (None, None, None, None)


def test_header_only_gives_an_empty_frame(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text(HEADER + "\n")
    assert_frame_equal(read_sacct(path), pl.DataFrame(schema=JOBS_SCHEMA))


def _line(**fields: str) -> str:
    values = {
        "Cluster": "helios",
        "JobID": "2001",
        "JobIDRaw": "2001",
        "JobName": "train",
        "Partition": "gpu",
        "Account": "ml",
        "User": "alice",
        "WCKey": "",
        "Comment": "",
        "NodeList": "gpu-01",
        "AllocTRES": "cpu=8,gres/gpu=1",
        "Start": "2026-11-03T14:00:00",
        "End": "2026-11-03T15:00:00",
        "ElapsedRaw": "3600",
        "State": "COMPLETED",
    }
    values.update(fields)
    return "|".join(values[name] for name in HEADER.split("|"))


GOOD = _line(JobID="2000")


@pytest.mark.parametrize(
    ("bad_line", "column", "message"),
    [
        (_line(AllocTRES="cpu=8,gres/gpu=eight"), "AllocTRES", "not a whole number"),
        (_line(AllocTRES="cpu,gres/gpu=1"), "AllocTRES", "malformed TRES entry 'cpu'"),
        (_line(NodeList="gpu-[03-01]"), "NodeList", "runs backwards"),
        (_line(NodeList="gpu-[01-02"), "NodeList", "unclosed"),
        (_line(NodeList="gpu-[a-b]"), "NodeList", "invalid range"),
        (_line(State="EXPLODED"), "State", "unknown job state 'EXPLODED'"),
        (_line(End="2026-11-03T13:59:59"), "End", "before it starts"),
        (_line(End="Unknown"), "End", "a COMPLETED job needs an end time"),
        (_line(State="RUNNING"), "End", "a running job has an end time"),
        (_line(Start="03/11/2026 14:00"), "Start", "invalid time"),
        (_line(JobID="20x1"), "JobID", "invalid job id"),
        (_line(Account=""), "Account", "empty Account"),
        (GOOD, "JobID", "appears twice"),
    ],
)
def test_bad_values_name_file_line_and_column(tmp_path, bad_line, column, message):
    path = tmp_path / "sacct.txt"
    path.write_text(f"{HEADER}\n{GOOD}\n{bad_line}\n")
    with pytest.raises(InputError, match=message) as caught:
        read_sacct(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 3, column)


@pytest.mark.parametrize(
    "bad_line",
    [
        _line(JobName="a|b"),
        # Steps are skipped, but a step line with the wrong field count is still a broken file.
        _line(JobID="2000.batch") + "|extra",
        "2001|train",
    ],
)
def test_wrong_field_count_names_the_line(tmp_path, bad_line):
    path = tmp_path / "sacct.txt"
    path.write_text(f"{HEADER}\n{GOOD}\n{bad_line}\n")
    with pytest.raises(InputError, match="the header has 15") as caught:
        read_sacct(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 3, None)


def test_missing_cluster_column_needs_the_cluster_argument(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text(
        "JobID|JobName|Account|User|NodeList|AllocTRES|Start|End|State\n"
        "5|x|ml|alice|gpu-01|gres/gpu=1|2026-11-03T14:00:00|2026-11-03T15:00:00|COMPLETED\n"
    )
    with pytest.raises(InputError, match=r"set cluster in its \[\[telemetry\]\] section") as caught:
        read_sacct(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 1, "Cluster")


def test_missing_required_field_is_named(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text("Cluster|JobID|JobName|Account|User|NodeList|Start|End|State\n")
    with pytest.raises(InputError, match="required field missing") as caught:
        read_sacct(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 1, "AllocTRES")


def test_unknown_time_zone_is_refused(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text(HEADER + "\n")
    with pytest.raises(InputError, match="unknown time zone 'Mars/Olympus'"):
        read_sacct(path, timezone="Mars/Olympus")


@pytest.mark.parametrize(
    ("expr", "nodes"),
    [
        ("gpu-01", ["gpu-01"]),
        ("gpu-[01-04,07]", ["gpu-01", "gpu-02", "gpu-03", "gpu-04", "gpu-07"]),
        ("node[1-3]", ["node1", "node2", "node3"]),
        ("node[8-10]", ["node8", "node9", "node10"]),
        ("gpu-[098-100]", ["gpu-098", "gpu-099", "gpu-100"]),
        ("gpu-[01-02],cpu-01", ["gpu-01", "gpu-02", "cpu-01"]),
        ("rack[1-2]-n[01-02]", ["rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"]),
        ("a[1],b.example_1", ["a1", "b.example_1"]),
    ],
)
def test_expand_nodelist(expr, nodes):
    assert expand_nodelist(expr) == nodes


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("", "empty node list"),
        ("gpu-01,", "empty host name"),
        ("gpu-[01-02]]", "unbalanced"),
        ("gpu-[[01]]", "nested"),
        ("gpu-[]", "invalid range"),
        ("gpu-[1-]", "invalid range"),
        ("gpu 01", "invalid character"),
        ("None assigned", "invalid character"),
        ("gpu-[01-02],gpu-02", "listed twice"),
        ("gpu-[0-99999999]", "more than 100000 nodes"),
    ],
)
def test_expand_nodelist_rejects_bad_expressions(expr, message):
    with pytest.raises(ValueError, match=message):
        expand_nodelist(expr)


REQUEUE_HEADER = "JobID|JobName|Partition|QOS|Account|User|NodeList|AllocTRES|Start|End|State"


def _requeue_line(job_id: str, node: str, start: str, end: str, state: str) -> str:
    return f"{job_id}|pretrain|gpu|high|ml|alice|{node}|gres/gpu=8|{start}|{end}|{state}"


def test_requeued_attempts_are_numbered_in_start_order(tmp_path):
    # sacct --duplicates: every attempt of 3001 (not in start order), the last one its final state.
    path = tmp_path / "sacct.txt"
    lines = [
        REQUEUE_HEADER,
        _requeue_line("3001", "gpu-01", "2026-11-03T10:00:00", "2026-11-03T11:00:00", "REQUEUED"),
        _requeue_line("3001", "gpu-03", "2026-11-03T12:00:00", "2026-11-03T13:00:00", "COMPLETED"),
        _requeue_line("3001", "gpu-02", "2026-11-03T11:05:00", "2026-11-03T11:30:00", "NODE_FAIL"),
        _requeue_line("3002", "gpu-04", "2026-11-03T10:00:00", "2026-11-03T11:00:00", "COMPLETED"),
        _requeue_line("3003_7", "gpu-05", "2026-11-03T10:00:00", "2026-11-03T10:10:00", "PREEMPTED"),
        _requeue_line("3003_7", "gpu-05", "2026-11-03T10:20:00", "Unknown", "RUNNING"),
    ]
    path.write_text("\n".join(lines) + "\n")
    jobs = read_sacct(path, cluster="helios")
    assert jobs.select("job_id", "scheduler_job_id", "nodes", "state", "partition", "qos").rows() == [
        ("3001#1", "3001", ["gpu-01"], "PREEMPTED", "gpu", "high"),
        ("3001", "3001", ["gpu-03"], "COMPLETED", "gpu", "high"),
        ("3001#2", "3001", ["gpu-02"], "NODE_FAIL", "gpu", "high"),
        ("3002", "3002", ["gpu-04"], "COMPLETED", "gpu", "high"),
        ("3003_7#1", "3003_7", ["gpu-05"], "PREEMPTED", "gpu", "high"),
        ("3003_7", "3003_7", ["gpu-05"], "RUNNING", "gpu", "high"),
    ]
    # No run group given: requeues share their scheduler_job_id, never a name-made group.
    assert jobs["run_group"].is_null().all()


RUN_GROUP_HEADER = "JobID|JobName|Account|User|WCKey|Comment|NodeList|AllocTRES|Start|End|State"


@pytest.mark.parametrize(
    ("job_id", "wckey", "comment", "run_group_from", "run_group"),
    [
        ("4000_3", "*wk", "note; run_group=rg-c", ("comment",), "rg-c"),
        ("4000_3", "*wk", "note; run_group=rg-c", ("wckey", "comment"), "wk"),
        ("4000_3", "*wk", "note; run_group=rg-c", ("array", "wckey"), "4000"),
        ("4000", "*wk", "", ("array", "wckey"), "wk"),
        ("4000_3", "*", "", ("wckey", "comment"), None),
        ("4000_3", "", "checkpoint=s3://x/", ("wckey", "comment"), None),
        ("4000_3", "*wk", "run_group=rg-c", (), None),
    ],
)
def test_run_group_comes_from_the_configured_fields_in_order(
    tmp_path, job_id, wckey, comment, run_group_from, run_group
):
    path = tmp_path / "sacct.txt"
    line = f"{job_id}|train|ml|alice|{wckey}|{comment}|gpu-01|gres/gpu=1|2026-11-03T10:00:00|2026-11-03T11:00:00|FAILED"
    path.write_text(f"{RUN_GROUP_HEADER}\n{line}\n")
    jobs = read_sacct(path, cluster="c", run_group_from=run_group_from)
    assert jobs["run_group"].to_list() == [run_group]


def test_an_unknown_run_group_source_is_refused(tmp_path):
    path = tmp_path / "sacct.txt"
    path.write_text(RUN_GROUP_HEADER + "\n")
    with pytest.raises(ValueError, match="unknown run_group_from \\['name'\\]"):
        read_sacct(path, cluster="c", run_group_from=("comment", "name"))


@pytest.mark.parametrize(
    ("tres", "count", "model", "profile"),
    [
        ("cpu=4,gres/gpu:1g.10gb=2,gres/gpu=2", 2, None, "1g.10gb"),
        ("cpu=4,gres/gpu:3g.40gb=1", 1, None, "3g.40gb"),
        ("gres/gpu:a100_3g.40gb=3", 3, "A100", "3g.40gb"),
        ("gres/gpu:h100=1,gres/gpu:1g.10gb=2,gres/gpu=3", 3, "H100", "1g.10gb"),
        ("gres/gpu:1g.10gb=1,gres/gpu:2g.20gb=1,gres/gpu=2", 2, None, None),
        ("gres/gpu:h100=8,gres/gpu=8", 8, "H100", None),
    ],
)
def test_mig_profiles_in_alloc_tres(tmp_path, tres, count, model, profile):
    path = tmp_path / "sacct.txt"
    line = f"9|nb|ml|alice|gpu-01|{tres}|2026-11-03T10:00:00|2026-11-03T11:00:00|COMPLETED"
    path.write_text(f"JobID|JobName|Account|User|NodeList|AllocTRES|Start|End|State\n{line}\n")
    assert read_sacct(path, cluster="c").select("gpu_count", "gpu_model", "mig_profile").row(0) == (
        count,
        model,
        profile,
    )


def test_a_prolog_gpu_map_fills_gpu_ids(tmp_path):
    sacct = tmp_path / "sacct.txt"
    lines = [
        REQUEUE_HEADER,
        _requeue_line("5001", "gpu-[01-02]", "2026-11-03T10:00:00", "2026-11-03T11:00:00", "REQUEUED"),
        _requeue_line("5001", "gpu-[01-02]", "2026-11-03T11:00:00", "2026-11-03T12:00:00", "COMPLETED"),
        _requeue_line("5002", "gpu-03", "2026-11-03T10:00:00", "2026-11-03T11:00:00", "COMPLETED"),
        # Only one of its two nodes is in the map: its GPUs are not known.
        _requeue_line("5003", "gpu-01,gpu-04", "2026-11-03T10:00:00", "2026-11-03T11:00:00", "COMPLETED"),
    ]
    sacct.write_text("\n".join(lines) + "\n")
    gpu_map = tmp_path / "gpus.csv"
    gpu_map.write_text('job_id,node,gpus\n5001,gpu-01,0-1\n5001,gpu-02,"0,3"\n5003,gpu-01,4-7\n')
    jobs = with_gpu_ids(read_sacct(sacct, cluster="helios"), read_gpu_map(gpu_map), cluster="helios")
    both = ["gpu-01:0", "gpu-01:1", "gpu-02:0", "gpu-02:3"]
    assert jobs.select("job_id", "gpu_ids").rows() == [("5001#1", both), ("5001", both), ("5002", None), ("5003", None)]
    # The map is the configured cluster's: another cluster's job 5001 is not it.
    other = with_gpu_ids(read_sacct(sacct, cluster="orion"), read_gpu_map(gpu_map), cluster="helios")
    assert other["gpu_ids"].is_null().all()


@pytest.mark.parametrize(
    ("line", "column", "message"),
    [
        ("5002,gpu-02,0-", "gpus", "'0-' is not a list of GPU indices"),
        ("5002,gpu-02,", "gpus", "'' is not a list of GPU indices"),
        ("5002,gpu-02,3-1", "gpus", "range '3-1' runs backwards"),
        ('5002,gpu-02,"0-2,1"', "gpus", "a GPU is listed twice"),
        ("5002,gpu-02,GPU-1234", "gpus", "not a list of GPU indices"),
        ("5002.batch,gpu-02,0", "job_id", "invalid job id '5002.batch'"),
        (",gpu-02,0", "job_id", "invalid job id ''"),
        ("5002,gpu 02,0", "node", "invalid node name"),
        ("5001,gpu-01,2", "node", "job 5001 on gpu-01 is listed twice"),
        ("5002,gpu-02", None, "2 fields, the header has 3"),
    ],
)
def test_a_bad_gpu_map_names_file_row_and_column(tmp_path, line, column, message):
    path = tmp_path / "gpus.csv"
    path.write_text(f"job_id,node,gpus\n5001,gpu-01,0-1\n{line}\n")
    with pytest.raises(InputError, match=message) as caught:
        read_gpu_map(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 2, column)


def test_a_gpu_map_needs_its_columns(tmp_path):
    path = tmp_path / "gpus.csv"
    path.write_text("job_id,host,gpus\n")
    with pytest.raises(InputError, match="required column is missing") as caught:
        read_gpu_map(path)
    assert caught.value.column == "node"
