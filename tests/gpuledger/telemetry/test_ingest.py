"""Telemetry ingestion: configured sources into the gpu schema, replaced not appended, problems reported."""

from __future__ import annotations

import itertools
import os
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from connectors.telemetry.prometheus import TelemetryError
from gpuledger.telemetry.ingest import ingest_telemetry
from gpuledger.warehouse.home import open_warehouse
from models.config import load_config
from pipelines.deliveries import allocate
from tests.fixtures.allocation_cases import Charge, at, insert_charges
from tests.gpuledger.gates.test_contract import _published, _run

NOW = datetime(2026, 11, 20, tzinfo=UTC)


def _write_files_source(home: Path, *, jobs: str, samples: str, nodes: str = "", allocation: str = "") -> None:
    (home / "t").mkdir(exist_ok=True)
    (home / "t" / "jobs.csv").write_text(jobs)
    (home / "t" / "samples.csv").write_text(samples)
    (home / "t" / "checkpoints.csv").write_text("as_of,uri,bytes\n2026-11-02,s3://ckpt/j1/,100\n")
    (home / "t" / "egress.csv").write_text("node,hour,job_id,bytes\ngpu-01,2026-11-02T10:10:00,j1,5\n")
    (home / "gpuledger.toml").write_text(
        f'[allocation]\nidle_threshold = 0.1\n{allocation}\n[teams.job_accounts]\nml = "llm"\n\n'
        + nodes
        + '[[telemetry]]\nname = "lab"\nkind = "files"\ncluster = "c1"\njobs = "t/jobs.csv"\n'
        'samples = "t/samples.csv"\ncheckpoints = "t/checkpoints.csv"\negress = "t/egress.csv"\n'
    )


JOBS = (
    "job_id,account,nodes,gpu_count,start,end,state\nj1,ml,gpu-01,8,2026-11-02T10:00:00,2026-11-02T11:00:00,COMPLETED\n"
)
SAMPLES = "node,gpu,timestamp,utilization\n" + "".join(
    f"gpu-01,{gpu},2026-11-02T10:{minute:02d}:00,{0.9 if minute < 30 else 0.0}\n"
    for gpu in range(8)
    for minute in range(60)
)
MAPPED = '[[nodes]]\ncluster = "c1"\nnode = "gpu-01"\nresource_id = "i-0gpu"\n\n'


def test_a_files_source_lands_in_the_gpu_schema_and_reruns_replace_it(home, con):
    _write_files_source(home, jobs=JOBS, samples=SAMPLES, nodes=MAPPED)
    config = load_config(home)
    for rerun in range(2):
        if rerun:  # rewritten: read again, its rows replaced
            _rewrite(home / "t" / "samples.csv")
        (load,) = ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
        assert load.read
    assert (load.jobs, load.activity_rows, load.notes) == (1, 8, ())
    counts = con.execute(
        "SELECT (SELECT count(*) FROM gpu.jobs), (SELECT sum(active_seconds) FROM gpu.activity),"
        " (SELECT count(*) FROM gpu.checkpoint_bytes), (SELECT count(*) FROM gpu.egress_bytes)"
    ).fetchone()
    assert counts == (1, 8 * 1800.0, 1, 1)


def test_files_loaded_as_they_are_are_not_read_again_and_anything_that_changes_their_rows_reads_them(home, con):
    _write_files_source(home, jobs=JOBS, samples=SAMPLES, nodes=MAPPED)
    config = load_config(home)

    loads = itertools.count()

    def load_now():  # a minute after the last: the latest load is the one compared
        now = NOW + timedelta(minutes=next(loads))
        return ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=now)[0]

    def stored():
        return [con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("gpu.jobs", "gpu.activity")]

    first = load_now()
    rows = stored()
    kept = load_now()  # the next month's split of the same run, or tomorrow's with no new file
    assert first.read and not kept.read
    assert (kept.jobs, kept.activity_rows, kept.notes) == (first.jobs, first.activity_rows, first.notes)
    assert stored() == rows
    _rewrite(home / "t" / "jobs.csv")
    assert load_now().read
    assert not load_now().read
    # another idle threshold makes other activity of the same samples
    (home / "gpuledger.toml").write_text(
        (home / "gpuledger.toml").read_text().replace("idle_threshold = 0.1", "idle_threshold = 0.2")
    )
    config = load_config(home)
    assert load_now().read
    rows = stored()
    con.execute("DELETE FROM gpu.activity WHERE source = 'lab'")  # rows lost (a restore, a hand edit): read again
    assert load_now().read and stored() == rows
    # A file in the future: named again at every load, until it is no longer in the future.
    with (home / "t" / "samples.csv").open("a") as samples:
        samples.write("gpu-01,0,2026-12-25T10:00:00,0.9\n")
    assert load_now().read
    assert load_now().read


