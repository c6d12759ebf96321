"""Seeded GPU telemetry of Helios Labs (the demo's fictional ML org), matching its AWS billing exports.

:func:`write_demo_telemetry` writes billing months 2026-10 and 2026-11 of two clusters:

* Slurm ``helios-slurm`` (LLM pre-training and research): ``sacct --duplicates --parsable2`` output (one file
  per month of job starts, cluster-local times), the GPU indices a prolog recorded for each job, unlabelled DCGM
  samples of every GPU every 5 minutes, egress bytes of the nodes that send data out, and a daily inventory of
  the checkpoint objects in the ``helios-ckpt-llm`` bucket with their write times;
* Kubernetes ``helios-eks`` (vision and speech) and ``helios-coreweave`` (research's RL on reserved CoreWeave
  nodes): a jobs CSV (one row per pod), DCGM samples labelled with the pod (and on EKS the instance id), egress
  bytes and a daily inventory of their checkpoint buckets;
* the Azure and GCP launchers' clusters likewise, one Azure A100 cut into MIG slices for a while.

Samples carry every DCGM field gpuledger reads: SM, tensor-pipe, DRAM and graphics-engine activity and the
framebuffer in use, so the split prices run time by SM activity.

Nodes are the exports' GPU instances (ResourceIds from :func:`demo_instance_id`): the Slurm nodes are mapped
by ``[[nodes]]``, the Kubernetes nodes by their samples' instance id; ``speech-p5e`` and ``eval-p4d`` report
nothing. Jobs follow a written schedule (a pre-training run that runs out of memory and resumes, a node
failure, a spot interruption Slurm requeues, weekend notebooks beside a busy job, a distillation starved by its
data loader at 10 % SM activity, MIG slices, a node left idle for a week, three recipes run on two GPU models)
with seeded jitter; samples are drawn by DuckDB over ``range()`` with a fixed integer hash, so the same seed
gives byte-identical files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from zoneinfo import ZoneInfo

import duckdb
import polars as pl

from gpuledger_demo.aws_exports import demo_instance_id
from gpuledger_demo.azure_exports import subscription_teams as azure_subscription_teams
from gpuledger_demo.azure_exports import vm_resource_ids as azure_vm_resource_ids
from gpuledger_demo.coreweave_exports import CHECKPOINT_BUCKET
from gpuledger_demo.coreweave_exports import NODES as COREWEAVE_NODES
from gpuledger_demo.gcp_exports import instance_resource_ids as gcp_instance_resource_ids
from gpuledger_demo.gcp_exports import project_teams as gcp_project_teams
from models.allocation import AllocationConfig, NodeMapping, canonical_resource_id
from models.config import TelemetryConfig
from models.telemetry import DEFAULT_IDLE_THRESHOLD

SLURM_CLUSTER = "helios-slurm"
EKS_CLUSTER = "helios-eks"
COREWEAVE_CLUSTER = "helios-coreweave"
AZURE_CLUSTER = "helios-azure"
GCP_CLUSTER = "helios-gcp"
FILE_CLUSTERS = (EKS_CLUSTER, AZURE_CLUSTER, GCP_CLUSTER, COREWEAVE_CLUSTER)
"""Clusters written as a jobs CSV plus samples labelled with the job (the files connector)."""
SLURM_TIMEZONE = "America/Los_Angeles"
SAMPLE_INTERVAL_SECONDS = 300
AZURE_CHECKPOINTS = "https://heliosckptazure.blob.core.windows.net/helios-ckpt-azure"
GCP_CHECKPOINTS = "gs://helios-ckpt-gcp"
CHECKPOINT_STORES = ("helios-ckpt-llm", "helios-ckpt-vision", "heliosckptazure", "helios-ckpt-gcp", CHECKPOINT_BUCKET)
"""Buckets and storage accounts holding checkpoints: ``[checkpoints] resources``."""
MONTHS = ("2026-10", "2026-11")

_LOCAL = ZoneInfo(SLURM_TIMEZONE)  # the teams (and the Slurm controller) work on Pacific time
_START = datetime(2026, 10, 1, tzinfo=UTC)
_NOVEMBER = datetime(2026, 11, 1, tzinfo=UTC)
_END = datetime(2026, 12, 1, tzinfo=UTC)
"""Telemetry runs to here; jobs still running are exported as RUNNING."""
_PERIODS = ((MONTHS[0], _START, _NOVEMBER), (MONTHS[1], _NOVEMBER, _END))
_SACCT_HEADER = (
    "Cluster|JobID|JobIDRaw|JobName|Partition|QOS|Account|User|WCKey|NodeList|AllocTRES|Start|End|ElapsedRaw"
    "|State|ExitCode|Comment"
)
_POD_SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet Kubernetes draws generated name suffixes from


@dataclass(frozen=True)
class DemoTelemetry:
    """What ``gpuledger.toml`` needs to read the generated telemetry: its sources and the allocation settings."""

    sources: tuple[TelemetryConfig, ...]
    allocation: AllocationConfig


@dataclass(frozen=True)
class _Node:
    cluster: str
    name: str
    instance: str | None
    """Template key of the instance in the demo exports; None for a CPU node."""
    gpus: int
    gpu_type: str
    """Slurm gres type (``h100``) or Kubernetes GPU model (``A100-40GB``)."""
    cpus: int
    mem_gb: int
    egress_gb_per_hour: float = 0.0
    """Uploads of the jobs running here, for the nodes whose instances carry egress charges."""

    @property
    def framebuffer_mib(self) -> int:
        """Memory of one of its GPUs, as DCGM_FI_DEV_FB_TOTAL reports it."""
        return _FRAMEBUFFER_MIB[self.gpu_type.upper()]


_FRAMEBUFFER_MIB = {"H100": 81559, "H200": 143771, "L40S": 46068, "A100-40GB": 40960, "A100-80GB": 81920}


_P5_1 = _Node(SLURM_CLUSTER, "gpu-p5-01", "llm-p5-sp-a", 8, "h100", 192, 2000)
_P5_2 = _Node(SLURM_CLUSTER, "gpu-p5-02", "llm-p5-sp-b", 8, "h100", 192, 2000)
_P5E_1 = _Node(SLURM_CLUSTER, "gpu-p5e-01", "llm-p5e-a", 8, "h200", 192, 2000, egress_gb_per_hour=40)
_P5E_2 = _Node(SLURM_CLUSTER, "gpu-p5e-02", "llm-p5e-b", 8, "h200", 192, 2000)
_P5S = _Node(SLURM_CLUSTER, "gpu-p5s-01", "res-p5-spot", 8, "h100", 192, 2000, egress_gb_per_hour=8)
_G6E = _Node(SLURM_CLUSTER, "gpu-g6e-01", "res-g6e-spot", 4, "l40s", 48, 360)
_CPU = _Node(SLURM_CLUSTER, "cpu-01", None, 0, "", 64, 256)
_P4D_A = _Node(EKS_CLUSTER, "ip-10-20-31-118.us-west-2.compute.internal", "vis-p4d-ri-a", 8, "A100-40GB", 96, 1100)
_P4D_B = _Node(EKS_CLUSTER, "ip-10-20-44-7.us-west-2.compute.internal", "vis-p4d-ri-b", 8, "A100-40GB", 96, 1100)
_G6E_OD = _Node(EKS_CLUSTER, "ip-10-30-12-201.ec2.internal", "vis-g6e-od", 4, "L40S", 48, 360, egress_gb_per_hour=15)
_G6E_SPOT = _Node(EKS_CLUSTER, "ip-10-30-87-54.ec2.internal", "vis-g6e-spot", 4, "L40S", 48, 360)
_SPEECH_P5 = _Node(EKS_CLUSTER, "ip-10-30-5-166.ec2.internal", "speech-p5", 8, "H100", 192, 2000)
# Azure and GCP VMs run jobs from a launcher (SkyPilot-style managed jobs); ``instance`` is the VM's name
_AZ_LLM_1 = _Node(AZURE_CLUSTER, "llm-h100-01", "llm-h100-01", 8, "H100", 96, 1900)
_AZ_LLM_2 = _Node(AZURE_CLUSTER, "llm-h100-02", "llm-h100-02", 8, "H100", 96, 1900, egress_gb_per_hour=25)
_AZ_RES = _Node(AZURE_CLUSTER, "res-a100-01", "res-a100-01", 1, "A100-80GB", 24, 220)
_AZ_VIS = _Node(AZURE_CLUSTER, "vis-a100-01", "vis-a100-01", 4, "A100-80GB", 96, 880)
_AZ_VIS_SPOT = _Node(AZURE_CLUSTER, "vis-a100-spot-01", "vis-a100-spot-01", 1, "A100-80GB", 24, 220)
_AZ_SPEECH = _Node(AZURE_CLUSTER, "speech-a100-01", "speech-a100-01", 1, "A100-80GB", 24, 220)
_GCP_LLM_1 = _Node(GCP_CLUSTER, "llm-a3-01", "llm-a3-01", 8, "H100", 208, 1872)
_GCP_LLM_2 = _Node(GCP_CLUSTER, "llm-a3-02", "llm-a3-02", 8, "H100", 208, 1872, egress_gb_per_hour=22)
_GCP_RES = _Node(GCP_CLUSTER, "res-a3-spot-01", "res-a3-spot-01", 8, "H100", 208, 1872)
_GCP_VIS = _Node(GCP_CLUSTER, "vis-a2-01", "vis-a2-01", 8, "A100-80GB", 96, 1360)
# CoreWeave bills its reserved nodes by their CKS node names: ``instance`` is the ResourceId itself
_CW_1, _CW_2 = (_Node(COREWEAVE_CLUSTER, name, name, 8, "H100", 128, 2048) for name in COREWEAVE_NODES)
_NODES = (
    *(_P5_1, _P5_2, _P5E_1, _P5E_2, _P5S, _G6E, _CPU, _P4D_A, _P4D_B, _G6E_OD, _G6E_SPOT, _SPEECH_P5),
    *(_AZ_LLM_1, _AZ_LLM_2, _AZ_RES, _AZ_VIS, _AZ_VIS_SPOT, _AZ_SPEECH, _GCP_LLM_1, _GCP_LLM_2, _GCP_RES, _GCP_VIS),
    *(_CW_1, _CW_2),
)
_LLM = (_P5_1, _P5_2, _P5E_1, _P5E_2)


@dataclass(frozen=True)
class _Checkpoint:
    """A run's checkpoint prefix and how the bytes under it evolve."""

    uri: str
    gb_per_hour: float
    """Growth while one of its jobs runs (restarts resume in place)."""
    cap_gb: float
    """Older checkpoints are pruned beyond this."""
    deleted: date | None = None
    every_hours: int = 4
    """A checkpoint (gb_per_hour x every_hours GB) is written every this many hours of a job's run time."""


