"""``gpu.usage``: the GPU-seconds each job held and used per node-hour of a billing month, from the jobs and
activity telemetry loaded; the split prices it."""

from __future__ import annotations

from datetime import datetime

import duckdb

from gpuledger.warehouse.sqlfiles import load_sql


def rebuild_usage(
    con: duckdb.DuckDBPyConnection, billing_period_start: datetime, hours: tuple[datetime, datetime], pricing: str
) -> None:
    """Replace the month's ``gpu.usage`` rows (keyed by its UTC start) for the ``[first, end)`` hours its charges
    cover (provider billing months need not be UTC months), run time priced by ``pricing`` (a PRICING_MODES
    value). Runs inside the caller's transaction."""
    con.execute("DELETE FROM gpu.usage WHERE billing_period_start = $start", {"start": billing_period_start})
    con.execute(
        "INSERT INTO gpu.usage BY NAME " + load_sql("telemetry/gpu_usage.sql"),
        {
            "billing_period_start": billing_period_start,
            "period_start": hours[0],
            "period_end": hours[1],
            "pricing": pricing,
        },
    )