def _rewrite(path: Path) -> None:
    """The same content written again: a new modification time, as a re-sent export has."""
    stat = path.stat()
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_the_split_prices_the_ingested_utilization(home, con):
    _write_files_source(home, jobs=JOBS, samples=SAMPLES, nodes=MAPPED)
    insert_charges(con, [Charge("h1", start=at(2, 10))])
    allocate(con, home, "2026-11")
    rows = con.execute(
        "SELECT category, idle_kind, team, job_id, EffectiveCost FROM allocation.cost_split ORDER BY ALL"
    ).fetchall()
    # All 8 GPUs of the 55.04 hour: idle (0.0) for half of it, allocated idle; 90% active the other half: run is
    # 0.9 of that half, the rest underutilized. All to team llm.
    assert [(r[0], r[1], r[2], r[3], str(r[4])) for r in rows] == [
        ("idle", "allocated", "llm", "j1", "27.5200000000"),
        ("idle", "underutilized", "llm", "j1", "2.7520000000"),
        ("run", None, "llm", "j1", "24.7680000000"),
    ]


def test_unattributable_telemetry_is_reported_not_priced(home, con, caplog):
    jobs = JOBS + "j2,ml,gpu-99,8,2026-11-02T10:00:00,2026-11-02T11:00:00,FAILED\n"
    samples = SAMPLES + "gpu-01,0,2026-11-03T10:00:00,0.9\n"  # busy a day after the only job ended
    _write_files_source(home, jobs=jobs, samples=samples, nodes=MAPPED)
    config = load_config(home)
    (load,) = ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
    assert any("mapped to no cloud resource (gpu-99)" in note for note in load.notes)
    assert any("active outside any job" in note for note in load.notes)
    stored = con.execute("SELECT notes FROM meta.telemetry_loads").fetchone()
    assert stored is not None and list(stored[0]) == list(load.notes)
    caplog.clear()  # the files unchanged: their rows kept, and what they cannot tell said again
    (kept,) = ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW + timedelta(minutes=1))
    assert not kept.read and kept.notes == load.notes
    assert [r.getMessage() for r in caplog.records] == [f"telemetry lab: {note}" for note in load.notes]


def test_samples_labelled_with_unknown_jobs_and_future_times_are_reported(home, con):
    samples = "node,gpu,timestamp,utilization,job_id\ngpu-01,0,2026-11-02T10:00:00,0.9,ghost\n"
    samples += "gpu-01,0,2026-12-25T10:00:00,0.9,j1\n"
    _write_files_source(home, jobs=JOBS, samples=samples, nodes=MAPPED)
    config = load_config(home)
    (load,) = ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
    assert any("labelled with unknown job(s), e.g. ghost" in note for note in load.notes)
    assert any("in the future (clock skew?)" in note for note in load.notes)


def test_a_prometheus_that_is_down_fails_the_run_and_keeps_the_published_split(home, con):
    _write_files_source(home, jobs=JOBS, samples=SAMPLES, nodes=MAPPED)
    insert_charges(con, [Charge("h1", start=at(2, 10))])
    allocate(con, home, "2026-11")
    before = con.execute("SELECT * FROM allocation.cost_split ORDER BY ALL").fetchall()
    with (home / "gpuledger.toml").open("a") as config:
        # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
        config.write(
            '\n[[telemetry]]\nname = "dcgm"\nkind = "prometheus"\ncluster = "k8s"\nurl = "http://127.0.0.1:9"\n'
        )
    with pytest.raises(TelemetryError, match=r"127\.0\.0\.1:9"):
        allocate(con, home, "2026-11")
    assert con.execute("SELECT * FROM allocation.cost_split ORDER BY ALL").fetchall() == before