@dataclass(frozen=True, kw_only=True)
class _Job:
    label: str
    """Unique within the schedule; keys the job's jitter, utilization level and pod name suffix."""
    name: str
    account: str
    user: str
    project: str
    nodes: tuple[_Node, ...]
    gpus: int
    """GPUs held on each node."""
    first_gpu: int
    """Index of the first of them (which GPUs the samples show busy)."""
    start: datetime
    end: datetime | None
    """None while running."""
    state: str
    """As the scheduler reports it (sacct ``CANCELLED by 1042``; JOB_STATES in the jobs CSV)."""
    profile: str
    """Utilization pattern (``_PROFILES``): train, eval, notebook, serve or starved."""
    run_group: str | None
    checkpoint: _Checkpoint | None
    array: str | None = None
    """Slurm array the job is a task of."""
    requeue_of: str | None = None
    """Label of the earlier attempt Slurm requeued as this one (same JobID, ``sacct --duplicates``)."""
    mig: tuple[str, str] | None = None
    """(MIG profile, GPU instance id) of the slice held on ``first_gpu``; ``gpus`` then counts slices."""
    framebuffer_gib: float | None = None
    """GiB the job keeps allocated per GPU, whatever the GPU: a recipe's memory that runs on two GPU models.
    None: a share of the GPU's framebuffer drawn by its profile."""
    job_id: str = ""
    """Slurm job or array task id, ``namespace/pod`` on Kubernetes; numbered once the schedule is complete."""
    raw_id: int = 0
    """Slurm JobIDRaw."""

    @property
    def cluster(self) -> str:
        return self.nodes[0].cluster


@dataclass
class _Schedule:
    """Jobs as written below: times are Pacific wall-clock, shifted by up to 15 seeded minutes."""

    seed: int
    jobs: list[_Job] = field(default_factory=list)

    def add(
        self,
        label: str,
        name: str,
        nodes: Sequence[_Node],
        start: datetime,
        end: datetime | None,
        *,
        account: str,
        user: str,
        project: str = "",
        state: str | None = None,
        profile: str = "train",
        gpus: int | None = None,
        first_gpu: int = 0,
        run_group: str | None = None,
        checkpoint: _Checkpoint | None = None,
        array: str | None = None,
        requeue_of: str | None = None,
        mig: tuple[str, str] | None = None,
        framebuffer_gib: float | None = None,
    ) -> None:
        shift = timedelta(seconds=_draw(self.seed, label, "start") % 901)
        # a job killed at its time limit ran exactly that long
        end_shift = shift if state == "TIMEOUT" else timedelta(seconds=_draw(self.seed, label, "end") % 901)
        self.jobs.append(
            _Job(
                label=label,
                name=name,
                account=account,
                user=user,
                project=project,
                nodes=tuple(nodes),
                gpus=nodes[0].gpus if gpus is None else gpus,
                first_gpu=first_gpu,
                start=start + shift,
                end=None if end is None else end + end_shift,
                state=state or ("COMPLETED" if end else "RUNNING"),
                profile=profile,
                run_group=run_group,
                checkpoint=checkpoint,
                array=array,
                requeue_of=requeue_of,
                mig=mig,
                framebuffer_gib=framebuffer_gib,
            )
        )


def _draw(seed: int, *parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()[:8], "big")


def _pt(day: date, hour: int, minute: int = 0) -> datetime:
    """Pacific wall-clock time on ``day`` -> UTC."""
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=_LOCAL).astimezone(UTC)


def _d(month: int, day: int) -> date:
    return date(2026, month, day)


def _day(monday: date, offset: int, hour: int, minute: int = 0) -> datetime:
    """Pacific wall-clock time ``offset`` days after ``monday``."""
    return _pt(monday + timedelta(offset), hour, minute)


# ---------------------------------------------------------------------------------------------
# The schedule
# ---------------------------------------------------------------------------------------------

_MONDAYS = tuple(_d(10, 5) + timedelta(weeks=w) for w in range(8))  # Oct 5 .. Nov 23
_FRIDAYS = tuple(_d(10, 2) + timedelta(weeks=w) for w in range(9))  # Oct 2 .. Nov 27


def _llm_pretrain(s: _Schedule) -> None:
    """Pre-training of helios-70b on the four Savings Plan and on-demand nodes, with its ablations and evals."""
    llm = partial(s.add, account="llm", user="mchen", project="helios-70b")
    ckpt = "s3://helios-ckpt-llm"
    ablation = _Checkpoint(f"{ckpt}/ablations/1b-data/", 20, 800, deleted=_d(10, 20))
    for task, (node, end) in enumerate(zip(_LLM, ((3, 40), (5, 10), (6, 30), (2, 0)), strict=True), start=1):
        llm(
            f"ablation-{task}",
            "ablation-1b",
            [node],
            _pt(_d(10, 1), 9, 10),
            _pt(_d(10, 2), *end),
            project="helios-1b",
            run_group="helios-1b-data-ablation",
            checkpoint=ablation,
            array="ablation-1b",
        )
    llm("nccl-1", "nccl-tests", _LLM, _pt(_d(10, 2), 13), _pt(_d(10, 2), 17), user="sre", profile="eval")
    llm("tokenize", "tokenize-longctx", [_CPU], _pt(_d(10, 2), 18), _pt(_d(10, 3), 6), gpus=0)
    # stage 1 runs out of memory after a day and a half; after a fix it resumes from its last checkpoint
    stage1 = partial(
        llm,
        name="helios-70b-pretrain",
        nodes=_LLM,
        run_group="helios-70b-pretrain",
        checkpoint=_Checkpoint(f"{ckpt}/helios-70b/pretrain/", 500, 60_000),
    )
    stage1("s1-oom", start=_pt(_d(10, 5), 9), end=_pt(_d(10, 6), 21, 30), state="OUT_OF_MEMORY")
    llm("oom-repro", "oom-repro", [_P5_1], _pt(_d(10, 7), 0, 30), _pt(_d(10, 7), 2, 10), state="FAILED")
    stage1("s1-resume", start=_pt(_d(10, 7), 11), end=_pt(_d(10, 21), 4, 20))
    # then gpu-p5e-02 waits a week for an NVLink repair: no jobs until its diagnostics on Oct 29
    evals = partial(
        llm, name="eval-70b", nodes=[_P5_1, _P5_2], user="priya", profile="eval", run_group="helios-70b-eval"
    )
    evals("eval-s1", start=_pt(_d(10, 21), 9), end=_pt(_d(10, 21), 19))
    llm(
        "chat-smoke",
        "sft-70b-chat-smoke",
        [_P5E_1],
        _pt(_d(10, 22), 10),
        _pt(_d(10, 23), 2),
        user="priya",
        checkpoint=_Checkpoint(f"{ckpt}/helios-70b/chat-smoke/", 200, 3000, deleted=_d(11, 10)),
    )
    llm(
        "longctx-ablation",
        "longctx-data-ablation",
        [_P5_1, _P5_2],
        _pt(_d(10, 23), 9),
        _pt(_d(10, 26), 15),
        checkpoint=_Checkpoint(f"{ckpt}/ablations/longctx/", 40, 1500, deleted=_d(11, 15)),
    )
    llm("longctx-smoke", "helios-70b-longctx-smoke", _LLM[:3], _pt(_d(10, 27), 9), _pt(_d(10, 28), 15))
    llm("dcgm-diag", "dcgm-diag", [_P5E_2], _pt(_d(10, 29), 10), _pt(_d(10, 29), 13), user="sre")
    llm("nccl-2", "nccl-tests", _LLM, _pt(_d(10, 29), 14), _pt(_d(10, 29), 18), user="sre", profile="eval")
    # stage 2: gpu-p5e-01 fails on day 3 and the launcher resubmits as soon as the node is back
    stage2 = partial(
        llm,
        name="helios-70b-pretrain-s2",
        nodes=_LLM,
        run_group="helios-70b-pretrain-s2",
        checkpoint=_Checkpoint(f"{ckpt}/helios-70b/pretrain-s2/", 500, 60_000),
    )
    stage2("s2-fail", start=_pt(_d(11, 2), 8), end=_pt(_d(11, 4), 17, 40), state="NODE_FAIL")
    stage2("s2-restart", start=_pt(_d(11, 4), 20, 30), end=_pt(_d(11, 16), 13))
    evals("eval-s2", start=_pt(_d(11, 16), 15), end=_pt(_d(11, 17), 1))
    llm(
        "chat-sft",
        "sft-70b-chat",
        [_P5E_1, _P5E_2],
        _pt(_d(11, 17), 9),
        _pt(_d(11, 20), 18),
        user="priya",
        run_group="helios-70b-chat-sft",
        checkpoint=_Checkpoint(f"{ckpt}/helios-70b/chat-sft/", 200, 12_000),
    )
    llm(
        "s3",
        "helios-70b-pretrain-s3",
        _LLM,
        _pt(_d(11, 23), 9),
        None,
        run_group="helios-70b-pretrain-s3",
        checkpoint=_Checkpoint(f"{ckpt}/helios-70b/pretrain-s3/", 500, 60_000),
    )


