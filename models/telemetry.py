"""Telemetry contracts: what every scheduler and metrics source hands to the warehouse.

Two tables, whatever the source (Slurm accounting, DCGM through Prometheus, plain files):

* **jobs** (:data:`JOBS_SCHEMA`): one row per scheduler job (Slurm job or array task, Kubernetes pod
  or job), with its owner as the scheduler knows it and the GPUs it held.
* **GPU activity** (:data:`GPU_ACTIVITY_SCHEMA`): utilization samples aggregated at ingestion to one
  row per (cluster, node, GPU, hour, job label). Raw samples never reach the warehouse.

The warehouse derives allocated GPU-seconds per (node, hour, job) from the jobs and joins the
activity to them (``sql/telemetry/``).
"""

from __future__ import annotations

import polars as pl

UTC_TIME = pl.Datetime("us", "UTC")

JOBS_SCHEMA = pl.Schema(
    {
        # Unique within a cluster: the scheduler's job id (Slurm array tasks as "1234_7", never steps); an
        # earlier attempt of a requeued Slurm job (``sacct -D``) is "<JobID>#<n>", n = 1, 2, ... in start order.
        "job_id": pl.String,
        # The id the scheduler and the metrics labels use (JobID, pod name); equals job_id but for requeues.
        "scheduler_job_id": pl.String,
        "cluster": pl.String,
        # Job name as submitted (Slurm JobName, pod name); informational.
        "name": pl.String,
        # Owner as the scheduler knows it (Slurm Account, Kubernetes namespace, a file's team column).
        # The allocation config maps it to a team; unmapped values are used as the team name.
        "account": pl.String,
        "project": pl.String,
        "user": pl.String,
        # Slurm partition and QOS (Kubernetes: null); with the name they tell interactive sessions apart.
        "partition": pl.String,
        "qos": pl.String,
        # Nodes the job ran on, expanded ("gpu-[01-02]" -> ["gpu-01", "gpu-02"]).
        "nodes": pl.List(pl.String),
        # GPU model when the scheduler knows it (typed gres "gres/gpu:h100" -> "H100"), else null.
        "gpu_model": pl.String,
        # GPUs (or MIG slices, see mig_profile) held over all nodes (Slurm AllocTRES gres/gpu); spread evenly
        # over ``nodes``.
        "gpu_count": pl.Int32,
        # The GPUs held, as "node:index" (Slurm ``scontrol show job -d`` IDX, a prolog-written map, a pod's
        # device list), when the site provides them; null when only the count is known.
        "gpu_ids": pl.List(pl.String),
        # MIG profile of the slices held ("1g.10gb", "3g.40gb"), null for whole GPUs.
        "mig_profile": pl.String,
        "start": UTC_TIME,
        # Null while running.
        "end": UTC_TIME,
        # One of JOB_STATES.
        "state": pl.String,
        # Attempts of one training run share a run group (restarts after OOM, preemption, node failure), as the
        # scheduler says it (job comment, label, wckey, array id, an explicit column); null when it says
        # nothing: the run is then the job's requeue chain (scheduler_job_id), never its name unless configured.
        "run_group": pl.String,
        # Where the job writes checkpoints ("s3://bucket/prefix/"), when known.
        "checkpoint_uri": pl.String,
        # Which configured telemetry source produced the row.
        "source": pl.String,
    }
)

GPU_ACTIVITY_SCHEMA = pl.Schema(
    {
        "cluster": pl.String,
        "node": pl.String,
        # GPU index ("0".."7") or UUID, as the metrics source labels it.
        "gpu": pl.String,
        # MIG GPU instance (DCGM GPU_I_ID) and its profile ("1g.10gb"); null for a whole GPU.
        "gpu_instance": pl.String,
        "mig_profile": pl.String,
        # Start of the UTC hour the samples fall in.
        "hour": UTC_TIME,
        # Job the samples were labelled with (Kubernetes pod, dcgm-exporter hpc_job), null when unlabelled.
        "job_id": pl.String,
        # Cloud instance id when the samples carry one (e.g. an ``instance_id`` label), else null.
        "instance_id": pl.String,
        # Pricing metric of the GPU-hour: the first of the configured preference with samples in it.
        "metric": pl.String,
        # Seconds covered by samples of the pricing metric (samples x interval), at most 3600.
        "sampled_seconds": pl.Float64,
        # Of those, seconds whose activity was above the idle threshold.
        "active_seconds": pl.Float64,
        # Activity-weighted seconds: sum of activity (0..1) x interval, over all samples.
        "busy_seconds": pl.Float64,
        # The part of busy_seconds from samples above the idle threshold.
        "active_busy_seconds": pl.Float64,
        # Time-weighted mean and 95th percentile of the pricing metric, ratios 0..1.
        "mean_utilization": pl.Float64,
        "p95_utilization": pl.Float64,
        # Mean SM, tensor-pipe and DRAM activity (DCGM profiling), null when not exported.
        "sm_active": pl.Float64,
        "tensor_active": pl.Float64,
        "dram_active": pl.Float64,
        # Framebuffer high-water mark in MiB (DCGM_FI_DEV_FB_USED max), null when not exported.
        "fb_used_mib": pl.Float64,
        "samples": pl.Int64,
        # Copies of samples counted once (the same GPU, metric and time handed over twice: two exporters, a
        # double scrape), over every metric of the GPU-hour.
        "duplicate_samples": pl.Int64,
        "source": pl.String,
    }
)

