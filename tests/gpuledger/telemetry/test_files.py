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
from models.errors import InputError
from models.telemetry import GPU_ACTIVITY_SCHEMA, JOBS_SCHEMA


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
                run_group="llama-pt",
                checkpoint_uri="s3://ckpt/a/",
            ),
            # No name: run group given; +01:00 converted to UTC; running, so no end. The GPU-less job is left out.
            _job(
                job_id="0042",
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
    assert jobs.select("cluster", "job_id", "gpu_count", "state", "run_group", "source").rows() == [
        ("a", "1", 1, "FAILED", "1", "lsf-dump"),
        ("b", "1", 2, "UNKNOWN", "1", "lsf-dump"),
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
                account="ml",
                nodes=["gpu-01", "gpu-02"],
                gpu_count=8,
                start=_utc(14),
                end=_utc(15),
                state="COMPLETED",
                run_group="12",
            )
        ],
        schema=JOBS_SCHEMA,
    )
    assert_frame_equal(read_jobs_file(path), expected)


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
    activity = read_samples_file(path, cluster="orion", idle_threshold=0.05, interval_seconds=60)
    expected = pl.DataFrame(
        [
            ("orion", "gpu-01", "0", _utc(14), None, None, "file:utilization", 3600.0, 900.0, 0.2375, 60, "files"),
            ("orion", "gpu-01", "1", _utc(14), "job-7", None, "file:utilization", 600.0, 600.0, 0.5, 10, "files"),
            ("orion", "gpu-01", "1", _utc(15), "job-7", None, "file:utilization", 600.0, 600.0, 0.5, 10, "files"),
        ],
        schema=GPU_ACTIVITY_SCHEMA,
        orient="row",
    )
    assert_frame_equal(activity.sort("gpu", "hour"), expected, abs_tol=1e-12)


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
    activity = read_samples_file([first, second], idle_threshold=0.05, interval_seconds=30, source="dcgm-dump")
    assert activity.rows() == [
        (
            "orion",
            "gpu-02",
            "3",
            _utc(14),
            None,
            "i-0abc",
            "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
            60.0,
            30.0,
            0.5,
            2,
            "dcgm-dump",
        )
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
    activity = read_samples_file(path, idle_threshold=0.05, interval_seconds=60, con=con)
    # rows come in no particular order (DuckDB aggregates in parallel)
    hours = activity.sort("hour").select("hour", "samples", "active_seconds").rows()
    assert hours == [(_utc(14), 1, 60.0), (_utc(15), 1, 60.0)]
    assert con.execute("SELECT current_setting('TimeZone')").fetchone() == ("America/New_York",)


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
        read_samples_file(path, idle_threshold=0.05, interval_seconds=60)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), 3, column)


def test_first_bad_row_wins_across_columns_and_files(tmp_path):
    good, bad = tmp_path / "a.csv", tmp_path / "b.csv"
    good.write_text(f"{SAMPLES_HEADER}\n{GOOD_SAMPLE}\n")
    bad.write_text(f"{SAMPLES_HEADER}\n{GOOD_SAMPLE}\ngpu-01,0,later,0.5,orion\ngpu-01,0,2026-11-03T14:00:00,2,orion\n")
    with pytest.raises(InputError) as caught:
        read_samples_file([good, bad], idle_threshold=0.05, interval_seconds=60)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(bad), 2, "timestamp")


def test_samples_without_cluster_need_the_cluster_argument(tmp_path):
    path = tmp_path / "samples.csv"
    path.write_text("node,gpu,timestamp,utilization\ngpu-01,0,2026-11-03T14:00:00,0.5\n")
    with pytest.raises(InputError, match="required column is missing") as caught:
        read_samples_file(path, idle_threshold=0.05, interval_seconds=60)
    assert (caught.value.file, caught.value.column) == (str(path), "cluster")


def test_checkpoint_inventory_reads_listings_with_exact_bytes(tmp_path):
    path = tmp_path / "checkpoints.csv"
    path.write_text(
        "as_of,uri,bytes\n2026-11-02,s3://ckpt/run-1/step-100/,1099511627776\n2026-11-02T00:00:00Z,s3://ckpt/x,0042\n"
    )
    frame = read_checkpoint_inventory(path)
    assert frame.rows() == [
        (dt.datetime(2026, 11, 2, tzinfo=dt.UTC), "s3://ckpt/run-1/step-100/", 1_099_511_627_776),
        (dt.datetime(2026, 11, 2, tzinfo=dt.UTC), "s3://ckpt/x", 42),
    ]


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
    activity = read_samples_file(good, idle_threshold=0.05, interval_seconds=60)
    assert activity.select("hour", "samples").rows() == [(_utc(14), 1)]
    with pytest.raises(InputError, match="value is empty") as error:
        read_samples_file([good, bad], idle_threshold=0.05, interval_seconds=60)
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