def _research(s: _Schedule) -> None:
    """7B fine-tuning on the spot p5, a reward model on the spot g6e, and notebooks held over weekends."""
    res = partial(s.add, account="res", project="helios-7b")

    def tuned(kind: str, week: str, monday: date, user: str) -> dict[str, object]:
        uri = f"s3://helios-ckpt-llm/helios-7b-{kind}/{week}/"
        checkpoint = _Checkpoint(uri, 60, 1500, deleted=monday + timedelta(28))
        return {"user": user, "run_group": f"helios-7b-{kind}-{week}", "checkpoint": checkpoint}

    # the tail of September's work
    res("sft-w40", "sft-7b", [_P5S], _pt(_d(10, 1), 9), _pt(_d(10, 2), 11), **tuned("sft", "w40", _d(9, 28), "alice"))
    res("rm-w40", "rm-7b-train", [_G6E], _pt(_d(10, 1), 10), _pt(_d(10, 2), 7), user="tkim", run_group="helios-rm-w40")
    for index, monday in enumerate(_MONDAYS):
        week = f"w{monday.isocalendar().week}"
        day = partial(_day, monday)
        sft = tuned("sft", week, monday, "alice")
        if index % 2 == 0:  # a two-task learning-rate sweep every other week
            for task in (1, 2):
                res(
                    f"sft-{week}-{task}",
                    "sft-7b-sweep",
                    [_P5S],
                    day(0, 10),
                    day(1, 20 + task),
                    gpus=4,
                    first_gpu=4 * (task - 1),
                    array=f"sft-{week}",
                    **sft,
                )
        elif index == 3:  # the spot p5 is interrupted; Slurm requeues the job, which resumes from a checkpoint
            res(f"sft-{week}-0", "sft-7b", [_P5S], day(0, 10), day(1, 3, 40), state="PREEMPTED", **sft)
            res(f"sft-{week}", "sft-7b", [_P5S], day(1, 4, 30), day(1, 22), requeue_of=f"sft-{week}-0", **sft)
        else:
            res(f"sft-{week}", "sft-7b", [_P5S], day(0, 10), day(1, 22), **sft)
        res(
            f"eval-{week}",
            "eval-7b-harness",
            [_P5S],
            day(2, 9),
            day(2, 15),
            user="alice",
            profile="eval",
            run_group="helios-7b-eval",
        )
        dpo = partial(res, name="dpo-7b", nodes=[_P5S], **tuned("dpo", week, monday, "tkim"))
        if index == 2:  # the 2-day time limit was too short
            dpo(f"dpo-{week}", start=day(2, 16), end=day(4, 16), state="TIMEOUT")
        elif index == 5:  # a wrong beta, cancelled after a look at the loss curve
            dpo(f"dpo-{week}-bad", start=day(2, 16), end=day(2, 18, 30), state="CANCELLED by 1042")
            dpo(f"dpo-{week}", start=day(2, 19, 30), end=day(4, 12))
        elif index != 7:  # none in Thanksgiving week
            dpo(f"dpo-{week}", start=day(2, 16), end=day(4, 11))
        rm = partial(res, nodes=[_G6E], user="tkim")
        rm(
            f"rm-{week}",
            "rm-7b-train",
            start=day(0, 11),
            end=day(2 if index == 7 else 3, 17),
            run_group=f"helios-rm-{week}",
        )
        if index != 7:
            rm(
                f"rm-eval-{week}",
                "rm-eval",
                start=day(4, 8),
                end=day(4, 12),
                profile="eval",
                run_group="helios-rm-eval",
            )
    # Jupyter sessions started on Friday evening and left holding their GPUs until Monday morning; on the g6e the
    # weekend's reward-model scoring runs on the other two GPUs, busy beside the idle notebook
    notebook = partial(res, name="jupyter", project="", profile="notebook")
    for index, friday in enumerate(_FRIDAYS):
        monday = friday + timedelta(3)
        notebook(
            f"nb-tkim-{friday}", nodes=[_G6E], start=_pt(friday, 17, 30), end=_pt(monday, 8, 45), user="tkim", gpus=2
        )
        res(
            f"rm-score-{friday}",
            "rm-7b-score",
            [_G6E],
            _pt(friday + timedelta(1), 7),
            _pt(friday + timedelta(2), 19),
            user="tkim",
            gpus=2,
            first_gpu=2,
            run_group=f"helios-rm-score-{friday:%m%d}",
        )
        if index in (1, 4, 6, 8):
            notebook(
                f"nb-alice-{friday}", nodes=[_P5S], start=_pt(friday, 18, 30), end=_pt(monday, 9), user="alice", gpus=1
            )
    # two of the g6e's recipes once on four and two of the spot p5's H100s, free over two weekends (a second seed of
    # week 42's reward model, a second checkpoint scored): about 2.4 times an L40S, 32.5 and 15 hours, not 78 and 36
    res("rm-w42-h100", "rm-7b-train", [_P5S], _pt(_d(10, 16), 13), _pt(_d(10, 17), 21, 30), user="tkim", gpus=4,
        run_group="helios-rm-w42-h100", framebuffer_gib=38)  # fmt: skip
    res("rm-score-h100", "rm-7b-score", [_P5S], _pt(_d(10, 24), 7), _pt(_d(10, 24), 22), user="tkim", gpus=2,
        run_group="helios-rm-score-1024-h100", framebuffer_gib=36)  # fmt: skip
    monday = _d(11, 30)
    res("sft-w49", "sft-7b", [_P5S], _pt(monday, 10), None, **tuned("sft", "w49", monday, "alice"))
    res("rm-w49", "rm-7b-train", [_G6E], _pt(monday, 11), None, user="tkim", run_group="helios-rm-w49")