@pytest.mark.parametrize(
    ("toml", "column"),
    [
        ("[allocation]\nidle_threshold = 5\n", "allocation.idle_threshold"),
        ('[allocation]\nidle_policy = "spread"\n', "allocation.idle_policy"),
        ('[teams]\ntag_key = ["team"]\n', "teams.tag_key"),
        ('[teams.accounts]\n"0001" = "unallocated"\n', "teams.accounts"),
        ('[[nodes]]\ncluster = "c"\nnode = "n"\n', "nodes"),
        ('[[telemetry]]\nname = "x"\nkind = "slurm"\ncluster = "c"\n', "path"),
        ('[[telemetry]]\nname = "x"\nkind = "files"\ncluster = "c"\nurl = "http://x"\n', "url"),
        ('[[telemetry]]\nname = "x"\nkind = "sacct"\ncluster = "c"\n', "kind"),
        (
            '[[telemetry]]\nname = "x"\nkind = "slurm"\ncluster = "c"\npath = "p"\nrun_group_from = ["name"]\n',
            "run_group_from",
        ),
        (
            '[[telemetry]]\nname = "x"\nkind = "slurm"\ncluster = "c"\npath = "p"\nrun_group_from = "wckey"\n',
            "run_group_from",
        ),
    ],
)
def test_bad_allocation_and_telemetry_config_names_the_key(home, toml, column):
    from models.errors import InputError

    (home / "gpuledger.toml").write_text(toml)
    with pytest.raises(InputError) as error:
        load_config(home)
    assert error.value.column == column


def test_a_later_sacct_dump_replaces_a_job_an_earlier_dump_saw_running(home, con):
    header = "JobID|JobName|Account|User|Cluster|NodeList|AllocTRES|Start|End|State\n"
    running = "77|pretrain|llm|ann|c1|gpu-01|gres/gpu=8|2026-10-31T20:00:00|Unknown|RUNNING\n"
    finished = "77|pretrain|llm|ann|c1|gpu-01|gres/gpu=8|2026-10-31T20:00:00|2026-11-01T04:00:00|COMPLETED\n"
    (home / "sacct").mkdir()
    (home / "sacct" / "2026-10.txt").write_text(header + running)
    (home / "sacct" / "2026-11.txt").write_text(header + finished)
    (home / "gpuledger.toml").write_text('[[telemetry]]\nname = "s"\nkind = "slurm"\ncluster = "c1"\npath = "sacct"\n')
    config = load_config(home)
    (load,) = ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
    assert load.jobs == 1
    assert con.execute("SELECT job_id, state, end_time FROM gpu.jobs").fetchall() == [
        ("77", "COMPLETED", datetime(2026, 11, 1, 4, tzinfo=UTC))
    ]


def test_a_slurm_source_without_cluster_takes_each_row_s_cluster_and_needs_one_or_the_other(home, con):
    from models.errors import InputError

    header = "JobID|JobName|Account|User|Cluster|NodeList|AllocTRES|Start|End|State\n"
    rows = (
        "77|pretrain|llm|ann|c1|gpu-01|gres/gpu=8|2026-11-01T00:00:00|2026-11-01T04:00:00|COMPLETED\n"
        "78|eval|llm|ann|c2|gpu-01|gres/gpu=8|2026-11-01T00:00:00|2026-11-01T04:00:00|COMPLETED\n"
    )
    (home / "sacct").mkdir()
    (home / "sacct" / "2026-11.txt").write_text(header + rows)
    (home / "gpus.csv").write_text("job_id,node,gpus\n77,gpu-01,0-7\n78,gpu-01,0-7\n")
    (home / "gpuledger.toml").write_text(
        '[[telemetry]]\nname = "s"\nkind = "slurm"\npath = "sacct"\ngpu_map = "gpus.csv"\n'
    )
    config = load_config(home)
    ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
    assert con.execute("SELECT cluster, job_id, len(gpu_ids) FROM gpu.jobs ORDER BY ALL").fetchall() == [
        ("c1", "77", 8),
        ("c2", "78", 8),
    ]
    # neither a Cluster column nor a configured cluster: the file is refused, naming the missing field
    without = home / "sacct" / "2026-11.txt"
    without.write_text(
        "".join("|".join(line.split("|")[:4] + line.split("|")[5:]) for line in [header, *rows.splitlines(True)])
    )
    with pytest.raises(InputError, match=r"set cluster in its \[\[telemetry\]\] section") as refused:
        ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
    assert (refused.value.file, refused.value.row, refused.value.column) == (str(without), 1, "Cluster")


