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
        # Scheduler's job id, unique within a cluster; Slurm array tasks as "1234_7", never steps.
        "job_id": pl.String,
        "cluster": pl.String,
        # Job name as submitted (Slurm JobName, pod name); informational.
        "name": pl.String,
        # Owner as the scheduler knows it (Slurm Account, Kubernetes namespace, a file's team column).
        # The allocation config maps it to a team; unmapped values are used as the team name.
        "account": pl.String,
        "project": pl.String,
        "user": pl.String,
        # Nodes the job ran on, expanded ("gpu-[01-02]" -> ["gpu-01", "gpu-02"]).
        "nodes": pl.List(pl.String),
        # GPU model when the scheduler knows it (typed gres "gres/gpu:h100" -> "H100"), else null.
        "gpu_model": pl.String,
        # GPUs held over all nodes (Slurm AllocTRES gres/gpu); spread evenly over ``nodes``.
        "gpu_count": pl.Int32,
        "start": UTC_TIME,
        # Null while running.
        "end": UTC_TIME,
        # One of JOB_STATES.
        "state": pl.String,
        # Attempts of one training run share a run group (restarts after OOM, preemption, node failure).
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
        # Start of the UTC hour the samples fall in.
        "hour": UTC_TIME,
        # Job the samples were labelled with (Kubernetes pod, dcgm-exporter hpc_job), null when unlabelled.
        "job_id": pl.String,
        # Cloud instance id when the samples carry one (e.g. an ``instance_id`` label), else null.
        "instance_id": pl.String,
        # Metric the utilization came from (DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_DEV_GPU_UTIL, ...).
        "metric": pl.String,
        # Seconds covered by samples (samples x sample interval), at most 3600 per GPU and hour.
        "sampled_seconds": pl.Float64,
        # Of those, seconds whose utilization was above the idle threshold.
        "active_seconds": pl.Float64,
        # Time-weighted mean utilization as a ratio 0..1 (DCGM_FI_DEV_GPU_UTIL is divided by 100).
        "mean_utilization": pl.Float64,
        "samples": pl.Int64,
        "source": pl.String,
    }
)

# Raw utilization samples as connectors hand them to the aggregation (sql/telemetry/gpu_activity.sql).
GPU_SAMPLES_SCHEMA = pl.Schema(
    {
        "cluster": pl.String,
        "node": pl.String,
        "gpu": pl.String,
        "ts": UTC_TIME,
        "utilization": pl.Float64,  # ratio 0..1
        "metric": pl.String,
        "job_id": pl.String,
        "instance_id": pl.String,
    }
)

# Final states a job can end in, and the ones that mean "still holding GPUs".
# UNKNOWN: ended, outcome not reported (pods seen only through their metrics).
FINISHED_STATES = ("COMPLETED", "FAILED", "OUT_OF_MEMORY", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED", "UNKNOWN")
ACTIVE_STATES = ("RUNNING",)
JOB_STATES = (*FINISHED_STATES, *ACTIVE_STATES)

# Preferred metric first: the profiling engine-active ratio; the coarse GPU_UTIL percentage is the fallback.
DCGM_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
DCGM_GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL"
UTILIZATION_SCALE = {DCGM_ENGINE_ACTIVE: 1.0, DCGM_GPU_UTIL: 100.0}
"""Divide a metric's value by this to get a ratio 0..1."""

DEFAULT_IDLE_THRESHOLD = 0.05
"""A GPU sample at or below this utilization ratio is idle."""


def empty_jobs() -> pl.DataFrame:
    return pl.DataFrame(schema=JOBS_SCHEMA)


def empty_activity() -> pl.DataFrame:
    return pl.DataFrame(schema=GPU_ACTIVITY_SCHEMA)