def _vision(s: _Schedule) -> None:
    """Detector training on the reserved p4d nodes, evaluations and sweeps beside it, labelling on the g6e."""
    vis = partial(s.add, account="vision", user="bob", project="detector-v9")

    def run(tag: str, deleted: date | None = None) -> partial[None]:
        checkpoint = _Checkpoint(f"s3://helios-ckpt-vision/detector-v9/{tag}/", 15, 2500, deleted=deleted)
        return partial(vis, nodes=[_P4D_A], run_group=f"detector-v9-{tag}", checkpoint=checkpoint)

    run("r1", deleted=_d(11, 20))("r1", "detector-v9-r1-master-0", start=_pt(_d(10, 1), 10), end=_pt(_d(10, 8), 16))
    run("r2")("r2", "detector-v9-r2-master-0", start=_pt(_d(10, 12), 9), end=_pt(_d(10, 20), 11))
    distill = run("distill", deleted=_d(11, 25))
    distill("distill", "detector-v9-distill-master-0", start=_pt(_d(10, 22), 10), end=_pt(_d(10, 28), 18))
    # r3 is killed for memory after 20 hours; its resubmission resumes from the checkpoint and completes
    r3 = run("r3")
    r3("r3", "detector-v9-r3-master-0", start=_pt(_d(11, 2), 10), end=_pt(_d(11, 3), 6, 20), state="OUT_OF_MEMORY")
    r3("r3-resume", "detector-v9-r3-resume-master-0", start=_pt(_d(11, 3), 9), end=_pt(_d(11, 11), 15))
    run("r4")("r4", "detector-v9-r4-master-0", start=_pt(_d(11, 16), 9), end=_pt(_d(11, 24), 10))
    vis(
        "v10",
        "detector-v10-pilot-master-0",
        [_P4D_A],
        _pt(_d(11, 27), 10),
        None,
        project="detector-v10",
        run_group="detector-v10-pilot",
        checkpoint=_Checkpoint("s3://helios-ckpt-vision/detector-v10/pilot/", 15, 2500),
    )
    for day, hour in ((_d(10, 8), 18), (_d(10, 20), 13), (_d(11, 11), 17), (_d(11, 24), 12)):
        label = f"eval-{day}"
        vis(
            label,
            _pod(s.seed, "detector-v9-eval", label),
            [_P4D_B],
            _pt(day, hour),
            _pt(day, hour + 5),
            gpus=4,
            profile="eval",
            run_group="detector-v9-eval",
        )
    for day, sweep in ((_d(10, 5), "oct-a"), (_d(10, 14), "oct-b"), (_d(11, 4), "nov-a"), (_d(11, 18), "nov-b")):
        trial = partial(vis, nodes=[_P4D_B], gpus=4, first_gpu=4, user="mina", run_group=f"detector-v9-hpo-{sweep}")
        start = _pt(day, 10)
        if sweep == "nov-a":  # a trial diverges (NaN loss) and the sweep moves on to the next one
            label = f"hpo-{sweep}-0"
            trial(label, _pod(s.seed, "detector-v9-hpo", label), start=start, end=_pt(day, 16), state="FAILED")
            start = _pt(day, 18)
        label = f"hpo-{sweep}"
        trial(label, _pod(s.seed, "detector-v9-hpo", label), start=start, end=_pt(day + timedelta(2), 10))
    # a fine-tune on a retail data set on the on-demand g6e's four L40S between two exports (run again on GCP A100s)
    vis("ft-retail", "detector-v9-ft-retail", [_G6E_OD], _pt(_d(11, 19), 9), _pt(_d(11, 21), 15), user="mina",
        run_group="detector-v9-ft-retail-l40s", framebuffer_gib=34)  # fmt: skip
    # weekly augmentation exports (they upload the augmented set: the g6e's egress) and daily auto-labelling
    augment = partial(vis, nodes=[_G6E_OD], profile="serve")
    for start, end in (
        (_pt(_d(10, 1), 9), _pt(_d(10, 2), 17)),
        *((_pt(m, 9), _pt(m + timedelta(2), 17)) for m in _MONDAYS),
    ):
        label = f"augment-{start:%m%d}"
        augment(label, _pod(s.seed, "augment-export", label), start=start, end=end, run_group=label)
    for day in (_d(10, 1) + timedelta(n) for n in range(61)):
        if day.weekday() < 5 and day != _d(11, 26):  # weekdays but Thanksgiving
            label = f"label-{day}"
            vis(
                label,
                _pod(s.seed, f"auto-label-{day:%Y%m%d}", label),
                [_G6E_SPOT],
                _pt(day, 8),
                _pt(day, 19),
                user="mina",
                project="auto-label",
                profile="serve",
                run_group=f"auto-label-w{day.isocalendar().week}",
            )


def _speech(s: _Schedule) -> None:
    """ASR training and fine-tuning on the on-demand p5 (the p5e next to it reports no telemetry)."""
    asr = partial(s.add, nodes=[_SPEECH_P5], account="speech-asr", user="carlos", project="asr-v3")
    for tag, start, end in (
        ("r1", _pt(_d(10, 5), 9), _pt(_d(10, 14), 14)),
        ("r2", _pt(_d(11, 2), 9), _pt(_d(11, 12), 12)),
    ):
        asr(tag, f"asr-v3-{tag}-master-0", start=start, end=end, run_group=f"asr-v3-{tag}")
        label, evening = f"eval-{tag}", end.astimezone(_LOCAL).date()
        asr(
            label,
            _pod(s.seed, "asr-v3-eval", label),
            start=_pt(evening, 16),
            end=_pt(evening, 21),
            profile="eval",
            run_group="asr-v3-eval",
        )
    # a distillation whose CPU-bound data loader starves the GPUs: engine ~36 % "active", SMs ~10 % busy
    asr(
        "distill",
        _pod(s.seed, "asr-v3-distill", "distill"),
        start=_pt(_d(10, 15), 9),
        end=_pt(_d(10, 17), 18),
        profile="starved",
        run_group="asr-v3-distill",
    )
    # fine-tunes two at a time; the Japanese one first fails on a tokenizer bug
    for monday, languages in ((_d(10, 19), ("de", "ja")), (_d(11, 16), ("es", "fr"))):
        for slot, language in enumerate(languages):
            tune = partial(asr, gpus=4, first_gpu=4 * slot, run_group=f"asr-v3-ft-{language}")
            start = _pt(monday, 10)
            if language == "ja":
                label = f"ft-{language}-0"
                tune(label, _pod(s.seed, "asr-v3-ft-ja", label), start=start, end=_pt(monday, 13, 10), state="FAILED")
                start = _pt(monday, 15)
            label = f"ft-{language}"
            end = _pt(monday + timedelta(2), 12 + 8 * slot)
            tune(label, _pod(s.seed, f"asr-v3-ft-{language}", label), start=start, end=end)


def _azure(s: _Schedule) -> None:
    """EU-resident work on Azure: SFT of helios-70b (an NCCL hang, then a restart), notebooks, vision, speech."""
    llm = partial(s.add, nodes=[_AZ_LLM_1, _AZ_LLM_2], account="llm", user="jdupont", project="helios-70b")
    for tag, start, end in (
        ("r1", _pt(_d(10, 6), 9), _pt(_d(10, 15), 18)),
        ("r2", _pt(_d(10, 20), 8), _pt(_d(10, 30), 12)),
        ("r3", _pt(_d(11, 3), 9), _pt(_d(11, 24), 16)),
    ):
        checkpoint = _Checkpoint(f"{AZURE_CHECKPOINTS}/helios-70b/sft-eu/{tag}/", 300, 20_000)
        sft = partial(llm, name="helios-70b-sft-eu", run_group=f"helios-70b-sft-eu-{tag}", checkpoint=checkpoint)
        if tag == "r2":  # the first attempt hangs in an all-reduce and is killed by the watchdog
            sft(f"az-sft-{tag}-0", start=_pt(_d(10, 19), 9), end=_pt(_d(10, 20), 3, 10), state="FAILED")
        sft(f"az-sft-{tag}", start=start, end=end)
        evening = end.astimezone(_LOCAL).date() + timedelta(1)
        llm(f"az-eval-{tag}", "eval-70b-eu", start=_pt(evening, 9), end=_pt(evening, 15), profile="eval")
    # a LoRA fine-tune every weekday, and a notebook left open over a weekend
    res = partial(s.add, nodes=[_AZ_RES], account="res", user="yuki", project="helios-7b")
    for day in (_d(10, 1) + timedelta(n) for n in range(61)):
        if day.weekday() < 5:
            res(f"az-lora-{day}", "lora-7b-eu", start=_pt(day, 9, 30), end=_pt(day, 17), run_group=f"lora-7b-eu-{day}")
    res("az-nb-weekend", "jupyter", start=_pt(_d(11, 13), 18, 30), end=_pt(_d(11, 16), 9), profile="notebook")
    vis = partial(s.add, account="vision", user="bob", project="detector-v9")
    for tag, start, end in (("eu-r1", _pt(_d(10, 1), 10), _pt(_d(10, 18), 16)), ("eu-r2", _pt(_d(11, 2), 9), None)):
        vis(f"az-{tag}", f"detector-v9-{tag}", [_AZ_VIS], start, end, run_group=f"detector-v9-{tag}")
    for monday in _MONDAYS:
        label = f"az-label-{monday}"
        vis(label, "auto-label-eu", [_AZ_VIS_SPOT], _pt(monday, 8), _pt(monday + timedelta(4), 19), profile="serve")
    asr = partial(s.add, nodes=[_AZ_SPEECH], account="speech-asr", user="carlos", project="asr-v3")
    asr("az-ft-it", "asr-v3-ft-it", start=_pt(_d(10, 7), 10), end=_pt(_d(10, 12), 14), run_group="asr-v3-ft-it")
    asr("az-ft-pl", "asr-v3-ft-pl", start=_pt(_d(11, 4), 10), end=_pt(_d(11, 9), 18), run_group="asr-v3-ft-pl")
    # between the fine-tunes the A100 is cut into MIG slices: a 1g.10gb and a 3g.40gb benchmark side by side
    for label, name, mig in (
        ("az-mig-int8", "asr-v3-int8-eval", ("1g.10gb", "9")),
        ("az-mig-stream", "asr-v3-streaming-bench", ("3g.40gb", "2")),
    ):
        asr(label, name, start=_pt(_d(10, 20), 9), end=_pt(_d(10, 23), 18), profile="serve", run_group=name, mig=mig)


