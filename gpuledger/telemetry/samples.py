"""Aggregation of raw GPU samples into hourly activity, shared by every metrics source."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import polars as pl

from gpuledger.warehouse.sqlfiles import create_temp_view, load_sql
from models.telemetry import (
    DCGM_DRAM_ACTIVE,
    DCGM_FB_USED,
    DCGM_SM_ACTIVE,
    DCGM_TENSOR_ACTIVE,
    DEFAULT_IDLE_THRESHOLD,
    DEFAULT_PRICING_METRICS,
    GPU_ACTIVITY_SCHEMA,
    GPU_SAMPLES_SCHEMA,
)


@dataclass(frozen=True)
class SampleAggregation:
    """How samples become hourly activity."""

    source: str
    """Telemetry source name recorded on every row."""
    idle_threshold: float = DEFAULT_IDLE_THRESHOLD
    """Activity ratio at or below which a sample is inactive."""
    pricing_metrics: Sequence[str] = DEFAULT_PRICING_METRICS
    """Activity metrics that may price run time, preferred first."""


def aggregate_samples(
    con: duckdb.DuckDBPyConnection,
    samples: pl.DataFrame | duckdb.DuckDBPyRelation,
    aggregation: SampleAggregation,
    *,
    interval_seconds: float,
) -> pl.DataFrame:
    """Hourly activity (``GPU_ACTIVITY_SCHEMA``) of samples shaped like ``GPU_SAMPLES_SCHEMA``; a sample handed over
    more than once (the same GPU, job label, metric and time) is counted once, its copies in ``duplicate_samples``."""
    # temporary views: on the warehouse's connection a stored one would be a catalog change (a lake snapshot)
    if isinstance(samples, pl.DataFrame):
        typed = samples.select(GPU_SAMPLES_SCHEMA.names()).cast(dict(GPU_SAMPLES_SCHEMA))
        con.register("gpu_sample_copies", typed.to_arrow())
    else:
        create_temp_view(con, "gpu_sample_copies", samples)
    try:
        params = {
            "idle_threshold": aggregation.idle_threshold,
            "interval_seconds": interval_seconds,
            "pricing_metrics": list(aggregation.pricing_metrics),
            "source": aggregation.source,
            "sm_metric": DCGM_SM_ACTIVE,
            "tensor_metric": DCGM_TENSOR_ACTIVE,
            "dram_metric": DCGM_DRAM_ACTIVE,
            "fb_metric": DCGM_FB_USED,
        }
        con.execute(
            "CREATE OR REPLACE TEMP VIEW gpu_samples AS SELECT *, 0 AS copies, value AS peak FROM gpu_sample_copies"
        )
        frame = con.execute(load_sql("telemetry/gpu_activity.sql"), params).pl()
        if frame["crowded"].any():
            # Merging every sample costs four times the aggregation: done only when some GPU-hour may hold copies.
            con.execute("CREATE OR REPLACE TEMP VIEW gpu_samples AS " + load_sql("telemetry/distinct_samples.sql"))
            frame = con.execute(load_sql("telemetry/gpu_activity.sql"), params).pl()
    finally:
        con.execute("DROP VIEW IF EXISTS gpu_samples")
        con.execute("DROP VIEW IF EXISTS gpu_sample_copies")
    return frame.cast(dict(GPU_ACTIVITY_SCHEMA)).select(GPU_ACTIVITY_SCHEMA.names())


@contextmanager
def sample_aggregator(aggregation: SampleAggregation) -> Iterator[Callable[[pl.DataFrame, int], pl.DataFrame]]:
    """``aggregate_samples`` on a private in-memory connection, for a connector that fetches samples in batches:
    called with a batch and its sampling interval in seconds."""
    with duckdb.connect() as con:
        con.execute("SET TimeZone='UTC'")
        yield lambda samples, interval_seconds: aggregate_samples(
            con, samples, aggregation, interval_seconds=interval_seconds
        )
