"""The demo's GPU telemetry: byte-identical per seed, read by the real connectors, and telling its story end to end."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import closing
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest

from connectors.telemetry.slurm import read_sacct
from gpuledger.telemetry.files import (
    read_checkpoint_inventory,
    read_egress_file,
    read_jobs_file,
    read_samples_file,
)
from gpuledger.telemetry.ingest import TelemetryLoad
from gpuledger.telemetry.samples import SampleAggregation
from gpuledger.warehouse.home import open_warehouse
from gpuledger_demo.aws_exports import demo_instance_id
from gpuledger_demo.setup import write_demo_home
from gpuledger_demo.telemetry import (
    AZURE_CLUSTER,
    EKS_CLUSTER,
    SAMPLE_INTERVAL_SECONDS,
    SLURM_CLUSTER,
    DemoTelemetry,
    write_demo_telemetry,
)
from models.config import load_config
from models.telemetry import DCGM_SM_ACTIVE
from pipelines.deliveries import allocate, load_month

pytestmark = [pytest.mark.serial, pytest.mark.slow]

MONTHS = ("2026-10", "2026-11")
TEAMS = ("llm-pretrain", "research", "vision", "speech")


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[Path, DemoTelemetry]:
    root = tmp_path_factory.mktemp("telemetry")
    return root, write_demo_telemetry(root)


@pytest.fixture(scope="module")
def sources(generated) -> dict[str, dict[str, list[Path]]]:
    """Source name -> key -> the files it names (a folder's files, sorted)."""
    return {
        source.name: {
            key: sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            for key, path in source.paths.items()
        }
        for source in generated[1].sources
    }


@pytest.fixture(scope="module")
def slurm_jobs(generated, sources) -> pl.DataFrame:
    options = {s.name: s.options for s in generated[1].sources}
    timezone = str(options["helios-slurm-sacct"]["timezone"])
    return pl.concat(read_sacct(p, timezone=timezone) for p in sources["helios-slurm-sacct"]["path"])


@pytest.fixture(scope="module")
def eks_jobs(sources) -> pl.DataFrame:
    return read_jobs_file(sources["helios-eks"]["jobs"][0], cluster=EKS_CLUSTER)


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_byte_identical_files(generated, tmp_path):
    root, demo = generated
    assert write_demo_telemetry(tmp_path).allocation == demo.allocation
    assert _digests(tmp_path) == _digests(root)


def test_slurm_accounting_parses_with_every_kind_of_record(slurm_jobs, sources):
    text = "".join(p.read_text() for p in sources["helios-slurm-sacct"]["path"])
    assert ".batch|" in text and ".extern|" in text and ".0|" in text
    assert "|cpu-01|" in text  # a CPU-only job, which the reader leaves out
    assert set(slurm_jobs["cluster"]) == {SLURM_CLUSTER}
    assert set(slurm_jobs["account"]) == {"llm", "res"}
    assert {"COMPLETED", "OUT_OF_MEMORY", "NODE_FAIL", "TIMEOUT", "CANCELLED", "FAILED", "RUNNING"} <= set(
        slurm_jobs["state"]
    )
    assert slurm_jobs.filter(pl.col("job_id").str.contains("_")).height >= 4  # array tasks
    assert slurm_jobs["job_id"].n_unique() == slurm_jobs.height
    pretrain = slurm_jobs.filter(pl.col("run_group") == "helios-70b-pretrain").sort("start")
    assert pretrain["state"].to_list() == ["OUT_OF_MEMORY", "COMPLETED"]
    assert pretrain["gpu_count"].to_list() == [32, 32]
    assert pretrain["nodes"][0].to_list() == ["gpu-p5-01", "gpu-p5-02", "gpu-p5e-01", "gpu-p5e-02"]
    assert pretrain["checkpoint_uri"].to_list() == ["s3://helios-ckpt-llm/helios-70b/pretrain/"] * 2
    assert timedelta(days=1) < pretrain["end"][0] - pretrain["start"][0] < timedelta(days=2)
    stage2 = slurm_jobs.filter(pl.col("run_group") == "helios-70b-pretrain-s2").sort("start")
    assert stage2["state"].to_list() == ["NODE_FAIL", "COMPLETED"]
    # sacct --duplicates lists the requeued job twice under one JobID: two attempts
    requeued = slurm_jobs.filter(pl.col("scheduler_job_id").is_duplicated()).sort("start")
    assert requeued["state"].to_list() == ["PREEMPTED", "COMPLETED"]
    assert requeued["job_id"].to_list() == [f"{requeued['scheduler_job_id'][0]}#1", requeued["scheduler_job_id"][0]]
    running = slurm_jobs.filter(pl.col("state") == "RUNNING")
    assert running.height >= 1 and running["end"].is_null().all()
    # single-type jobs carry their GPU model; the pre-training spans H100 and H200 nodes
    assert set(slurm_jobs["gpu_model"].drop_nulls()) == {"H100", "H200", "L40S"}
    assert pretrain["gpu_model"].is_null().all()


def test_weekend_notebooks_and_a_node_left_idle_for_a_week(slurm_jobs):
    notebooks = slurm_jobs.filter(pl.col("name") == "jupyter")
    assert notebooks.height >= 8
    assert set(notebooks["nodes"].list.first()) == {"gpu-p5s-01", "gpu-g6e-01"}
    assert set(notebooks["gpu_count"]) <= {1, 2}
    # Friday evening to Monday morning, Pacific time (sacct printed local times; they are UTC here)
    local = notebooks.with_columns(
        pl.col("start").dt.convert_time_zone("America/Los_Angeles").alias("start"),
        pl.col("end").dt.convert_time_zone("America/Los_Angeles").alias("end"),
    )
    assert set(local["start"].dt.weekday()) == {5} and set(local["end"].dt.weekday()) == {1}
    assert (local["start"].dt.hour() >= 17).all() and (local["end"].dt.hour() <= 10).all()
    on_p5e_02 = slurm_jobs.filter(pl.col("nodes").list.contains("gpu-p5e-02")).sort("start")
    gaps = on_p5e_02["start"].shift(-1) - on_p5e_02["end"]
    assert gaps.max() >= timedelta(days=7)


def test_no_gpu_is_held_twice(slurm_jobs, eks_jobs):
    """At any time, the jobs on a node hold at most its GPUs."""
    capacity = {"gpu-g6e-01": 4, "ip-10-30-12-201.ec2.internal": 4, "ip-10-30-87-54.ec2.internal": 4}
    jobs = (
        pl.concat([slurm_jobs, eks_jobs])
        .explode("nodes", empty_as_null=False)
        .with_columns(per_node=pl.col("gpu_count") // pl.col("gpu_count").len().over("cluster", "job_id"))
    )
    for (node,), held in jobs.group_by("nodes"):  # the weekend: a notebook on GPUs 0-1 of the g6e, scoring on 2-3
        events = sorted(
            [(row["start"], row["per_node"]) for row in held.iter_rows(named=True)]
            + [(row["end"], -row["per_node"]) for row in held.iter_rows(named=True) if row["end"] is not None],
            key=lambda event: (event[0], event[1]),
        )
        in_use = 0
        for _, change in events:
            in_use += change
            assert in_use <= capacity.get(str(node), 8), node


def test_kubernetes_pods_parse_with_their_run_groups(eks_jobs):
    assert set(eks_jobs["account"]) == {"vision", "speech-asr"}
    assert eks_jobs["job_id"].str.starts_with(eks_jobs["account"] + "/").all()
    r3 = eks_jobs.filter(pl.col("run_group") == "detector-v9-r3").sort("start")
    assert r3["state"].to_list() == ["OUT_OF_MEMORY", "COMPLETED"]
    assert r3["checkpoint_uri"].to_list() == ["s3://helios-ckpt-vision/detector-v9/r3/"] * 2
    assert {"COMPLETED", "OUT_OF_MEMORY", "FAILED", "RUNNING"} <= set(eks_jobs["state"])
    assert eks_jobs.filter(pl.col("name").str.contains("eval")).height >= 4


def _activity(sources: dict[str, dict[str, list[Path]]], name: str, cluster: str) -> pl.DataFrame:
    return read_samples_file(
        sources[name]["samples"],
        cluster=cluster,
        aggregation=SampleAggregation(name),
        interval_seconds=SAMPLE_INTERVAL_SECONDS,
    )


def test_samples_cover_slurm_gpus_unlabelled_and_pods_labelled(sources, slurm_jobs, eks_jobs):
    slurm = _activity(sources, "helios-slurm-dcgm", SLURM_CLUSTER)
    # every DCGM field is there, and SM activity prices run time
    assert set(slurm["metric"]) == {DCGM_SM_ACTIVE}
    assert slurm.select(pl.col("tensor_active", "dram_active", "fb_used_mib").null_count()).sum_horizontal()[0] == 0
    assert slurm["job_id"].is_null().all() and slurm["instance_id"].is_null().all()
    # every GPU of the six nodes, every hour of both months, 12 samples an hour
    assert slurm.height == 44 * 61 * 24
    assert (slurm["samples"] == 12).all() and (slurm["sampled_seconds"] == 3600).all()
    eks = _activity(sources, "helios-eks", EKS_CLUSTER)
    assert set(eks["job_id"]) <= set(eks_jobs["job_id"])
    assert eks["instance_id"].null_count() == 0
    nodes = ("vis-p4d-ri-a", "vis-p4d-ri-b", "vis-g6e-od", "vis-g6e-spot", "speech-p5")
    assert set(eks["instance_id"]) == {demo_instance_id(key) for key in nodes}
    with duckdb.connect() as con:
        files = [str(p) for p in sources["helios-eks"]["samples"]]
        repeated = con.execute(
            "SELECT count(*) - count(DISTINCT (node, gpu, timestamp)) FROM read_parquet($files)", {"files": files}
        ).fetchone()
        total = con.execute(
            "SELECT count(*) FROM read_parquet($files)",
            {"files": [str(p) for p in sources["helios-slurm-dcgm"]["samples"] + sources["helios-eks"]["samples"]]},
        ).fetchone()
    assert repeated == (0,)
    assert total is not None and total[0] < 2_000_000


def test_checkpoint_inventories_and_egress_parse(sources, slurm_jobs, eks_jobs):
    llm = read_checkpoint_inventory(sources["helios-slurm-dcgm"]["checkpoints"][0])
    vision = read_checkpoint_inventory(sources["helios-eks"]["checkpoints"][0])
    assert llm["uri"].str.starts_with("s3://helios-ckpt-llm/").all()
    assert vision["uri"].str.starts_with("s3://helios-ckpt-vision/").all()
    assert llm["as_of"].n_unique() == vision["as_of"].n_unique() == 61
    # checkpoint objects under the pre-training prefix accumulate while it trains, each listed with its write time
    pretrain = (
        llm.filter(pl.col("uri").str.starts_with("s3://helios-ckpt-llm/helios-70b/pretrain/"))
        .group_by("as_of")
        .agg(pl.col("bytes").sum(), pl.col("last_modified").max())
        .sort("as_of")
    )
    assert pretrain["bytes"].is_sorted() and pretrain["bytes"][-1] > pretrain["bytes"][0]
    assert (pretrain["last_modified"] < pretrain["as_of"]).all()
    # prefixes no job writes are there too
    owned = set(slurm_jobs["checkpoint_uri"].drop_nulls()) | set(eks_jobs["checkpoint_uri"].drop_nulls())
    unowned = [uri for uri in pl.concat([llm, vision])["uri"] if not any(uri.startswith(p) for p in owned)]
    assert unowned
    slurm_egress = read_egress_file(sources["helios-slurm-dcgm"]["egress"][0], cluster=SLURM_CLUSTER)
    eks_egress = read_egress_file(sources["helios-eks"]["egress"][0], cluster=EKS_CLUSTER)
    assert set(slurm_egress["node"]) == {"gpu-p5e-01", "gpu-p5s-01"}
    assert set(eks_egress["node"]) == {"ip-10-30-12-201.ec2.internal"}
    assert set(slurm_egress["job_id"]) <= set(slurm_jobs["job_id"])
    assert set(eks_egress["job_id"]) <= set(eks_jobs["job_id"])


# ---------------------------------------------------------------------------------------------
# End to end: the demo home through the pipeline's functions (no Dagster)
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("demo-home")
    write_demo_home(home)
    return home


@pytest.fixture(scope="module")
def pipeline(demo_home) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[TelemetryLoad]]]:
    with closing(open_warehouse(demo_home)) as con:
        for month in MONTHS:
            for provider in ("aws", "azure", "gcp", "focus"):
                load_month(con, demo_home, provider, month)
        loads = [load for month in MONTHS for load in allocate(con, demo_home, month)[0]]
        yield con, loads