def _coreweave(s: _Schedule) -> None:
    """Research's RL post-training of helios-7b on two reserved CoreWeave H100 nodes (CKS pods)."""
    res = partial(s.add, account="res", user="yuki", project="helios-7b")
    uri = "s3://helios-ckpt-cw/helios-7b"
    grpo = partial(res, nodes=[_CW_1, _CW_2])
    r1 = _Checkpoint(f"{uri}/grpo-r1/", 150, 6000, every_hours=3)
    grpo("cw-grpo-r1", _pod(s.seed, "grpo-7b-r1", "r1"), start=_pt(_d(10, 5), 9), end=_pt(_d(10, 16), 18),
         run_group="helios-7b-grpo-r1", checkpoint=r1)  # fmt: skip
    res("cw-rollouts", _pod(s.seed, "rollout-gen", "oct"), [_CW_1], _pt(_d(10, 19), 9), _pt(_d(10, 24), 17),
        profile="serve", run_group="helios-7b-rollouts-oct")  # fmt: skip
    # r2's first attempt dies in an NCCL timeout on day two and resumes from its last checkpoint
    r2 = _Checkpoint(f"{uri}/grpo-r2/", 150, 6000, every_hours=3)
    grpo("cw-grpo-r2-0", _pod(s.seed, "grpo-7b-r2", "r2-0"), start=_pt(_d(11, 2), 9), end=_pt(_d(11, 4), 2, 20),
         state="FAILED", run_group="helios-7b-grpo-r2", checkpoint=r2)  # fmt: skip
    grpo("cw-grpo-r2", _pod(s.seed, "grpo-7b-r2", "r2"), start=_pt(_d(11, 4), 9), end=_pt(_d(11, 18), 12),
         run_group="helios-7b-grpo-r2", checkpoint=r2)  # fmt: skip


def _gcp(s: _Schedule) -> None:
    """RL post-training of helios-70b on the A3s (an OOM and a resume), spot sweeps, and vision on the A2."""
    llm = partial(s.add, nodes=[_GCP_LLM_1, _GCP_LLM_2], account="llm", user="mchen", project="helios-70b")
    rl = partial(llm, name="helios-70b-rl", run_group="helios-70b-rl")
    checkpoint = _Checkpoint(f"{GCP_CHECKPOINTS}/helios-70b/rl/", 400, 30_000)
    rl("gcp-rl-oom", start=_pt(_d(10, 5), 9), end=_pt(_d(10, 8), 2), state="OUT_OF_MEMORY", checkpoint=checkpoint)
    rl("gcp-rl", start=_pt(_d(10, 8), 10), end=_pt(_d(10, 20), 7), checkpoint=checkpoint)
    checkpoint = _Checkpoint(f"{GCP_CHECKPOINTS}/helios-70b/rl-r2/", 400, 30_000)
    llm("gcp-rl-r2", "helios-70b-rl", start=_pt(_d(11, 2), 9), end=_pt(_d(11, 18), 11), run_group="helios-70b-rl-r2",
        checkpoint=checkpoint)  # fmt: skip
    llm("gcp-rl-r3", "helios-70b-rl", start=_pt(_d(11, 27), 9), end=None, run_group="helios-70b-rl-r3")
    # weekly spot sweeps; the fourth is preempted and resubmitted the next morning
    sweep = partial(s.add, name="sft-7b-sweep", nodes=[_GCP_RES], account="res", user="alice", project="helios-7b")
    for index, monday in enumerate(_MONDAYS):
        group = f"helios-7b-gcp-sweep-w{monday.isocalendar().week}"
        end = _day(monday, 2, 18)
        if index == 3:
            sweep(f"gcp-sweep-{monday}-0", start=_day(monday, 0, 10), end=_day(monday, 1, 4), state="PREEMPTED",
                  run_group=group)  # fmt: skip
            sweep(f"gcp-sweep-{monday}", start=_day(monday, 1, 9), end=end, run_group=group)
        else:
            sweep(f"gcp-sweep-{monday}", start=_day(monday, 0, 10), end=end, run_group=group)
    vis = partial(s.add, nodes=[_GCP_VIS], account="vision", user="mina", project="detector-v9")
    for tag, start, end in (
        ("us-r1", _pt(_d(10, 12), 9), _pt(_d(10, 26), 17)),
        ("us-r2", _pt(_d(11, 9), 9), _pt(_d(11, 23), 12)),
    ):
        vis(f"gcp-{tag}", f"detector-v9-{tag}", start=start, end=end, run_group=f"detector-v9-{tag}")
    # the EKS retail fine-tune again on four of the A2's A100s after Thanksgiving: about 1.3 times an L40S
    vis("gcp-ft-retail", "detector-v9-ft-retail", start=_pt(_d(11, 27), 10), end=_pt(_d(11, 29), 3, 30), gpus=4,
        run_group="detector-v9-ft-retail-a100", framebuffer_gib=34)  # fmt: skip


def _pod(seed: int, prefix: str, label: str) -> str:
    """A batch Job's pod name: its name plus the two generated suffixes (Job, then pod)."""
    digest = _draw(seed, "pod", label)
    chars = [_POD_SUFFIX_CHARS[(digest >> (5 * i)) % len(_POD_SUFFIX_CHARS)] for i in range(10)]
    return f"{prefix}-{''.join(chars[:5])}-{''.join(chars[5:])}"


def _schedule(seed: int) -> list[_Job]:
    """Every job, Slurm ones numbered in start order (array tasks share their array's id)."""
    s = _Schedule(seed)
    for part in (_llm_pretrain, _research, _vision, _speech, _azure, _gcp, _coreweave):
        part(s)
    # array task ids follow the submission's order, whichever task starts first
    arrays: dict[str, list[str]] = {}
    for job in sorted(s.jobs, key=lambda j: j.label):
        if job.array:
            arrays.setdefault(job.array, []).append(job.label)
    numbered: list[_Job] = []
    next_id, bases = 48_100, dict[str, int]()
    launched = dict.fromkeys((AZURE_CLUSTER, GCP_CLUSTER), 0)
    by_label: dict[str, _Job] = {}  # plain Slurm jobs as numbered, for their requeued attempts
    for job in sorted(s.jobs, key=lambda j: (j.start, j.label)):
        if job.cluster in (EKS_CLUSTER, COREWEAVE_CLUSTER):
            numbered.append(replace(job, job_id=f"{job.account}/{job.name}"))
            continue
        if job.requeue_of is not None:  # the same JobID again
            first = by_label[job.requeue_of]
            numbered.append(replace(job, job_id=first.job_id, raw_id=first.raw_id))
            continue
        if job.cluster in launched:  # managed-job ids count up per launcher
            launched[job.cluster] += 1
            numbered.append(replace(job, job_id=str(launched[job.cluster])))
            continue
        if job.array is None:
            numbered.append(replace(job, job_id=str(next_id), raw_id=next_id))
            by_label[job.label] = numbered[-1]
            next_id += 1
        else:
            if job.array not in bases:
                bases[job.array], next_id = next_id, next_id + len(arrays[job.array])
            base, task = bases[job.array], arrays[job.array].index(job.label) + 1
            numbered.append(replace(job, job_id=f"{base}_{task}", raw_id=base + task - 1))
        next_id += _draw(seed, "gap", job.label) % 40  # other users' CPU jobs take the ids in between
    return numbered


# ---------------------------------------------------------------------------------------------
# Slurm accounting
# ---------------------------------------------------------------------------------------------