def test_requeue_attempts_across_dumps_are_numbered_once_merged(home, con):
    header = "JobID|JobName|Account|User|Cluster|WCKey|NodeList|AllocTRES|Start|End|State\n"

    def attempt(node: str, start: str, end: str, state: str) -> str:
        return f"77|pretrain|llm|ann|c1|*llama|{node}|gres/gpu=8|{start}|{end}|{state}\n"

    first = attempt("gpu-01", "2026-10-31T20:00:00", "2026-10-31T22:00:00", "REQUEUED")
    second_running = attempt("gpu-02", "2026-10-31T22:10:00", "Unknown", "RUNNING")
    second = attempt("gpu-02", "2026-10-31T22:10:00", "2026-11-01T02:00:00", "PREEMPTED")
    third = attempt("gpu-01", "2026-11-01T02:10:00", "2026-11-01T04:00:00", "COMPLETED")
    (home / "sacct").mkdir()
    # The November dump no longer lists the first attempt: alone it would call the second one 77#1.
    (home / "sacct" / "2026-10.txt").write_text(header + first + second_running)
    (home / "sacct" / "2026-11.txt").write_text(header + second + third)
    (home / "gpus.csv").write_text("job_id,node,gpus\n77,gpu-01,0-7\n77,gpu-02,0-7\n")
    (home / "gpuledger.toml").write_text(
        '[[telemetry]]\nname = "s"\nkind = "slurm"\ncluster = "c1"\npath = "sacct"\n'
        'run_group_from = ["comment", "wckey"]\ngpu_map = "gpus.csv"\n'
    )
    config = load_config(home)
    (load,) = ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
    assert load.jobs == 3
    rows = con.execute(
        "SELECT job_id, scheduler_job_id, state, end_time, run_group, gpu_ids[1], len(gpu_ids)"
        " FROM gpu.jobs ORDER BY start_time"
    ).fetchall()
    assert rows == [
        ("77#1", "77", "PREEMPTED", datetime(2026, 10, 31, 22, tzinfo=UTC), "llama", "gpu-01:0", 8),
        ("77#2", "77", "PREEMPTED", datetime(2026, 11, 1, 2, tzinfo=UTC), "llama", "gpu-02:0", 8),
        ("77", "77", "COMPLETED", datetime(2026, 11, 1, 4, tzinfo=UTC), "llama", "gpu-01:0", 8),
    ]


def test_the_configured_pricing_metrics_choose_and_checkpoint_write_times_land(home, con):
    samples = "node,gpu,timestamp,utilization,sm_active\n" + "".join(
        f"gpu-01,0,2026-11-02T10:{minute:02d}:00,0.9,0.3\n" for minute in range(60)
    )
    checkpoints = "as_of,uri,bytes,last_modified\n2026-11-02,s3://ckpt/j1/,100,2026-11-01T23:00:00Z\n"
    for setting, expected in (
        ("", ("DCGM_FI_PROF_SM_ACTIVE", 0.3)),
        ('pricing_metrics = ["file:utilization"]\n', ("file:utilization", 0.9)),
    ):
        _write_files_source(home, jobs=JOBS, samples=samples, nodes=MAPPED, allocation=setting)
        (home / "t" / "checkpoints.csv").write_text(checkpoints)
        config = load_config(home)
        ingest_telemetry(con, config.telemetry, config.allocation, "2026-11", now=NOW)
        assert con.execute("SELECT metric, mean_utilization FROM gpu.activity").fetchall() == [expected]
    assert con.execute("SELECT uri, last_modified FROM gpu.checkpoint_bytes").fetchall() == [
        ("s3://ckpt/j1/", datetime(2026, 11, 1, 23, tzinfo=UTC))
    ]


def test_demo_samples_handed_over_twice_count_once_and_are_reported(demo_copy, demo_home):
    before = _published(demo_copy, demo_home)
    samples = 0
    with duckdb.connect() as scratch:
        for path in sorted((demo_copy / "telemetry" / "slurm" / "dcgm").glob("*.parquet")):
            # every row twice, as two exporters of the cluster would hand it over
            copy = path.with_name(path.name + ".tmp")
            scratch.execute(f"COPY (FROM '{path}' UNION ALL FROM '{path}') TO '{copy}' (FORMAT parquet)")
            samples += scratch.execute(
                "SELECT count(engine_active) + count(sm_active) + count(tensor_active) + count(dram_active)"
                f" + count(fb_used_mib) FROM '{path}'"
            ).fetchone()[0]
            copy.replace(path)
    ran = _run(demo_copy, "run")
    assert ran.returncode == 0, ran.stderr
    assert _published(demo_copy, demo_home) == before
    with closing(open_warehouse(demo_copy)) as con:
        (notes,) = con.execute(
            "SELECT notes FROM meta.telemetry_loads WHERE source_name = 'helios-slurm-dcgm'"
            " ORDER BY loaded_at DESC LIMIT 1"
        ).fetchone()
    assert any(note.startswith(f"{samples} duplicate sample(s) of ") for note in notes), notes
    # said where a person looks: the run's summary and status
    status = _run(demo_copy, "status")
    assert status.returncode == 0, status.stderr
    for shown in (ran.stdout, status.stdout):
        assert f"\nnote: telemetry helios-slurm-dcgm: {samples} duplicate sample(s) of " in shown, shown
