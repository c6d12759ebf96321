"""Hand-checked cases of what the split says GPUs did: activity-priced run, per-GPU attribution, run identity,
frozen cost to finish, failure taxonomy and lost work, idle the bill knows, MIG slices.

Unless a test says otherwise a GPU charge is one hour of a p5.48xlarge (8 H100) at 55.04, i.e. capacity
8 x 3600 = 28800 GPU-seconds at 6.88 per GPU-hour (0.0019111 per GPU-second); node gpu-01 runs on i-0gpu.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from models.allocation import NodeMapping
from tests.fixtures.allocation_cases import (
    Charge,
    Job,
    at,
    hourly_charges,
    insert_activity,
    insert_charges,
    insert_checkpoint_bytes,
    insert_jobs,
    node_config,
    pieces,
    split,
    storage_charge,
)

D = Decimal
SM_ACTIVE = "DCGM_FI_PROF_SM_ACTIVE"


def assert_pieces(con: duckdb.DuckDBPyConnection, line_item: str, expected: list[tuple[object, ...]]) -> None:
    """(category, idle_kind, team, job_id, EffectiveCost, gpu_hours) of a charge, as a multiset."""
    assert Counter(pieces(con, line_item)) == Counter(expected)


def job_row(con: duckdb.DuckDBPyConnection, job_id: str, columns: str) -> tuple[object, ...]:
    row = con.execute(f"SELECT {columns} FROM showback.job_costs WHERE job_id = $id", {"id": job_id}).fetchone()
    assert row is not None
    return row


def team_month(con: duckdb.DuckDBPyConnection, team: str, columns: str, month: date = date(2026, 11, 1)) -> tuple:
    row = con.execute(
        f"SELECT {columns} FROM showback.team_month WHERE team = $team AND billing_month = $month",
        {"team": team, "month": month},
    ).fetchone()
    assert row is not None
    return row


def test_constant_ten_percent_sm_activity_is_ten_percent_run_and_ninety_underutilized(con):
    # Job j10 holds all 8 GPUs for the hour; its own samples show SM activity 0.10 throughout (above the 5 % idle
    # threshold, so every sample is active): busy 8 x 3600 x 0.10 = 2880 GPU-s -> run 55.04 x 0.1 = 5.504;
    # active below saturation 28800 - 2880 = 25920 -> underutilized 49.536; nothing held inactive.
    insert_charges(con, [Charge("h")])
    insert_jobs(con, [Job("j10", at(2), at(2, 1))])
    insert_activity(con, "gpu-01", at(2), active_seconds=3600, busy_seconds=360, job_id="j10", metric=SM_ACTIVE)
    split(con, node_config())
    assert_pieces(con, "h", [("run", None, "llm", "j10", D("5.504"), 0.8),
                             ("idle", "underutilized", "llm", "j10", D("49.536"), 7.2)])  # fmt: skip
    metric = con.execute("SELECT DISTINCT metric FROM allocation.cost_split WHERE x_SourceLineItemId = 'h'").fetchall()
    assert metric == [(SM_ACTIVE,)]
    # pricing = "active-time" keeps OpenCost-style semantics: active time is run, whatever its level
    split(con, node_config(pricing="active-time"))
    assert_pieces(con, "h", [("run", None, "llm", "j10", D("55.04"), 8.0)])


def test_busy_job_beside_an_idle_notebook_is_priced_per_gpu_not_smeared_and_shown_per_user(con):
    # Node gpu-01 (8 GPUs), one hour, unlabelled DCGM samples per GPU: GPUs 0-1 at 90 % (the training job),
    # GPUs 2-3 at 1 % (a notebook: below the 5 % threshold, so inactive), GPUs 4-7 at 0 (no job).
    # With the GPU indices each job held (gpu_ids):
    #   train: busy 2 x 3600 x 0.9 = 6480 GPU-s -> run 12.384; active below saturation 720 -> underutilized 1.376
    #   notebook: busy 2 x 3600 x 0.01 = 72 GPU-s -> run 0.1376; held inactive 7128 -> idle allocated 13.6224
    #   unallocated 4 x 3600 = 14400 -> 27.52 to the owner team infra.
    insert_charges(con, [Charge("h", tags={"team": "infra"})])
    insert_jobs(
        con,
        [
            Job("train", at(2), at(2, 1), gpu_count=2, gpu_ids=("gpu-01:0", "gpu-01:1"), user="alice"),
            Job("nb", at(2), at(2, 1), gpu_count=2, account="research", gpu_ids=("gpu-01:2", "gpu-01:3"), user="bob"),
        ],
    )
    insert_activity(con, "gpu-01", at(2), active_seconds=3600, busy_seconds=3240, gpus=[0, 1])
    insert_activity(con, "gpu-01", at(2), active_seconds=0, busy_seconds=36, gpus=[2, 3], utilization=0.01)
    insert_activity(con, "gpu-01", at(2), active_seconds=0, busy_seconds=0, gpus=[4, 5, 6, 7], utilization=0.0)
    split(con, node_config())
    expected_per_gpu = [
        ("run", None, "llm", "train", D("12.384"), 1.8),
        ("idle", "underutilized", "llm", "train", D("1.376"), 0.2),
        ("run", None, "research", "nb", D("0.1376"), 0.02),
        ("idle", "allocated", "research", "nb", D("13.6224"), 1.98),
        ("idle", "unallocated", "infra", None, D("27.52"), 4.0),
    ]
    assert_pieces(con, "h", expected_per_gpu)
    # each piece says how it was computed, as FOCUS 1.3 writes it: the train job's run is 6480 of 28800 GPU-seconds
    details = con.execute(
        "SELECT AllocatedMethodId, AllocatedResourceId, AllocatedMethodDetails FROM allocation.cost_split"
        " WHERE job_id = 'train' AND category = 'run'"
    ).fetchone()
    assert details is not None and details[:2] == ("gpuledger-split-v2", "train")
    assert json.loads(details[2]) == {
        "Elements": [{"AllocatedRatio": 0.225, "UsageUnit": "GPU-Seconds", "UsageQuantity": 6480.0}]
    }
    # per user beside per team: each user's jobs (the unallocated GPUs have no user and stay with the team)
    users = con.execute('SELECT team, "user", run_cost, idle_cost FROM showback.user_month ORDER BY ALL').fetchall()
    assert users == [("llm", "alice", D("12.384"), D("1.376")), ("research", "bob", D("0.1376"), D("13.6224"))]
    bases = con.execute(
        "SELECT DISTINCT job_id, allocation_basis FROM allocation.cost_split WHERE job_id IS NOT NULL ORDER BY 1"
    ).fetchall()
    assert bases == [("nb", "gpu-index"), ("train", "gpu-index")]
    assert team_month(con, "llm", "node_shared_gpu_cost") == (D(0),)

    # Without indices the node's samples can only be shared: both get the node's busy GPU-seconds
    # (6480 + 72 = 6552 of the 4 x 3600 they held, i.e. 45.5 % each) and the rows say node-shared.
    con.execute("UPDATE gpu.jobs SET gpu_ids = NULL")
    split(con, node_config())
    shared = con.execute(
        "SELECT job_id, EffectiveCost, allocation_basis FROM allocation.cost_split WHERE category = 'run' ORDER BY 1"
    ).fetchall()
    assert shared == [("nb", D("6.2608"), "node-shared"), ("train", D("6.2608"), "node-shared")]
    node_shared = (
        team_month(con, "llm", "node_shared_gpu_cost")[0] + team_month(con, "research", "node_shared_gpu_cost")[0]
    )
    assert node_shared == D("27.52")  # every cent of the jobs' GPU cost was priced by a shared node measure


def test_weekend_jupyter_sessions_are_sessions_not_a_completed_run(con):
    # 13 weekend sessions of one notebook name (no run group from the scheduler) and one batch job that completed.
    # Each is charged one hour (allocation-only, 8 GPUs: 55.04). Sessions: 13, cost 715.52; completed runs: 1
    # (the batch job), cost per completed run 55.04. Grouping by name does not make the sessions a run either.
    insert_charges(con, hourly_charges("h", at(7), 14))
    sessions = [Job(f"nb{i}", at(7, i), at(7, i + 1), name="jupyter-alice", account="research") for i in range(13)]
    insert_jobs(con, [*sessions, Job("batch", at(7, 13), at(7, 14), account="research")])
    for config in (node_config(), node_config(group_by_name=True)):
        split(con, config)
        assert team_month(con, "research", "sessions, session_cost, completed_runs, cost_per_completed_run") == (
            13,
            D("715.52"),
            1,
            D("55.04"),
        )
    assert job_row(con, "nb0", "session, run_group_completed") == (True, False)


def test_run_groups_are_the_schedulers_not_the_job_name(con):
    # Two completed jobs named "train" without a scheduler run group are two runs; two attempts sharing the run
    # group "rg" (the first OUT_OF_MEMORY) are one run, completed by its final attempt. A group whose final attempt
    # failed is not completed even if an earlier attempt completed.
    insert_charges(con, hourly_charges("h", at(2), 6))
    insert_jobs(
        con,
        [
            Job("t1", at(2, 0), at(2, 1), name="train"),
            Job("t2", at(2, 1), at(2, 2), name="train"),
            Job("a1", at(2, 2), at(2, 3), state="OUT_OF_MEMORY", run_group="rg"),
            Job("a2", at(2, 3), at(2, 4), run_group="rg"),
            Job("b1", at(2, 4), at(2, 5), run_group="rg-b"),
            Job("b2", at(2, 5), at(2, 6), state="FAILED", run_group="rg-b"),
        ],
    )
    split(con, node_config())
    groups = con.execute(
        "SELECT DISTINCT run_group, run_group_completed, run_group_cost_to_finish FROM showback.job_costs ORDER BY 1"
    ).fetchall()
    assert groups == [
        ("rg", True, D("110.08")),
        ("rg-b", False, None),
        ("t1", True, D("55.04")),
        ("t2", True, D("55.04")),
    ]
    assert team_month(con, "llm", "completed_runs, cost_per_completed_run, failed_run_cost") == (
        3,
        D("73.3866666667"),
        D("110.08"),
    )
    # configured to group by name, t1 and t2 are one run of two attempts
    split(con, node_config(group_by_name=True))
    assert team_month(con, "llm", "completed_runs") == (2,)


def test_cost_to_finish_is_frozen_when_the_run_completes(con):
    # Run "pre" (one job, 8 GPUs) runs Oct 30 00:00 -> 01:00 and completes; its checkpoints stay in ckpt-bucket.
    # October: the GPU hour 55.04 + Oct 30's storage 2.40 (charged from before it finished) = cost to finish 57.44;
    # Oct 31's storage 2.40 starts after it finished: retained checkpoint. November's storage 3.00 is retained too.
    # October's cost per completed run is 57.44 before and after November is split.
    october = datetime(2026, 10, 1, tzinfo=UTC)
    insert_charges(
        con,
        [
            Charge("gpu", start=at(30, month=10), billing_period_start=october),
            storage_charge("s-oct30", at(30, month=10), "2.40", month=10),
            storage_charge("s-oct31", at(31, month=10), "2.40", month=10),
            storage_charge("s-nov01", at(1), "3.00"),
        ],
    )
    uri = "s3://ckpt-bucket/pre/"
    insert_jobs(con, [Job("pre", at(30, month=10), at(30, 1, month=10), checkpoint_uri=uri)])
    insert_checkpoint_bytes(con, at(30, 0, 30, month=10), {uri + "step-1.pt": 1000})
    config = node_config(checkpoint_resources=("ckpt-bucket",))
    split(con, config, "2026-10")
    october_figures = "completed_runs, cost_per_completed_run, retained_checkpoint_cost"
    before = team_month(con, "llm", october_figures, date(2026, 10, 1))
    assert before == (1, D("57.44"), D("2.40"))
    split(con, config, "2026-11")
    assert team_month(con, "llm", october_figures, date(2026, 10, 1)) == before
    assert team_month(con, "llm", "completed_runs, retained_checkpoint_cost, total_cost") == (0, D("3.00"), D("3.00"))


def test_failed_at_hour_200_with_checkpoints_every_10_hours_loses_10_hours(con):
    # Job long (8 GPUs) runs Nov 1 00:00 -> Nov 9 08:00 (200 h) and times out; one 200-hour charge of 11008.00
    # (55.04 an hour). It wrote a checkpoint every 10 h (hours 10 ... 190); the newest before it ended is hour 190,
    # so lost work is the last 10 h: 80 GPU-hours, an estimated 11008 x 10/200 = 550.40 -- not the whole attempt.
    # Its retry "long-2" resumes from it and completes: the run's cost to finish includes both attempts.
    start = at(1)
    insert_charges(con, [Charge("h", start=start, hours=200, billed=D("11008.00"))])
    uri = "s3://ckpt-bucket/long/"
    insert_jobs(
        con,
        [
            Job("long", start, start + timedelta(hours=200), state="TIMEOUT", run_group="long", checkpoint_uri=uri),
            Job(
                "long-2",
                start + timedelta(hours=200),
                start + timedelta(hours=201),
                run_group="long",
                checkpoint_uri=uri,
            ),
        ],
    )
    steps = {f"{uri}step-{h}.pt": 10**9 for h in range(10, 200, 10)}
    written = {f"{uri}step-{h}.pt": start + timedelta(hours=h) for h in range(10, 200, 10)}
    insert_checkpoint_bytes(con, start + timedelta(hours=201), steps, last_modified=written)
    split(con, node_config())
    assert job_row(con, "long", "outcome, attempt_cost, estimated_lost_gpu_hours, estimated_lost_work_cost") == (
        "failed",
        D("11008.00"),
        80.0,
        D("550.40"),
    )
    assert team_month(con, "llm", "failed_run_cost, estimated_lost_work_cost") == (D("11008.00"), D("550.40"))


def test_preempted_and_cancelled_are_not_failed(con):
    # Three one-hour attempts (allocation-only, 55.04 each), none resumed, no checkpoints: each loses all its work.
    insert_charges(con, hourly_charges("h", at(2), 3))
    insert_jobs(
        con,
        [
            Job("f", at(2, 0), at(2, 1), state="NODE_FAIL"),
            Job("p", at(2, 1), at(2, 2), state="PREEMPTED"),
            Job("c", at(2, 2), at(2, 3), state="CANCELLED"),
        ],
    )
    split(con, node_config())
    assert team_month(
        con, "llm", "failed_run_cost, preempted_run_cost, cancelled_run_cost, estimated_lost_work_cost"
    ) == (D("55.04"), D("55.04"), D("55.04"), D("165.12"))


def test_slurm_requeue_attempts_share_their_labelled_samples_and_run(con):
    # Slurm requeued job 48763: attempt 48763#1 (PREEMPTED) 00:00 -> 00:30, then 48763 (COMPLETED) 00:30 -> 01:00,
    # both labelled hpc_job=48763 in the samples (fully busy). One run of two attempts, cost 55.04 to finish,
    # the preempted attempt's 27.52 as preempted_run_cost.
    insert_charges(con, [Charge("h")])
    insert_jobs(
        con,
        [
            Job("48763#1", at(2), at(2, 0, 30), state="PREEMPTED", scheduler_job_id="48763"),
            Job("48763", at(2, 0, 30), at(2, 1), scheduler_job_id="48763"),
        ],
    )
    insert_activity(con, "gpu-01", at(2), active_seconds=3600, job_id="48763")
    split(con, node_config())
    assert_pieces(con, "h", [("run", None, "llm", "48763#1", D("27.52"), 4.0),
                             ("run", None, "llm", "48763", D("27.52"), 4.0)])  # fmt: skip
    assert job_row(con, "48763", "run_group, run_group_attempts, run_group_cost_to_finish") == ("48763", 2, D("55.04"))
    assert team_month(con, "llm", "completed_runs, preempted_run_cost") == (1, D("27.52"))


def test_unused_commitment_is_idle_of_its_owner(con):
    # An unused reservation hour of the instance type (CommitmentDiscountStatus Unused), tagged infra: idle of
    # kind unused_commitment, never run and never "other".
    insert_charges(con, [Charge("ri", commitment_status="Unused", tags={"team": "infra"}, billed=D("30.00"))])
    split(con, node_config())
    assert_pieces(con, "ri", [("idle", "unused_commitment", "infra", None, D("30.00"), 0.0)])
    assert team_month(con, "infra", "idle_unused_commitment_cost, other_cost") == (D("30.00"), D(0))


@pytest.mark.parametrize(
    ("provider", "instance_type", "details"),
    [
        # known by SkuPriceDetails GpuCount (a FOCUS key) though its instance type is in no catalog
        ("CoreWeave", "unlisted-8xh100", {"GpuCount": 8, "InstanceType": "unlisted-8xh100"}),
        # known by the catalog of specialist clouds' instance types, with no SkuPriceDetails at all
        ("Oracle", "BM.GPU.H100.8", None),
    ],
)
def test_specialist_cloud_gpu_charge_is_split_into_run_and_idle(con, provider, instance_type, details):
    # An 8 x H100 node-hour at 49.52 of a specialist cloud's FOCUS file. Job cw (4 GPUs, allocation-only) -> run
    # 24.76; the rest idle.
    charge = Charge(
        "cw",
        resource_id="cw-node-7",
        billed=D("49.52"),
        provider=provider,
        instance_type=instance_type,
        usage_type=None,
        sku_price_details=details,
        tags={"team": "infra"},
    )
    insert_charges(con, [charge])
    insert_jobs(con, [Job("cw", at(2), at(2, 1), gpu_count=4, nodes=("cw-7",))])
    split(con, node_config(nodes=(NodeMapping("c1", "cw-7", "cw-node-7"),)))
    assert_pieces(con, "cw", [("run", None, "llm", "cw", D("24.76"), 4.0),
                              ("idle", "unallocated", "infra", None, D("24.76"), 4.0)])  # fmt: skip


def test_mig_slices_are_charged_by_their_compute_share(con):
    # A 1g.10gb and a 3g.40gb slice (1/7 and 3/7 of an H100) on gpu-01 for the hour, fully busy by their labelled
    # samples: 1/7 and 3/7 of 3600 GPU-seconds of the 28800, i.e. 1 and 3 of 56 sevenths of a GPU-hour; the
    # other 52 are unallocated. Cumulative rounding in piece order (idle first, then m1, m3):
    #   idle = round(55.04 x 52/56) = 51.1085714286; m1 = round(55.04 x 53/56) - 51.1085714286 = 0.9828571428;
    #   m3 = 55.04 - 52.0914285714 = 2.9485714286.
    insert_charges(con, [Charge("h", tags={"team": "infra"})])
    insert_jobs(
        con,
        [
            Job("m1", at(2), at(2, 1), gpu_count=1, mig_profile="1g.10gb"),
            Job("m3", at(2), at(2, 1), gpu_count=1, mig_profile="3g.40gb"),
        ],
    )
    insert_activity(con, "gpu-01", at(2), active_seconds=3600, job_id="m1", gpus=[0], mig_profile="1g.10gb")
    insert_activity(con, "gpu-01", at(2), active_seconds=3600, job_id="m3", gpus=[0], mig_profile="3g.40gb")
    split(con, node_config())
    run = dict(con.execute("SELECT job_id, EffectiveCost FROM allocation.cost_split WHERE category = 'run'").fetchall())
    assert run == {"m1": D("0.9828571428"), "m3": D("2.9485714286")}
    assert abs(run["m3"] - 3 * run["m1"]) <= D("0.0000000002")  # 1:3 up to the last unit of rounding


def test_oversubscribed_node_is_reported_not_absorbed(con):
    # Three clones of an 8-GPU job on the 8-GPU node for the same hour: 24 GPUs held of 8. The hour's cost is
    # shared by what was held (18.3466666667 each, rounding cumulative), and the month's result says so.
    insert_charges(con, [Charge("h")])
    insert_jobs(con, [Job(f"clone{i}", at(2), at(2, 1), account="vision") for i in range(3)])
    result = split(con, node_config())
    assert sorted(p[4] for p in pieces(con, "h")) == [D("18.3466666666"), D("18.3466666667"), D("18.3466666667")]
    assert result.notes == (
        "1 node-hour(s) held more GPUs than the node has (e.g. c1/gpu-01 at 2026-11-02 00:00: 24.0 GPUs held of 8);"
        " check the schedule",
    )
    clean = Job("alone", at(3), at(3, 1))
    con.execute("DELETE FROM gpu.jobs")
    insert_jobs(con, [clean])
    assert split(con, node_config()).notes == ()