_STEP_STATES = {
    "COMPLETED": ("COMPLETED", "COMPLETED", "0:0"),
    "FAILED": ("FAILED", "FAILED", "1:0"),
    "OUT_OF_MEMORY": ("OUT_OF_MEMORY", "OUT_OF_MEMORY", "0:125"),
    "TIMEOUT": ("CANCELLED", "CANCELLED", "0:0"),
    "NODE_FAIL": ("CANCELLED", "CANCELLED", "0:0"),
    "RUNNING": ("RUNNING", "RUNNING", "0:0"),
}
"""Job state -> (batch step state, srun step state, job exit code)."""


def _sacct_time(moment: datetime | None) -> str:
    if moment is None:
        return "Unknown"
    local = moment.astimezone(_LOCAL)
    if local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset():
        raise ValueError(f"{moment} falls in the hour {SLURM_TIMEZONE} repeats, which sacct's local times cannot name")
    return local.strftime("%Y-%m-%dT%H:%M:%S")


def _hostlist(nodes: Sequence[_Node]) -> str:
    """Slurm's compressed form of same-prefix node names (gpu-p5-01, gpu-p5-02 -> gpu-p5-[01-02])."""
    groups: dict[str, list[list[str]]] = {}
    for node in nodes:
        prefix, _, number = node.name.rpartition("-")
        runs = groups.setdefault(prefix, [])
        if runs and int(number) == int(runs[-1][-1]) + 1:
            runs[-1][1:] = [number]
        else:
            runs.append([number])
    parts = []
    for prefix, runs in groups.items():
        ranges = ",".join("-".join(run) for run in runs)
        parts.append(f"{prefix}-{ranges}" if runs == [runs[0]] and len(runs[0]) == 1 else f"{prefix}-[{ranges}]")
    return ",".join(parts)