# Raw samples as connectors hand them to the aggregation (sql/telemetry/gpu_activity.sql), one row per
# GPU, time and metric: activity metrics as ratios 0..1 (scaled by METRIC_SCALE), FB_USED in MiB.
GPU_SAMPLES_SCHEMA = pl.Schema(
    {
        "cluster": pl.String,
        "node": pl.String,
        "gpu": pl.String,
        "gpu_instance": pl.String,
        "mig_profile": pl.String,
        "ts": UTC_TIME,
        "metric": pl.String,
        "value": pl.Float64,
        "job_id": pl.String,
        "instance_id": pl.String,
    }
)

# Final states a job can end in, and the ones that mean "still holding GPUs".
# UNKNOWN: ended, outcome not reported (pods seen only through their metrics).
FINISHED_STATES = ("COMPLETED", "FAILED", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED", "UNKNOWN")
ACTIVE_STATES = ("RUNNING",)
JOB_STATES = (*FINISHED_STATES, *ACTIVE_STATES)

JOB_OUTCOMES = {
    "COMPLETED": "completed",
    "FAILED": "failed",
    "OUT_OF_MEMORY": "failed",
    "NODE_FAIL": "failed",
    "TIMEOUT": "failed",
    "PREEMPTED": "preempted",
    "CANCELLED": "cancelled",
    "UNKNOWN": "unknown",
    "RUNNING": "running",
}
"""What an attempt's final state means for its run: failed (the job broke), preempted (the scheduler or a
spot interruption took the GPUs back), cancelled (a person stopped it)."""

DCGM_SM_ACTIVE = "DCGM_FI_PROF_SM_ACTIVE"
DCGM_TENSOR_ACTIVE = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
DCGM_DRAM_ACTIVE = "DCGM_FI_PROF_DRAM_ACTIVE"
DCGM_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
DCGM_GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
DCGM_FB_USED = "DCGM_FI_DEV_FB_USED"
FILE_UTILIZATION = "file:utilization"
"""Metric of a sample file's plain ``utilization`` column."""

DCGM_METRICS = (DCGM_SM_ACTIVE, DCGM_TENSOR_ACTIVE, DCGM_DRAM_ACTIVE, DCGM_ENGINE_ACTIVE, DCGM_GPU_UTIL, DCGM_FB_USED)
"""Every DCGM field gpuledger reads."""

METRIC_SCALE = {DCGM_GPU_UTIL: 100.0}
"""Divide a metric's exported value by this to get a ratio 0..1 (others are ratios already; FB_USED is MiB)."""

DEFAULT_PRICING_METRICS = (DCGM_SM_ACTIVE, DCGM_ENGINE_ACTIVE, DCGM_GPU_UTIL, FILE_UTILIZATION)
"""Preference order of the activity that prices run time: the first with samples in a GPU-hour wins."""

SAMPLE_FILE_METRICS = {
    "utilization": FILE_UTILIZATION,
    "sm_active": DCGM_SM_ACTIVE,
    "tensor_active": DCGM_TENSOR_ACTIVE,
    "dram_active": DCGM_DRAM_ACTIVE,
    "engine_active": DCGM_ENGINE_ACTIVE,
    "gpu_util": DCGM_GPU_UTIL,
    "fb_used_mib": DCGM_FB_USED,
}
"""Sample-file column -> metric it holds (ratios 0..1; ``gpu_util`` a ratio too; ``fb_used_mib`` in MiB)."""

RUN_GROUP_SOURCES = ("comment", "wckey", "array")
"""Where a Slurm job's run group may come from (``run_group_from``): a ``run_group=`` comment token, the WCKey,
the array job id."""

DEFAULT_IDLE_THRESHOLD = 0.05
"""A GPU sample at or below this activity ratio is inactive (the GPU was held, not used)."""


def empty_jobs() -> pl.DataFrame:
    return pl.DataFrame(schema=JOBS_SCHEMA)


def empty_activity() -> pl.DataFrame:
    return pl.DataFrame(schema=GPU_ACTIVITY_SCHEMA)