@pytest.fixture(scope="module")
def november(pipeline) -> dict[str, dict[str, object]]:
    con, _ = pipeline
    # the USD rows (AWS and GCP); Azure bills in EUR
    cursor = con.execute(
        "SELECT * FROM showback.team_month WHERE billing_month = DATE '2026-11-01' AND currency = 'USD'"
    )
    names = [d[0] for d in cursor.description]
    return {row[names.index("team")]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def test_config_loads_and_maps_every_slurm_node(demo_home, generated, slurm_jobs):
    root, demo = generated
    config = load_config(demo_home)
    names = ["helios-cur2", "helios-legacy-cur", "helios-azure-mca", "helios-gcp-billing", "helios-coreweave-focus"]
    assert [s.name for s in config.sources] == names
    assert config.allocation == demo.allocation
    assert config.allocation.sample_interval_seconds == SAMPLE_INTERVAL_SECONDS
    assert [(s.name, s.kind, s.cluster, s.options) for s in config.telemetry] == [
        (s.name, s.kind, s.cluster, s.options) for s in demo.sources
    ]
    for loaded, written in zip(config.telemetry, demo.sources, strict=True):
        assert {k: p.relative_to(demo_home / "telemetry") for k, p in loaded.paths.items()} == {
            k: p.relative_to(root) for k, p in written.paths.items()
        }
    mapped = {(n.cluster, n.node) for n in config.allocation.nodes}
    assert {(SLURM_CLUSTER, node) for nodes in slurm_jobs["nodes"] for node in nodes} <= mapped


def test_telemetry_is_attributed_to_billed_instances(pipeline, demo_home):
    con, loads = pipeline
    sources = {
        "helios-slurm-sacct",
        "helios-slurm-dcgm",
        "helios-eks",
        "helios-azure",
        "helios-gcp",
        "helios-coreweave",
    }
    assert {load.source for load in loads} == sources
    assert [load.notes for load in loads] == [()] * len(loads)  # nothing unattributable
    billed = {row[0] for row in con.execute("SELECT DISTINCT ResourceId FROM focus.costs").fetchall()}
    used = {row[0] for row in con.execute("SELECT DISTINCT resource_id FROM gpu.usage").fetchall()}
    assert None not in used and used <= billed
    assert len(used) == 11 + 6 + 4 + 2  # AWS instances, Azure VMs, GCP instances, CoreWeave nodes


def test_every_team_runs_and_idles_and_an_unallocated_team_remains(november):
    for team in TEAMS:
        assert november[team]["run_cost"] > 0, team
        assert november[team]["idle_cost"] > 0, team
    assert "unallocated" in november


def test_an_instance_without_telemetry_is_all_unallocated_idle(pipeline):
    con, _ = pipeline
    pieces = con.execute(
        "SELECT DISTINCT category, idle_kind, team FROM allocation.cost_split WHERE ResourceId = $id"
        " AND ChargeCategory = 'Usage'",
        {"id": demo_instance_id("speech-p5e")},
    ).fetchall()
    assert pieces == [("idle", "unallocated", "unallocated")]


def test_weekend_notebooks_show_as_allocated_idle_on_saturday_and_sunday(pipeline, november):
    con, _ = pipeline
    assert november["research"]["idle_allocated_cost"] > 0
    weekend, total = con.execute(
        "SELECT sum(idle_allocated_gpu_hours) FILTER (WHERE iso_weekday >= 6), sum(idle_allocated_gpu_hours)"
        " FROM showback.idle_by_hour_of_week WHERE billing_month = DATE '2026-11-01' AND team = 'research'"
    ).fetchone()
    assert weekend / total > 2 / 7


def test_a_completed_pretraining_run_costs_more_than_its_failed_attempts(november):
    llm = november["llm-pretrain"]
    assert llm["completed_runs"] >= 1
    assert llm["failed_run_cost"] > 0
    assert llm["cost_per_completed_run"] > llm["failed_run_cost"]


def test_checkpoint_storage_and_egress_are_split_by_bytes(pipeline, november):
    con, _ = pipeline
    assert november["llm-pretrain"]["checkpoint_storage_cost"] > 0
    bases = set(
        con.execute(
            "SELECT DISTINCT team, allocation_basis FROM allocation.cost_split"
            " WHERE category IN ('checkpoint_storage', 'egress')"
        ).fetchall()
    )
    assert ("llm-pretrain", "stored-byte-hours") in bases
    assert ("research", "stored-byte-hours") in bases  # research's SFT checkpoints in the LLM bucket
    assert {basis for _, basis in bases} >= {"stored-byte-hours", "egress-bytes"}


def test_only_egress_charges_are_split_by_egress_bytes(pipeline):
    """The instances' GPU-hour charges stay run and idle, though egress bytes were counted on their nodes."""
    con, _ = pipeline
    usage_types = con.execute(
        "SELECT DISTINCT c.x_UsageType FROM allocation.cost_split AS s JOIN focus.costs AS c"
        " ON c.x_DeliveryId || '/' || c.x_SourceLineItemId = s.charge_key WHERE s.allocation_basis = 'egress-bytes'"
    ).fetchall()
    assert {row[0] for row in usage_types} <= {
        "DataTransfer-Out-Bytes",
        "USW2-DataTransfer-Out-Bytes",
        "Standard Data Transfer Out",  # Azure's meter
        "Network Internet Data Transfer Out from Americas to Americas",  # GCP's SKU
    }


def test_team_totals_equal_focus_effective_cost(pipeline):
    con, _ = pipeline
    totals = con.execute(
        "SELECT strftime(BillingPeriodStart, '%Y-%m'), sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY 1"
    ).fetchall()
    shown = con.execute(
        "SELECT strftime(billing_month, '%Y-%m'), sum(total_cost) FROM showback.team_month GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert shown == totals
    assert all(isinstance(total, Decimal) for _, total in shown)


def _job_costs(con: duckdb.DuckDBPyConnection, where: str, params: dict[str, object]) -> list[dict[str, object]]:
    """showback.job_costs rows (every month summed per job) matching a condition."""
    cursor = con.execute(
        "SELECT job_id, any_value(name) AS name, any_value(outcome) AS outcome, any_value(session) AS session,"
        " any_value(run_group) AS run_group, any_value(run_group_completed) AS completed,"
        " any_value(run_group_cost_to_finish) AS cost_to_finish, sum(run_cost) AS run_cost,"
        " sum(idle_cost) AS idle_cost,"
        " sum(attempt_cost) AS attempt_cost, sum(estimated_lost_work_cost) AS lost_cost,"
        " max(estimated_lost_gpu_hours) AS lost_gpu_hours, max(gpu_count) AS gpu_count,"
        " any_value(epoch(end_time) - epoch(start_time)) / 3600 AS hours"
        f" FROM showback.job_costs WHERE {where} GROUP BY job_id ORDER BY min(start_time)",
        params,
    )
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_a_distillation_starved_by_its_data_loader_is_a_tenth_run(pipeline):
    # engine "active" ~36 % of the time, SMs ~10 % busy: priced by SM activity, about a tenth of its GPU cost is run
    con, _ = pipeline
    [distill] = _job_costs(con, "run_group = $group", {"group": "asr-v3-distill"})
    share = distill["run_cost"] / (distill["run_cost"] + distill["idle_cost"])
    assert Decimal("0.08") < share < Decimal("0.12"), share
    hours = con.execute(
        "SELECT DISTINCT metric FROM allocation.cost_split WHERE job_id = $job AND category = 'run'",
        {"job": distill["job_id"]},
    ).fetchall()
    assert hours == [(DCGM_SM_ACTIVE,)]


def test_the_weekend_notebook_beside_a_busy_job_is_priced_by_its_own_gpus(pipeline):
    con, _ = pipeline
    weekend = "name = $name AND start_time >= TIMESTAMPTZ '2026-10-23' AND start_time < TIMESTAMPTZ '2026-10-25'"
    notebook, scoring = (_job_costs(con, weekend, {"name": name})[0] for name in ("jupyter", "rm-7b-score"))
    assert notebook["session"] and notebook["run_cost"] < notebook["idle_cost"] / 20
    assert scoring["run_cost"] > 2 * scoring["idle_cost"]
    bases = con.execute(
        "SELECT DISTINCT allocation_basis FROM allocation.cost_split WHERE job_id IN ($a, $b)",
        {"a": notebook["job_id"], "b": scoring["job_id"]},
    ).fetchall()
    assert bases == [("gpu-index",)]
    # the prolog's GPU map attributes every Slurm GPU: nothing is priced by node-shared activity
    assert con.execute("SELECT sum(node_shared_gpu_cost) FROM showback.team_month").fetchone() == (Decimal(0),)


def test_sessions_are_not_runs(pipeline):
    con, _ = pipeline
    sessions = _job_costs(con, "session", {})
    assert {job["name"] for job in sessions} == {"jupyter"}
    assert not any(job["completed"] for job in sessions)
    assert con.execute(
        "SELECT sum(sessions) > 0 AND sum(session_cost) > 0 FROM showback.team_month WHERE team = 'research'"
    ).fetchone() == (True,)


def test_mig_slices_are_charged_by_their_compute_share(pipeline):
    con, _ = pipeline
    one, three = (_job_costs(con, "cluster = $c AND name = $n", {"c": AZURE_CLUSTER, "n": name})[0]
                  for name in ("asr-v3-int8-eval", "asr-v3-streaming-bench"))  # fmt: skip
    # 1g.10gb and 3g.40gb of one A100: 1 and 3 of its 7 compute slices, so an hour of the one costs a third
    hourly = [(job["run_cost"] + job["idle_cost"]) / Decimal(job["hours"]) for job in (one, three)]
    assert abs(hourly[1] / hourly[0] - 3) < Decimal("0.001")


def test_the_requeued_job_loses_only_the_work_since_its_last_checkpoint(pipeline):
    con, _ = pipeline
    preempted, resumed = _job_costs(con, "run_group = $group", {"group": "helios-7b-sft-w44"})
    assert (preempted["outcome"], resumed["outcome"]) == ("preempted", "completed")
    assert preempted["job_id"] == f"{resumed['job_id']}#1"
    # checkpoints every 4 hours: the lost work is under 4 of its ~17 hours, not the whole attempt
    assert 0 < preempted["lost_gpu_hours"] < 4 * preempted["gpu_count"] < preempted["hours"] * preempted["gpu_count"]
    assert 0 < preempted["lost_cost"] < preempted["attempt_cost"] / 4
    assert resumed["cost_to_finish"] == preempted["attempt_cost"] + resumed["attempt_cost"]


def test_a_specialist_clouds_gpu_charges_are_split_into_run_and_idle(pipeline):
    con, _ = pipeline
    kinds = set(
        con.execute(
            "SELECT DISTINCT category, idle_kind FROM allocation.cost_split WHERE ProviderName = 'CoreWeave'"
        ).fetchall()
    )
    assert {("run", None), ("idle", "underutilized"), ("idle", "unallocated"), ("checkpoint_storage", None)} <= kinds
    assert ("other", None) not in kinds


def test_unused_commitments_are_idle_of_their_owners(pipeline):
    con, _ = pipeline
    unused = con.execute(
        "SELECT BillingCurrency, sum(EffectiveCost) FROM allocation.cost_split WHERE idle_kind = 'unused_commitment'"
        " GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert [currency for currency, total in unused if total > 0] == ["EUR", "USD"]
    source = con.execute(
        "SELECT BillingCurrency, sum(EffectiveCost) FROM focus.costs WHERE CommitmentDiscountStatus = 'Unused'"
        " GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert unused == source
