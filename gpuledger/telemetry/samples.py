"""Aggregation of raw GPU utilization samples into hourly activity, shared by every metrics source."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial

import duckdb
import polars as pl

from gpuledger.warehouse.sqlfiles import load_sql
from models.telemetry import GPU_ACTIVITY_SCHEMA, GPU_SAMPLES_SCHEMA


def aggregate_samples(
    con: duckdb.DuckDBPyConnection,
    samples: pl.DataFrame | duckdb.DuckDBPyRelation,
    *,
    idle_threshold: float,
    interval_seconds: float,
    source: str,
) -> pl.DataFrame:
    """Hourly activity (``GPU_ACTIVITY_SCHEMA``) of samples shaped like ``GPU_SAMPLES_SCHEMA``."""
    if isinstance(samples, pl.DataFrame):
        samples = con.from_arrow(samples.select(GPU_SAMPLES_SCHEMA.names()).cast(dict(GPU_SAMPLES_SCHEMA)).to_arrow())
    samples.create_view("gpu_samples", replace=True)
    try:
        params = {"idle_threshold": idle_threshold, "interval_seconds": interval_seconds, "source": source}
        frame = con.execute(load_sql("telemetry/gpu_activity.sql"), params).pl()
    finally:
        con.execute("DROP VIEW IF EXISTS gpu_samples")
    return frame.cast(dict(GPU_ACTIVITY_SCHEMA)).select(GPU_ACTIVITY_SCHEMA.names())


@contextmanager
def sample_aggregator(*, idle_threshold: float, source: str) -> Iterator[Callable[[pl.DataFrame, int], pl.DataFrame]]:
    """``aggregate_samples`` on a private in-memory connection, for a connector that fetches samples in batches:
    called with a batch and its sampling interval in seconds."""
    with duckdb.connect() as con:
        con.execute("SET TimeZone='UTC'")
        aggregate = partial(aggregate_samples, con, idle_threshold=idle_threshold, source=source)
        yield lambda samples, interval_seconds: aggregate(samples, interval_seconds=interval_seconds)
