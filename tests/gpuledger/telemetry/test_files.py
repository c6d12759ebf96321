"""Plain job and utilization-sample files -> jobs and hourly GPU activity."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path

import duckdb
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from gpuledger.telemetry.files import read_checkpoint_inventory, read_egress_file, read_jobs_file, read_samples_file
from gpuledger.telemetry.samples import SampleAggregation
from models.errors import InputError
from models.telemetry import (
    DCGM_DRAM_ACTIVE,
    DCGM_ENGINE_ACTIVE,
    DCGM_GPU_UTIL,
    DCGM_SM_ACTIVE,
    DCGM_TENSOR_ACTIVE,
    FILE_UTILIZATION,
    GPU_ACTIVITY_SCHEMA,
    JOBS_SCHEMA,
)

FILES = SampleAggregation("files", idle_threshold=0.05)


def _utc(hour: int, minute: int = 0, day: int = 3) -> dt.datetime:
    return dt.datetime(2026, 11, day, hour, minute, tzinfo=dt.UTC)


JOBS_CSV = """\
job_id,team,name,project,user,nodes,gpu_model,gpu_count,start,end,state,run_group,checkpoint_uri
007,ml-research,llama-pt,llm,alice,gpu-01;gpu-02,H100,16,2026-11-03T14:00:00,2026-11-03T16:30:00Z,completed,,s3://ckpt/a/
0042,vision,,,bob, gpu-[03-04] ;cpu-1 ,,4,2026-11-03T15:00:00+01:00,,RUNNING,sweep-1,
0043,vision,prep,,bob,cpu-2,,0,2026-11-03T10:00:00,2026-11-03T11:00:00,COMPLETED,,
"""


def _job(**fields: object) -> dict[str, object]:
    row: dict[str, object] = {name: None for name in JOBS_SCHEMA.names()}
    row.update({"cluster": "orion", "source": "files"}, **fields)
    return row


def test_jobs_csv_parses_exactly_and_keeps_leading_zero_ids(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text(JOBS_CSV)
    jobs = read_jobs_file(path, cluster="orion")
    expected = pl.DataFrame(
        [
            _job(
                job_id="007",
                scheduler_job_id="007",
                name="llama-pt",
                account="ml-research",
                project="llm",
                user="alice",
                nodes=["gpu-01", "gpu-02"],
                gpu_model="H100",
                gpu_count=16,
                start=_utc(14),
                end=_utc(16, 30),
                state="COMPLETED",
                checkpoint_uri="s3://ckpt/a/",
            ),
            # No name: run group given; +01:00 converted to UTC; running, so no end. The GPU-less job is left out.
            # 007 has no run group (never its name): the run is its requeue chain.
            _job(
                job_id="0042",
                scheduler_job_id="0042",
                account="vision",
                user="bob",
                nodes=["gpu-03", "gpu-04", "cpu-1"],
                gpu_count=4,
                start=_utc(14),
                state="RUNNING",
                run_group="sweep-1",
            ),
        ],
        schema=JOBS_SCHEMA,
    )
    assert_frame_equal(jobs, expected)


def test_jobs_gzip_csv_cluster_column_and_minimal_columns(tmp_path):
    path = tmp_path / "jobs.csv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(
            "cluster,job_id,account,nodes,gpu_count,start,end,state\n"
            "a,1,ml,gpu-01,1,2026-11-03 14:00,2026-11-03 15:00,FAILED\n"
            "b,1,ml,gpu-01,2,2026-11-03 14:00,2026-11-03 15:00,UNKNOWN\n"
        )
    jobs = read_jobs_file(path, source="lsf-dump")
    assert jobs.select("cluster", "job_id", "scheduler_job_id", "gpu_count", "state", "run_group", "source").rows() == [
        ("a", "1", "1", 1, "FAILED", None, "lsf-dump"),
        ("b", "1", "1", 2, "UNKNOWN", None, "lsf-dump"),
    ]


def test_jobs_parquet_with_node_lists(tmp_path):
    path = tmp_path / "jobs.parquet"
    pl.DataFrame(
        {
            "job_id": [12],
            "cluster": ["orion"],
            "account": ["ml"],
            "nodes": [["gpu-01", "gpu-02"]],
            "gpu_count": [8],
            "start": [dt.datetime(2026, 11, 3, 14)],
            "end": [dt.datetime(2026, 11, 3, 15)],
            "state": ["COMPLETED"],
        }
    ).write_parquet(path)
    expected = pl.DataFrame(
        [
            _job(
                job_id="12",
                scheduler_job_id="12",
                account="ml",
                nodes=["gpu-01", "gpu-02"],
                gpu_count=8,
                start=_utc(14),
                end=_utc(15),
                state="COMPLETED",
            )
        ],
        schema=JOBS_SCHEMA,
    )
    assert_frame_equal(read_jobs_file(path), expected)


SCHEDULER_JOBS_CSV = """\
job_id,scheduler_job_id,account,name,partition,qos,nodes,gpu_count,gpus,mig_profile,start,end,state,run_group
881#1,881,ml,pretrain,gpu,high,gpu-[01-02],4,0-1,,2026-11-03T10:00:00,2026-11-03T11:00:00,PREEMPTED,llama
881,881,ml,pretrain,gpu,high,gpu-01;gpu-03,3,"gpu-01:0-1;gpu-03:4",,2026-11-03T11:00:00,2026-11-03T12:00:00,COMPLETED,llama
nb-1,,ml,jupyter-alice,interactive,,gpu-04,2,gpu-04:0,1G.10GB,2026-11-03T10:00:00,,RUNNING,
"""


def test_jobs_with_scheduler_ids_partitions_gpus_and_mig_slices(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text(SCHEDULER_JOBS_CSV)
    jobs = read_jobs_file(path, cluster="orion")
    columns = ["job_id", "scheduler_job_id", "partition", "qos", "gpu_ids", "mig_profile", "run_group"]
    assert jobs.select(columns).rows() == [
        ("881#1", "881", "gpu", "high", ["gpu-01:0", "gpu-01:1", "gpu-02:0", "gpu-02:1"], None, "llama"),
        ("881", "881", "gpu", "high", ["gpu-01:0", "gpu-01:1", "gpu-03:4"], None, "llama"),
        # scheduler_job_id defaults to job_id; two MIG slices of GPU 0; an empty run group is none, not the name.
        ("nb-1", "nb-1", "interactive", None, ["gpu-04:0"], "1g.10gb", None),
    ]


@pytest.mark.parametrize(
    ("nodes", "gpu_count", "gpus", "mig_profile", "message"),
    [
        ("gpu-01", "2", "0-", "", "'0-' is not a list of GPU indices"),
        ("gpu-01", "2", "1-0", "", "range '1-0' runs backwards"),
        ("gpu-01", "2", '"0,0"', "", "a GPU is listed twice"),
        ("gpu-01", "2", "gpu-02:0-1", "", "'gpu-02' is not one of the job's nodes"),
        ("gpu-[01-02]", "2", "gpu-01:0;gpu-01:1", "", "node 'gpu-01' is listed twice"),
        ("gpu-[01-02]", "2", "0-1", "", "names 4 GPU.s., gpu_count is 2"),
        ("gpu-01", "2", "0", "7g", "'7g' is not a MIG profile"),
    ],
)
def test_bad_gpus_and_mig_profiles_name_the_row(tmp_path, nodes, gpu_count, gpus, mig_profile, message):
    path = tmp_path / "jobs.csv"
    path.write_text(
        "job_id,account,nodes,gpu_count,gpus,mig_profile,start,end,state\n"
        "1,ml,gpu-01,1,0,,2026-11-03T10:00:00,2026-11-03T11:00:00,COMPLETED\n"
        f"2,ml,{nodes},{gpu_count},{gpus},{mig_profile},2026-11-03T10:00:00,2026-11-03T11:00:00,COMPLETED\n"
    )
    with pytest.raises(InputError, match=message) as caught:
        read_jobs_file(path, cluster="orion")
    column = "mig_profile" if mig_profile else "gpus"
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 2, column)


JOBS_HEADER = "job_id,cluster,account,nodes,gpu_count,start,end,state"
GOOD_JOB = "1,orion,ml,gpu-01,1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED"


@pytest.mark.parametrize(
    ("bad_row", "column", "message"),
    [
        (
            "2,orion,ml,gpu-01,8.5,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED",
            "gpu_count",
            "'8.5' is not a whole",
        ),
        ("2,orion,ml,gpu-01,-1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "gpu_count", "'-1' is not a whole"),
        ("2,orion,ml,gpu-01,,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "gpu_count", "value is empty"),
        ("2,orion,ml,gpu-01,1,03/11/2026,2026-11-03T15:00:00,COMPLETED", "start", "not an ISO 8601 time"),
        ("2,orion,ml,gpu-01,1,2026-11-03T14:00:00,soon,COMPLETED", "end", "'soon' is not an ISO 8601 time"),
        ("2,orion,ml,gpu-01,1,2026-11-03T14:00:00,2026-11-03T15:00:00,DONE", "state", "unknown state 'DONE'"),
        ("2,orion,,gpu-01,1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "account", "value is empty"),
        ("2,,ml,gpu-01,1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "cluster", "value is empty"),
        ("2,orion,ml,gpu-[02-01],1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "nodes", "runs backwards"),
        ("2,orion,ml,,1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "nodes", "empty node list"),
        ("2,orion,ml,gpu-01;gpu-01,1,2026-11-03T14:00:00,2026-11-03T15:00:00,COMPLETED", "nodes", "listed twice"),
        ("2,orion,ml,gpu-01,1,2026-11-03T14:00:00,2026-11-03T13:00:00,COMPLETED", "end", "end is before start"),
        ("2,orion,ml,gpu-01,1,2026-11-03T14:00:00,,COMPLETED", "end", "a COMPLETED job needs an end time"),
        ("2,orion,ml,gpu-01,1,2026-11-03T14:00:00,2026-11-03T15:00:00,RUNNING", "end", "running job has an end"),
        (GOOD_JOB, "job_id", "job 1 of cluster orion appears twice"),
    ],
)
def test_bad_job_values_name_file_row_and_column(tmp_path, bad_row, column, message):
    path = tmp_path / "jobs.csv"
    path.write_text(f"{JOBS_HEADER}\n{GOOD_JOB}\n{bad_row}\n")
    with pytest.raises(InputError, match=message) as caught:
        read_jobs_file(path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 2, column)


@pytest.mark.parametrize(
    ("header", "cluster", "column"),
    [
        ("job_id,account,nodes,gpu_count,start,state", None, "cluster"),
        ("job_id,cluster,nodes,gpu_count,start,state", None, "account"),
        ("job_id,account,nodes,start,state", "orion", "gpu_count"),
        ("job_id,account,team,nodes,gpu_count,start,state", "orion", "team"),
    ],
)
def test_missing_job_column_is_named(tmp_path, header, cluster, column):
    path = tmp_path / "jobs.csv"
    path.write_text(header + "\n")
    with pytest.raises(InputError) as caught:
        read_jobs_file(path, cluster=cluster)
    assert (caught.value.file, caught.value.column) == (str(path), column)


def _minutes(node: str, gpu: str, start: dt.datetime, utilizations: list[float]) -> list[str]:
    return [f"{node},{gpu},{(start + dt.timedelta(minutes=i)).isoformat()},{u}" for i, u in enumerate(utilizations)]


def test_samples_aggregate_to_hourly_activity(tmp_path):
    # gpu 0: one full hour, 15 busy minutes at 0.8 and 45 idle at 0.05 (the threshold itself is idle).
    hour = dt.datetime(2026, 11, 3, 14)
    busy_then_idle = [0.8] * 15 + [0.05] * 45
    # gpu 1: 20 minutes at 0.5 spanning two hours (10 + 10), with a job label.
    spanning = [f"{row},job-7" for row in _minutes("gpu-01", "1", dt.datetime(2026, 11, 3, 14, 50), [0.5] * 20)]
    path = tmp_path / "samples.csv"
    path.write_text(
        "node,gpu,timestamp,utilization,job_id\n"
        + "\n".join([f"{row}," for row in _minutes("gpu-01", "0", hour, busy_then_idle)] + spanning)
        + "\n"
    )
    activity = read_samples_file(path, cluster="orion", aggregation=FILES, interval_seconds=60)
    assert activity.schema == GPU_ACTIVITY_SCHEMA
    columns = ["cluster", "node", "gpu", "hour", "job_id", "metric", "sampled_seconds", "active_seconds"]
    columns += ["busy_seconds", "active_busy_seconds", "mean_utilization", "samples", "source"]
    busy = 15 * 0.8 * 60
    expected = pl.DataFrame(
        [
            ("orion", "gpu-01", "0", _utc(14), None, FILE_UTILIZATION, 3600.0, 900.0, busy + 45 * 3, busy, 0.2375, 60),
            ("orion", "gpu-01", "1", _utc(14), "job-7", FILE_UTILIZATION, 600.0, 600.0, 300.0, 300.0, 0.5, 10),
            ("orion", "gpu-01", "1", _utc(15), "job-7", FILE_UTILIZATION, 600.0, 600.0, 300.0, 300.0, 0.5, 10),
        ],
        schema={name: GPU_ACTIVITY_SCHEMA[name] for name in columns[:-1]},
        orient="row",
    ).with_columns(source=pl.lit("files"))
    assert_frame_equal(activity.select(columns).sort("gpu", "hour"), expected, abs_tol=1e-9)
    assert activity.select("gpu_instance", "mig_profile", "sm_active", "fb_used_mib").null_count().row(0) == (3,) * 4


def test_samples_from_parquet_and_csv_files_sum_per_hour(tmp_path):
    # Two Parquet files (typed columns, integer GPU index) covering the same hour aggregate together.
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    for path, minute, value in ((first, 0, 1.0), (second, 30, 0.0)):
        pl.DataFrame(
            {
                "cluster": ["orion"],
                "node": ["gpu-02"],
                "gpu": [3],
                "timestamp": [dt.datetime(2026, 11, 3, 14, minute)],
                "utilization": [value],
                "metric": ["DCGM_FI_PROF_GR_ENGINE_ACTIVE"],
                "instance_id": ["i-0abc"],
            }
        ).write_parquet(path)
    dump = SampleAggregation("dcgm-dump", idle_threshold=0.05)
    activity = read_samples_file([first, second], aggregation=dump, interval_seconds=30)
    columns = ("cluster", "node", "gpu", "hour", "job_id", "instance_id", "metric", "sampled_seconds")
    assert activity.select(*columns, "active_seconds", "mean_utilization", "samples", "source").rows() == [
        ("orion", "gpu-02", "3", _utc(14), None, "i-0abc", DCGM_ENGINE_ACTIVE, 60.0, 30.0, 0.5, 2, "dcgm-dump")
    ]


def test_samples_use_the_callers_database_without_changing_its_session(tmp_path, con):
    # GLOBAL too: cursors of the connection start from the global value.
    con.execute("SET GLOBAL TimeZone = 'America/New_York'")
    con.execute("SET TimeZone = 'America/New_York'")
    path = tmp_path / "samples.csv"
    # Naive times are UTC whatever the session's zone; offsets are honoured.
    path.write_text(
        "node,gpu,timestamp,utilization,cluster\n"
        "gpu-01,0,2026-11-03T14:59:00,0.5,orion\n"
        "gpu-01,0,2026-11-03T10:00:00-05:00,0.7,orion\n"
    )
    activity = read_samples_file(path, aggregation=FILES, interval_seconds=60, con=con)
    # rows come in no particular order (DuckDB aggregates in parallel)
    hours = activity.sort("hour").select("hour", "samples", "active_seconds").rows()
    assert hours == [(_utc(14), 1, 60.0), (_utc(15), 1, 60.0)]
    assert con.execute("SELECT current_setting('TimeZone')").fetchone() == ("America/New_York",)


def test_every_metric_column_is_a_sample_and_sm_activity_prices(tmp_path):
    path = tmp_path / "samples.csv"
    header = "node,gpu,timestamp,sm_active,tensor_active,dram_active,engine_active,gpu_util,fb_used_mib"
    rows = [f"gpu-01,0,2026-11-03T14:{minute:02d}:00,0.4,0.1,0.3,0.7,0.9,{1000 + minute}" for minute in range(30)]
    # gpu 1 has no profiling in the file: gpu_util prices it; empty cells are no sample of their metric.
    rows += [f"gpu-01,1,2026-11-03T14:{minute:02d}:00,,,,,0.5,{'' if minute else 80}" for minute in range(30)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    activity = read_samples_file(path, cluster="orion", aggregation=FILES, interval_seconds=60).sort("gpu")
    columns = ("gpu", "metric", "samples", "sampled_seconds", "mean_utilization", "busy_seconds")
    assert activity.select(*columns, "sm_active", "tensor_active", "dram_active", "fb_used_mib").rows() == [
        ("0", DCGM_SM_ACTIVE, 30, 1800.0, 0.4, 0.4 * 1800, 0.4, 0.1, 0.3, 1029.0),
        ("1", DCGM_GPU_UTIL, 30, 1800.0, 0.5, 900.0, None, None, None, 80.0),
    ]
    # Another preference prices the same samples by another metric.
    engine_first = SampleAggregation("files", 0.05, pricing_metrics=(DCGM_ENGINE_ACTIVE, DCGM_GPU_UTIL))
    by_engine = read_samples_file(path, cluster="orion", aggregation=engine_first, interval_seconds=60)
    assert by_engine.sort("gpu").select("metric", "mean_utilization").rows() == [
        (DCGM_ENGINE_ACTIVE, 0.7),
        (DCGM_GPU_UTIL, 0.5),
    ]
    tensor_first = SampleAggregation("files", 0.05, pricing_metrics=(DCGM_TENSOR_ACTIVE, DCGM_DRAM_ACTIVE))
    by_tensor = read_samples_file(path, cluster="orion", aggregation=tensor_first, interval_seconds=60)
    assert by_tensor.select("gpu", "metric", "mean_utilization").rows() == [("0", DCGM_TENSOR_ACTIVE, 0.1)]


def test_mig_slices_and_the_metric_column_of_utilization(tmp_path):
    path = tmp_path / "samples.csv"
    path.write_text(
        "node,gpu,gpu_instance,mig_profile,timestamp,utilization,metric,sm_active\n"
        "gpu-01,0,1,1g.10gb,2026-11-03T14:00:00,0.6,DCGM_FI_PROF_GR_ENGINE_ACTIVE,0.5\n"
        "gpu-01,0,2,1G.10GB,2026-11-03T14:00:00,0.2,,\n"
        "gpu-01,1,,,2026-11-03T14:00:00,0.9,,\n"
    )
    activity = read_samples_file(path, cluster="orion", aggregation=FILES, interval_seconds=60)
    assert activity.sort("gpu", "gpu_instance").select(
        "gpu", "gpu_instance", "mig_profile", "metric", "mean_utilization"
    ).rows() == [
        ("0", "1", "1g.10gb", DCGM_SM_ACTIVE, 0.5),
        ("0", "2", "1g.10gb", FILE_UTILIZATION, 0.2),
        ("1", None, None, FILE_UTILIZATION, 0.9),
    ]
    engine_first = SampleAggregation("files", 0.05, pricing_metrics=(DCGM_ENGINE_ACTIVE,))
    by_engine = read_samples_file(path, cluster="orion", aggregation=engine_first, interval_seconds=60)
    assert by_engine.select("gpu_instance", "metric", "mean_utilization").rows() == [("1", DCGM_ENGINE_ACTIVE, 0.6)]


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("sm_active", "1.5", "sm_active 1.5 is outside 0..1"),
        ("gpu_util", "85", "gpu_util 85 is outside 0..1.*divide percentages by 100"),
        ("tensor_active", "fast", "'fast' is not a number"),
        ("fb_used_mib", "-1", "fb_used_mib -1 is not a number of MiB >= 0"),
        ("fb_used_mib", "inf", "is not a number of MiB >= 0"),
        ("fb_used_mib", "lots", "'lots' is not a number"),
        ("mig_profile", "half", "'half' is not a MIG profile"),
    ],
)
def test_bad_metric_values_name_the_row_and_column(tmp_path, column, value, message):
    names = ["node", "gpu", "timestamp", "sm_active", "tensor_active", "gpu_util", "fb_used_mib", "mig_profile"]
    good = {"node": "gpu-01", "gpu": "0", "timestamp": "2026-11-03T14:00:00", "sm_active": "0.5"}
    good |= {"tensor_active": "", "gpu_util": "0.5", "fb_used_mib": "100", "mig_profile": ""}
    bad = good | {column: value}
    path = tmp_path / "samples.csv"
    path.write_text("\n".join(",".join(row[n] for n in names) for row in ({n: n for n in names}, good, bad)) + "\n")
    with pytest.raises(InputError, match=message) as caught:
        read_samples_file(path, cluster="orion", aggregation=FILES, interval_seconds=60)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 2, column)


def test_a_samples_file_needs_a_value_column(tmp_path):
    path = tmp_path / "samples.csv"
    path.write_text("node,gpu,timestamp,metric\ngpu-01,0,2026-11-03T14:00:00,x\n")
    with pytest.raises(InputError, match="no value column: one of utilization, sm_active") as caught:
        read_samples_file(path, cluster="orion", aggregation=FILES, interval_seconds=60)
    assert caught.value.column == "utilization"


SAMPLES_HEADER = "node,gpu,timestamp,utilization,cluster"
GOOD_SAMPLE = "gpu-01,0,2026-11-03T14:00:00,0.5,orion"


@pytest.mark.parametrize(
    ("bad_row", "column", "message"),
    [
        ("gpu-01,0,2026-11-03T14:01:00,85,orion", "utilization", "85 is outside 0..1.*divide percentages by 100"),
        ("gpu-01,0,2026-11-03T14:01:00,-0.1,orion", "utilization", "outside 0..1"),
        ("gpu-01,0,2026-11-03T14:01:00,NaN,orion", "utilization", "outside 0..1"),
        ("gpu-01,0,2026-11-03T14:01:00,busy,orion", "utilization", "'busy' is not a number"),
        ("gpu-01,0,2026-11-03T14:01:00,,orion", "utilization", "value is empty"),
        ("gpu-01,0,yesterday,0.5,orion", "timestamp", "'yesterday' is not an ISO 8601 time"),
        (",0,2026-11-03T14:01:00,0.5,orion", "node", "value is empty"),
        ("gpu-01, ,2026-11-03T14:01:00,0.5,orion", "gpu", "value is empty"),
        ("gpu-01,0,2026-11-03T14:01:00,0.5,", "cluster", "value is empty"),
    ],
)
def test_bad_samples_name_file_row_and_column(tmp_path, bad_row, column, message):
    path = tmp_path / "samples.csv"
    path.write_text(f"{SAMPLES_HEADER}\n{GOOD_SAMPLE}\n{GOOD_SAMPLE}\n{bad_row}\n")
    with pytest.raises(InputError, match=message) as caught:
        read_samples_file(path, aggregation=FILES, interval_seconds=60)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 3, column)


def test_first_bad_row_wins_across_columns_and_files(tmp_path):
    good, bad = tmp_path / "a.csv", tmp_path / "b.csv"
    good.write_text(f"{SAMPLES_HEADER}\n{GOOD_SAMPLE}\n")
    bad.write_text(f"{SAMPLES_HEADER}\n{GOOD_SAMPLE}\ngpu-01,0,later,0.5,orion\ngpu-01,0,2026-11-03T14:00:00,2,orion\n")
    with pytest.raises(InputError) as caught:
        read_samples_file([good, bad], aggregation=FILES, interval_seconds=60)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(bad), 2, "timestamp")


def test_samples_without_cluster_need_the_cluster_argument(tmp_path):
    path = tmp_path / "samples.csv"
    path.write_text("node,gpu,timestamp,utilization\ngpu-01,0,2026-11-03T14:00:00,0.5\n")
    with pytest.raises(InputError, match="required column is missing") as caught:
        read_samples_file(path, aggregation=FILES, interval_seconds=60)
    assert (caught.value.file, caught.value.column) == (str(path), "cluster")


def test_checkpoint_inventory_reads_listings_with_exact_bytes(tmp_path):
    path = tmp_path / "checkpoints.csv"
    path.write_text(
        "as_of,uri,bytes\n2026-11-02,s3://ckpt/run-1/step-100/,1099511627776\n2026-11-02T00:00:00Z,s3://ckpt/x,0042\n"
    )
    frame = read_checkpoint_inventory(path)
    assert frame.rows() == [
        (dt.datetime(2026, 11, 2, tzinfo=dt.UTC), "s3://ckpt/run-1/step-100/", 1_099_511_627_776, None),
        (dt.datetime(2026, 11, 2, tzinfo=dt.UTC), "s3://ckpt/x", 42, None),
    ]


def test_checkpoint_inventory_keeps_the_object_write_time(tmp_path):
    path = tmp_path / "checkpoints.csv"
    path.write_text(
        "as_of,uri,bytes,last_modified\n"
        "2026-11-02,s3://ckpt/run-1/step-100/,10,2026-10-30T08:15:00+01:00\n"
        "2026-11-02,s3://ckpt/run-1/step-200/,20,\n"
    )
    assert read_checkpoint_inventory(path).select("uri", "last_modified").rows() == [
        ("s3://ckpt/run-1/step-100/", dt.datetime(2026, 10, 30, 7, 15, tzinfo=dt.UTC)),
        ("s3://ckpt/run-1/step-200/", None),
    ]
    path.write_text("as_of,uri,bytes,last_modified\n2026-11-02,s3://ckpt/a/,1,\n2026-11-02,s3://ckpt/b/,1,never\n")
    with pytest.raises(InputError, match="'never' is not an ISO 8601 time") as error:
        read_checkpoint_inventory(path)
    assert (error.value.row, error.value.column) == (2, "last_modified")


@pytest.mark.parametrize(
    ("line", "column"),
    [
        ("2026-11-02,ckpt/run-1/,10", "uri"),
        ("yesterday,s3://ckpt/run-1/,10", "as_of"),
        ("2026-11-02,s3://ckpt/run-1/,1.5", "bytes"),
        ("2026-11-02,s3://ckpt/run-1/,", "bytes"),
    ],
)
def test_checkpoint_inventory_names_the_bad_row_and_column(tmp_path, line, column):
    path = tmp_path / "checkpoints.csv"
    path.write_text(f"as_of,uri,bytes\n2026-11-02,s3://ckpt/ok/,1\n{line}\n")
    with pytest.raises(InputError) as error:
        read_checkpoint_inventory(path)
    assert (error.value.file, error.value.row, error.value.column) == (str(path), 2, column)


def test_egress_file_truncates_to_the_hour_and_takes_the_configured_cluster(tmp_path):
    path = tmp_path / "egress.csv"
    path.write_text("node,hour,job_id,bytes\ngpu-01,2026-11-02T10:20:00,0042,500\n")
    frame = read_egress_file(path, cluster="slurm-a")
    assert frame.rows() == [("slurm-a", "gpu-01", dt.datetime(2026, 11, 2, 10, tzinfo=dt.UTC), "0042", 500)]


def test_egress_file_refuses_negative_bytes_and_a_missing_cluster(tmp_path):
    path = tmp_path / "egress.csv"
    path.write_text("node,hour,job_id,bytes\ngpu-01,2026-11-02T10:00:00,j1,-5\n")
    with pytest.raises(InputError) as error:
        read_egress_file(path, cluster="c")
    assert (error.value.row, error.value.column) == (1, "bytes")
    with pytest.raises(InputError) as error:
        read_egress_file(path)
    assert error.value.column == "cluster"


# --- typed (Parquet) columns pass the same checks as text ----------------------------------------------------


def _duckdb_parquet(path: Path, select: str) -> Path:
    with duckdb.connect() as con:
        con.execute(f"COPY ({select}) TO '{path}' (FORMAT parquet)")
    return path


def test_a_text_check_still_runs_on_a_column_typed_as_a_timestamp(tmp_path):
    # The uri check was skipped for any TIMESTAMP column, so a timestamp was taken for a checkpoint URI.
    path = _duckdb_parquet(
        tmp_path / "checkpoints.parquet",
        "SELECT TIMESTAMP '2026-11-02 00:00:00' AS as_of, TIMESTAMP '2026-11-02 00:00:00' AS uri, 1 AS bytes",
    )
    with pytest.raises(InputError, match="is not a URI") as error:
        read_checkpoint_inventory(path)
    assert (error.value.file, error.value.row, error.value.column) == (str(path), 1, "uri")


@pytest.mark.parametrize("sql_type", ["TIMESTAMP", "TIMESTAMPTZ", "DATE"])
def test_an_infinite_typed_time_is_refused_like_infinite_text(tmp_path, sql_type):
    path = _duckdb_parquet(
        tmp_path / "egress.parquet",
        f"SELECT * FROM (VALUES ('gpu-01', CAST('2026-11-02' AS {sql_type}), 'j1', 5),"
        f" ('gpu-01', CAST('infinity' AS {sql_type}), 'j1', 5)) t(node, hour, job_id, bytes)",
    )
    with pytest.raises(InputError, match="'infinity' is not an ISO 8601 time") as error:
        read_egress_file(path, cluster="c")
    assert (error.value.file, error.value.row, error.value.column) == (str(path), 2, "hour")
    text = tmp_path / "egress.csv"
    text.write_text("node,hour,job_id,bytes\ngpu-01,2026-11-02,j1,5\ngpu-01,infinity,j1,5\n")
    with pytest.raises(InputError, match="'infinity' is not an ISO 8601 time") as error:
        read_egress_file(text, cluster="c")
    assert (error.value.row, error.value.column) == (2, "hour")


def test_a_typed_sample_time_must_not_be_empty_and_naive_ones_are_utc(tmp_path):
    good, bad = tmp_path / "good.parquet", tmp_path / "bad.parquet"
    select = "SELECT 'gpu-01' AS node, 0 AS gpu, {ts} AS timestamp, 0.5 AS utilization, 'orion' AS cluster"
    _duckdb_parquet(good, select.format(ts="TIMESTAMP '2026-11-03 14:59:00'"))
    _duckdb_parquet(bad, select.format(ts="CAST(NULL AS TIMESTAMP)"))
    activity = read_samples_file(good, aggregation=FILES, interval_seconds=60)
    assert activity.select("hour", "samples").rows() == [(_utc(14), 1)]
    with pytest.raises(InputError, match="value is empty") as error:
        read_samples_file([good, bad], aggregation=FILES, interval_seconds=60)
    assert (error.value.file, error.value.row, error.value.column) == (str(bad), 1, "timestamp")


def test_jobs_parquet_times_are_checked_by_type_too(tmp_path):
    path = _duckdb_parquet(
        tmp_path / "jobs.parquet",
        "SELECT '1' AS job_id, 'orion' AS cluster, 'team-a' AS account, 'gpu-01' AS nodes, 1 AS gpu_count,"
        " TIMESTAMP '2026-11-03 10:00:00' AS start, TIMESTAMP 'infinity' AS \"end\", 'COMPLETED' AS state",
    )
    with pytest.raises(InputError, match="'infinity' is not an ISO 8601 time") as error:
        read_jobs_file(path)
    assert (error.value.row, error.value.column) == (1, "end")