def _tres(job: _Job, nodes: Sequence[_Node]) -> str:
    cpus = sum(n.cpus * job.gpus // n.gpus if n.gpus else n.cpus for n in nodes)
    mem = sum(n.mem_gb * job.gpus // n.gpus if n.gpus else n.mem_gb for n in nodes)
    typed: dict[str, int] = {}
    for node in nodes:
        if node.gpus:
            typed[node.gpu_type] = typed.get(node.gpu_type, 0) + job.gpus
    gres = [f"gres/gpu:{kind}={count}" for kind, count in sorted(typed.items())]
    if typed:
        gres.append(f"gres/gpu={sum(typed.values())}")
    return ",".join([f"billing={cpus}", f"cpu={cpus}", *gres, f"mem={mem}G", f"node={len(nodes)}"])


def _sacct_lines(job: _Job) -> list[str]:
    """The job's record, then its steps': batch script, extern, and the srun step (notebooks have none)."""
    elapsed = int(((job.end or _END) - job.start).total_seconds())
    batch_state, step_state, exit_code = _STEP_STATES.get(job.state, ("CANCELLED", "CANCELLED", "0:15"))
    comment = ""
    if job.run_group:
        comment = f"run_group={job.run_group}"
        if job.checkpoint:
            comment += f";checkpoint={job.checkpoint.uri}"
    if job.profile == "notebook":
        partition, qos = "interactive", "interactive"
    else:
        partition, qos = ({"llm": "train", "res": "research"}[job.account], "normal") if job.gpus else ("cpu", "normal")
    nodes, tres = _hostlist(job.nodes), _tres(job, job.nodes)
    extern_state = "RUNNING" if job.end is None else "COMPLETED"
    # (step suffix, JobName, Partition, QOS, User, WCKey, NodeList, AllocTRES, State, ExitCode, Comment)
    records = [
        ("", job.name, partition, qos, job.user, job.project, nodes, tres, job.state, exit_code, comment),
        (".batch", "batch", "", "", "", "", job.nodes[0].name, _tres(job, job.nodes[:1]), batch_state, exit_code, ""),
        (".extern", "extern", "", "", "", "", nodes, tres, extern_state, "0:0", ""),
    ]
    if job.profile != "notebook":
        srun = ".0", "torchrun" if job.gpus else "python", "", "", "", "", nodes, tres, step_state, exit_code, ""
        records.append(srun)
    times = [_sacct_time(job.start), _sacct_time(job.end), str(elapsed)]
    lines = []
    for step, name, part, qos_name, user, wckey, nodelist, alloc, state, code, note in records:
        fields = [SLURM_CLUSTER, f"{job.job_id}{step}", f"{job.raw_id}{step}", name, part, qos_name, job.account]
        lines.append("|".join([*fields, user, wckey, nodelist, alloc, *times, state, code, note]))
    return lines


def _write_gpu_map(path: Path, jobs: Sequence[_Job]) -> None:
    """The GPU indices a Slurm prolog recorded for each job on each node (one row per JobID and node: a requeued
    job keeps its JobID and its GPUs)."""
    last = {job.label: job.first_gpu + job.gpus - 1 for job in jobs}
    rows = {
        (job.job_id, node.name): f"{job.first_gpu}-{last[job.label]}" if job.gpus > 1 else str(job.first_gpu)
        for job in jobs
        if job.cluster == SLURM_CLUSTER and job.gpus
        for node in job.nodes
    }
    lines = ["job_id,node,gpus", *(f"{job_id},{node},{gpus}" for (job_id, node), gpus in rows.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_sacct(folder: Path, jobs: Sequence[_Job]) -> None:
    """One file per month of job starts, so that every job is listed once."""
    folder.mkdir(parents=True, exist_ok=True)
    for month, start, end in _PERIODS:
        lines = [_SACCT_HEADER]
        for job in jobs:
            if job.cluster == SLURM_CLUSTER and start <= job.start < end:
                lines.extend(_sacct_lines(job))
        (folder / f"sacct-{month}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Samples, egress, jobs CSV and checkpoint inventories, through DuckDB
# ---------------------------------------------------------------------------------------------

# mix32 (the 0x45d9f3b xorshift-multiply hash) gives the same draws on every DuckDB version, unlike hash()
_MACROS_SQL = """
CREATE OR REPLACE TEMP MACRO mix_step(x) AS (xor(x, x >> 16) * 73244475) % 4294967296;
CREATE OR REPLACE TEMP MACRO mix32(x) AS xor(mix_step(mix_step(x)), mix_step(mix_step(x)) >> 16);
CREATE OR REPLACE TEMP MACRO draw(a, b, c) AS
    mix32((a * 2654435761 + b * 2246822519 + c * 3266489917 + {seed_term}) % 4294967296) / 4294967296;
"""

# One row per job, node, held GPU and 5-minute slot the job covers (the sample taken at the slot's start).
_BUSY_SQL = """
CREATE OR REPLACE TEMP TABLE busy AS
WITH gpus AS (
    SELECT *, unnest(range(first_gpu, first_gpu + gpus)) AS gpu FROM placements
),
slots AS (
    SELECT *, (start_s - {t0} + {step} - 1) // {step} AS first_slot, (end_s - {t0} + {step} - 1) // {step} AS end_slot
    FROM gpus
)
SELECT *, unnest(range(first_slot, end_slot)) AS slot FROM slots
"""

# Graphics-engine activity by the job's profile: training steady with synchronized stalls (checkpoint saves),
# evaluation in half-hour bursts, notebooks near zero but for the first and last hour and a rare burst, a
# starved job's engine "active" a third of the time, idle GPUs ~0.
_ENGINE_ACTIVE_SQL = """
round(CASE profile
    WHEN 'train' THEN CASE WHEN draw(job_key, slot, 1) < 0.02 THEN 0.04 * noise
        ELSE least(level + 0.1 * (noise - 0.5), 0.99) END
    WHEN 'eval' THEN CASE WHEN draw(job_key, slot // 6, 3) < 0.5 THEN 0.5 + 0.4 * noise ELSE 0.03 * noise END
    WHEN 'notebook' THEN CASE
        WHEN slot - first_slot < 12 OR end_slot - slot <= 12 OR draw(job_key, slot // 12, 4) < 0.04
            THEN 0.15 + 0.5 * noise
        ELSE 0.02 * noise END
    WHEN 'serve' THEN 0.45 + 0.35 * noise
    WHEN 'starved' THEN 0.30 + 0.12 * noise
    ELSE 0.004 * noise
END, 3)
"""

# The other DCGM fields, from the engine activity by the profile's ratios (_PROFILES): SM, tensor-pipe and DRAM
# activity, and the framebuffer the job keeps allocated (nothing on a GPU no job holds).
_METRICS_SQL = """
    engine_active,
    round(least(engine_active * sm_ratio, 1), 3) AS sm_active,
    round(least(engine_active * tensor_ratio, 1), 3) AS tensor_active,
    round(least(engine_active * dram_ratio, 1), 3) AS dram_active,
    round(fb_mib * (0.96 + 0.04 * noise)) AS fb_used_mib
"""

# Slurm: every GPU of every node at every slot, unlabelled (dcgm-exporter without a job mapping).
_SLURM_SAMPLES_SQL = f"""
COPY (
    WITH grid AS (
        SELECT g.node, g.node_key, g.gpu, s.slot FROM slurm_gpus AS g CROSS JOIN range({{first}}, {{last}}) AS s(slot)
    ),
    sampled AS (
        SELECT g.node, g.gpu, g.slot, b.profile, b.level, b.job_key, b.first_slot, b.end_slot,
            coalesce(b.sm_ratio, 0.9) AS sm_ratio, coalesce(b.tensor_ratio, 0) AS tensor_ratio,
            coalesce(b.dram_ratio, 0) AS dram_ratio, coalesce(b.fb_mib, 0) AS fb_mib,
            draw(g.node_key * 8 + g.gpu, g.slot, 2) AS noise
        FROM grid AS g
        LEFT JOIN busy AS b ON b.node = g.node AND b.gpu = g.gpu AND b.slot = g.slot
    ),
    engine AS (SELECT *, {_ENGINE_ACTIVE_SQL} AS engine_active FROM sampled)
    SELECT node, CAST(gpu AS VARCHAR) AS gpu, to_timestamp({{t0}} + slot * {{step}}) AS "timestamp", {_METRICS_SQL}
    FROM engine
    ORDER BY node, gpu, slot
) TO {{target}} (FORMAT parquet, COMPRESSION zstd)
"""  # noqa: S608  (this module's constants; the slots take integers and quoted paths)

# Kubernetes and the launchers: the GPUs (or MIG slices) jobs hold, labelled with the job (and on EKS the node's
# instance id).
_LABELLED_SAMPLES_SQL = f"""
COPY (
    WITH sampled AS (
        SELECT *, draw(node_key * 8 + gpu + 64 * coalesce(CAST(gpu_instance AS INTEGER), 0), slot, 2) AS noise
        FROM busy
        WHERE cluster = {{cluster}} AND slot >= {{first}} AND slot < {{last}}
    ),
    engine AS (SELECT *, {_ENGINE_ACTIVE_SQL} AS engine_active FROM sampled)
    SELECT node, CAST(gpu AS VARCHAR) AS gpu, gpu_instance, mig_profile,
        to_timestamp({{t0}} + slot * {{step}}) AS "timestamp", {_METRICS_SQL}, job_id, instance_id
    FROM engine
    ORDER BY node, gpu, gpu_instance, slot
) TO {{target}} (FORMAT parquet, COMPRESSION zstd)
"""  # noqa: S608  (this module's constants; the slots take integers and quoted values)

# Bytes each job sent out per node-hour: checkpoint and dataset uploads, in proportion to the hour it ran.
_EGRESS_SQL = """
COPY (
    WITH hours AS (
        SELECT *, unnest(range(start_s // 3600, (end_s + 3599) // 3600)) AS h
        FROM placements
        WHERE cluster = '{cluster}' AND egress_gb_per_hour > 0
    )
    SELECT node, strftime(to_timestamp(h * 3600), '%Y-%m-%dT%H:%M:%SZ') AS hour, job_id,
        CAST(round(egress_gb_per_hour * 1e9 * (least(end_s, (h + 1) * 3600) - greatest(start_s, h * 3600)) / 3600
            * (0.4 + 1.2 * draw(job_key, h, 5))) AS BIGINT) AS bytes
    FROM hours
    ORDER BY node, h, job_id
) TO {target} (FORMAT csv, HEADER true)
"""


def quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class _Profile:
    """How a kind of job uses its GPUs, relative to its engine activity (``_ENGINE_ACTIVE_SQL``)."""

    sm: float
    """SM activity per unit of engine activity: how much of the GPU's compute an active engine keeps busy."""
    tensor: float
    dram: float
    memory: tuple[float, float]
    """Share of the GPU's framebuffer the job keeps allocated, drawn per job between these."""


_PROFILES = {
    "train": _Profile(0.9, 0.6, 0.5, (0.72, 0.94)),
    "eval": _Profile(0.75, 0.35, 0.55, (0.45, 0.6)),
    "notebook": _Profile(0.6, 0.2, 0.3, (0.15, 0.3)),
    "serve": _Profile(0.7, 0.4, 0.6, (0.35, 0.5)),
    # the data loader cannot keep up: the engine is "active" a third of the time, its SMs about 10 %
    "starved": _Profile(0.28, 0.25, 0.2, (0.25, 0.35)),
}


def _level(seed: int, job: _Job) -> float:
    """A training job's typical engine-active ratio, 0.78 to 0.93."""
    return 0.78 + (_draw(seed, "level", job.label) % 151) / 1000


def _framebuffer_mib(seed: int, job: _Job, node: _Node) -> int:
    """MiB the job keeps allocated on each GPU (or MIG slice) it holds."""
    if job.framebuffer_gib is not None:
        return round(job.framebuffer_gib * 1024)
    low, high = _PROFILES[job.profile].memory
    share = low + (high - low) * (_draw(seed, "memory", job.label) % 1001) / 1000
    capacity = int(job.mig[0].split(".")[1].removesuffix("gb")) * 1024 if job.mig else node.framebuffer_mib
    return round(capacity * share)


def _placements(jobs: Sequence[_Job], seed: int) -> pl.DataFrame:
    """One row per job and GPU node it ran on, as the sample and egress SQL reads them."""
    keys = {node.name: key for key, node in enumerate(_NODES)}
    # only the EKS nodes' samples carry their instance id
    instances = {n.name: demo_instance_id(n.instance, seed) for n in _NODES if n.cluster == EKS_CLUSTER and n.instance}
    rows = [
        {
            "cluster": job.cluster,
            "node": node.name,
            "node_key": keys[node.name],
            "job_key": job_key,
            "job_id": job.job_id,
            "profile": job.profile,
            "level": _level(seed, job),
            "sm_ratio": _PROFILES[job.profile].sm,
            "tensor_ratio": _PROFILES[job.profile].tensor,
            "dram_ratio": _PROFILES[job.profile].dram,
            "fb_mib": _framebuffer_mib(seed, job, node),
            "gpu_instance": job.mig[1] if job.mig else None,
            "mig_profile": job.mig[0] if job.mig else None,
            "first_gpu": job.first_gpu,
            # a MIG job's slices are all on its first GPU
            "gpus": 1 if job.mig else job.gpus,
            "start_s": int(job.start.timestamp()),
            "end_s": int((job.end or _END).timestamp()),
            "instance_id": instances.get(node.name),
            "egress_gb_per_hour": node.egress_gb_per_hour,
        }
        for job_key, job in enumerate(jobs)
        for node in job.nodes
        if job.gpus
    ]
    return pl.DataFrame(rows, infer_schema_length=None)


def _write_samples(con: duckdb.DuckDBPyConnection, folder: Path, sql: str, cluster: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    t0 = int(_START.timestamp())
    for month, start, end in _PERIODS:
        first = (int(start.timestamp()) - t0) // SAMPLE_INTERVAL_SECONDS
        last = (int(end.timestamp()) - t0) // SAMPLE_INTERVAL_SECONDS
        target = quote(str(folder / f"dcgm-{month}.parquet"))
        step = SAMPLE_INTERVAL_SECONDS
        con.execute(sql.format(first=first, last=last, t0=t0, step=step, target=target, cluster=quote(cluster)))


def _jobs_csv(con: duckdb.DuckDBPyConnection, jobs: Sequence[_Job], cluster: str, target: Path) -> None:
    """A cluster's jobs as the files connector reads them (Kubernetes: job_id namespace/pod, account namespace)."""
    rows = [
        {
            "job_id": job.job_id,
            "account": job.account,
            "name": job.name,
            "project": job.project,
            "user": job.user,
            "nodes": ";".join(n.name for n in job.nodes),
            "gpu_model": job.nodes[0].gpu_type,
            "gpu_count": job.gpus * len(job.nodes),
            "mig_profile": job.mig[0] if job.mig else None,
            "start": f"{job.start:%Y-%m-%dT%H:%M:%SZ}",
            "end": f"{job.end:%Y-%m-%dT%H:%M:%SZ}" if job.end else None,
            "state": job.state,
            "run_group": job.run_group,
            "checkpoint_uri": job.checkpoint.uri if job.checkpoint else None,
        }
        for job in jobs
        if job.cluster == cluster
    ]
    con.register("pods", pl.DataFrame(rows, infer_schema_length=None).to_arrow())
    # COPY TO takes no parameters: the path quoted
    con.execute(f"COPY (SELECT * FROM pods ORDER BY start, job_id) TO {quote(str(target))} (FORMAT csv, HEADER true)")  # noqa: S608
    con.unregister("pods")


# Checkpoint stores: (cluster writing there, URI root, GB that no job of these months wrote, inventory file)
_CHECKPOINT_INVENTORIES = (
    (SLURM_CLUSTER, "s3://helios-ckpt-llm", {"helios-34b/final/": 45_000, "scratch/": 4_000}, "s3-inventory"),
    (EKS_CLUSTER, "s3://helios-ckpt-vision", {"detector-v8/": 30_000, "scratch/": 1_500}, "s3-inventory"),
    (AZURE_CLUSTER, AZURE_CHECKPOINTS, {"helios-34b/eu-final/": 18_000, "scratch/": 900}, "blob-inventory"),
    (GCP_CLUSTER, GCP_CHECKPOINTS, {"datasets/cache/": 9_000}, "gcs-inventory"),
    (COREWEAVE_CLUSTER, f"s3://{CHECKPOINT_BUCKET}", {"helios-7b/sft-base/": 30_000}, "s3-inventory"),
)


def _checkpoint_writes(jobs: Sequence[_Job], prefix: _Checkpoint) -> list[datetime]:
    """When checkpoints were written under ``prefix``: every ``every_hours`` of each writing job's run time."""
    writes = []
    for job in (j for j in jobs if j.checkpoint == prefix):
        moment = job.start + timedelta(hours=prefix.every_hours)
        while moment < (job.end or _END):
            writes.append(moment)
            moment += timedelta(hours=prefix.every_hours)
    return sorted(writes)


def _inventory(jobs: Sequence[_Job], root: str, legacy: dict[str, int], seed: int) -> pl.DataFrame:
    """Daily (00:00 UTC) listing of the checkpoint objects below ``root`` with their write times: each run's
    checkpoints (the newest ``cap_gb`` worth kept, the rest pruned) and ``legacy`` prefixes (older models'
    checkpoints and scratch space) that no job owns."""
    prefixes = sorted({j.checkpoint for j in jobs if j.checkpoint and j.checkpoint.uri.startswith(f"{root}/")},
                      key=lambda p: p.uri)  # fmt: skip
    writes = {prefix: _checkpoint_writes(jobs, prefix) for prefix in prefixes}
    rows = []
    day = _START
    while day < _END:
        for prefix, written in writes.items():
            if prefix.deleted is not None and day.date() >= prefix.deleted:
                continue
            size_gb = prefix.gb_per_hour * prefix.every_hours
            kept = max(1, int(prefix.cap_gb // size_gb))
            done = [moment for moment in written if moment < day]
            for number, moment in list(enumerate(done, start=1))[-kept:]:
                rows.append((day, f"{prefix.uri}step-{number * 500:07d}.ckpt", int(size_gb * 1e9), moment))
        for key, gb in legacy.items():
            wobble = 0.9 + (_draw(seed, "legacy", root, key, day.date()) % 201) / 1000 if key == "scratch/" else 1
            rows.append((day, f"{root}/{key}", int(gb * wobble * 1e9), None))
        day += timedelta(days=1)
    schema = {"as_of": pl.Datetime("us", "UTC"), "uri": pl.String, "bytes": pl.Int64}
    return pl.DataFrame(rows, schema={**schema, "last_modified": pl.Datetime("us", "UTC")}, orient="row")


def _write_inventory(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, target: Path) -> None:
    con.register("inventory", frame.to_arrow())
    listing = (
        "SELECT strftime(as_of, '%Y-%m-%dT%H:%M:%SZ') AS as_of, uri, bytes,"
        " strftime(last_modified, '%Y-%m-%dT%H:%M:%SZ') AS last_modified FROM inventory ORDER BY as_of, uri"
    )
    # COPY TO takes no parameters: the path quoted
    con.execute(f"COPY ({listing}) TO {quote(str(target))} (FORMAT csv, HEADER true)")
    con.unregister("inventory")


def write_demo_telemetry(root: Path, seed: int = 2026) -> DemoTelemetry:
    """Write Helios Labs' telemetry for 2026-10 and 2026-11 under ``root``; the same seed gives the same bytes.

    ``seed`` must be the one the billing exports were written with: the nodes carry their instance ids.
    """
    jobs = _schedule(seed)
    folders = {SLURM_CLUSTER: root / "slurm", EKS_CLUSTER: root / "eks", AZURE_CLUSTER: root / "azure"}
    folders |= {GCP_CLUSTER: root / "gcp", COREWEAVE_CLUSTER: root / "coreweave"}
    _write_sacct(folders[SLURM_CLUSTER] / "sacct", jobs)
    _write_gpu_map(folders[SLURM_CLUSTER] / "gpu-map.csv", jobs)
    inventories = {}
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.execute(_MACROS_SQL.format(seed_term=seed * 668265263 % 4294967296))
        con.register("placement_rows", _placements(jobs, seed).to_arrow())
        con.execute("CREATE TEMP TABLE placements AS SELECT * FROM placement_rows")
        slurm_gpus = [
            (n.name, key, gpu) for key, n in enumerate(_NODES) if n.cluster == SLURM_CLUSTER for gpu in range(n.gpus)
        ]
        frame = pl.DataFrame(slurm_gpus, schema=["node", "node_key", "gpu"], orient="row")
        con.register("slurm_gpu_rows", frame.to_arrow())
        con.execute("CREATE TEMP TABLE slurm_gpus AS SELECT * FROM slurm_gpu_rows")
        con.execute(_BUSY_SQL.format(t0=int(_START.timestamp()), step=SAMPLE_INTERVAL_SECONDS))
        _write_samples(con, folders[SLURM_CLUSTER] / "dcgm", _SLURM_SAMPLES_SQL)
        for cluster in FILE_CLUSTERS:
            _write_samples(con, folders[cluster] / "dcgm", _LABELLED_SAMPLES_SQL, cluster)
            _jobs_csv(con, jobs, cluster, folders[cluster] / "jobs.csv")
        for cluster, folder in folders.items():
            con.execute(_EGRESS_SQL.format(cluster=cluster, target=quote(str(folder / "egress.csv"))))
        for cluster, store, legacy, kind in _CHECKPOINT_INVENTORIES:
            inventories[cluster] = folders[cluster] / f"{kind}-{store.rsplit('/', 1)[-1]}.csv"
            _write_inventory(con, _inventory(jobs, store, legacy, seed), inventories[cluster])
    finally:
        con.close()
    slurm = folders[SLURM_CLUSTER]
    sacct = TelemetryConfig(
        "helios-slurm-sacct",
        "slurm",
        SLURM_CLUSTER,
        {"path": slurm / "sacct", "gpu_map": slurm / "gpu-map.csv"},
        {"timezone": SLURM_TIMEZONE},
    )
    dcgm = {"samples": slurm / "dcgm", "egress": slurm / "egress.csv", "checkpoints": inventories[SLURM_CLUSTER]}
    files = [
        TelemetryConfig(
            cluster,
            "files",
            cluster,
            {
                "jobs": folders[cluster] / "jobs.csv",
                "samples": folders[cluster] / "dcgm",
                "egress": folders[cluster] / "egress.csv",
                "checkpoints": inventories[cluster],
            },
            {},
        )
        for cluster in FILE_CLUSTERS
    ]
    cloud_ids = {AZURE_CLUSTER: azure_vm_resource_ids(seed), GCP_CLUSTER: gcp_instance_resource_ids(seed)}
    return DemoTelemetry(
        sources=(sacct, TelemetryConfig("helios-slurm-dcgm", "files", SLURM_CLUSTER, dcgm, {}), *files),
        allocation=AllocationConfig(
            idle_threshold=DEFAULT_IDLE_THRESHOLD,
            idle_policy="owner",
            sample_interval_seconds=float(SAMPLE_INTERVAL_SECONDS),
            team_tag_keys=("team",),
            # untagged charges of the training, research and vision accounts (AWS), of the Azure subscriptions
            # and of the GCP projects; the payers and the AWS speech account stay unallocated
            account_teams={
                "000123456789": "llm-pretrain",
                "210987654321": "research",
                "003344556677": "vision",
                **azure_subscription_teams(seed),
                **gcp_project_teams(),
            },
            job_account_teams={"llm": "llm-pretrain", "res": "research", "speech-asr": "speech"},
            checkpoint_resources=CHECKPOINT_STORES,
            nodes=tuple(
                NodeMapping(SLURM_CLUSTER, n.name, demo_instance_id(n.instance, seed))
                for n in _NODES
                if n.cluster == SLURM_CLUSTER and n.instance
            )
            + tuple(
                NodeMapping(n.cluster, n.name, canonical_resource_id(cloud_ids[n.cluster][n.instance]))
                for n in _NODES
                if n.cluster in cloud_ids and n.instance
            )
            + tuple(NodeMapping(n.cluster, n.name, n.name) for n in _NODES if n.cluster == COREWEAVE_CLUSTER),
        ),
    )
