"""The vacuum: loading only appends (rows, source totals, slice owners), so the rows of a slice's earlier owners
and of loads that never published stay in ``focus.cost_rows``, invisible, until this removes them
(docs/decisions/0019). It runs with the warehouse's one writer, after the publish, and the reconcile gate runs
again over what is left before anything is committed."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb

from gpuledger.gates.verdicts import source_mismatches
from gpuledger.warehouse.database import transaction
from gpuledger.warehouse.lake import is_lake
from gpuledger.warehouse.sqlfiles import load_sql
from models.errors import GpuledgerError

DEFAULT_LEASE = dt.timedelta(hours=1)
"""Rows younger than this stay: a load that is still writing them may yet publish."""


@dataclass(frozen=True)
class VacuumResult:
    rows: int
    """FOCUS rows removed."""
    slices: int
    """(delivery, slice) pairs whose rows were removed."""
    deliveries: int
    """Deliveries with rows removed."""


def vacuum(con: duckdb.DuckDBPyConnection, lease: dt.timedelta = DEFAULT_LEASE) -> VacuumResult:
    """Remove the rows no reader sees (older than ``lease``), then prove every owner still reconciles; a
    mismatch rolls everything back and raises."""
    before = dt.datetime.now(dt.UTC) - lease
    con.execute("SET VARIABLE gpuledger_vacuum_before = CAST($before AS TIMESTAMPTZ)", {"before": before})
    with transaction(con):
        con.execute(load_sql("gates/vacuum.sql"))
        rows, slices, deliveries = con.execute(
            "SELECT coalesce(sum(rows), 0), count(*), count(DISTINCT delivery_id) FROM vacuumed_slices"
        ).fetchone() or (0, 0, 0)
        touched = con.execute(
            "SELECT DISTINCT delivery_id FROM vacuumed_slices"
            " WHERE delivery_id IN (SELECT delivery_id FROM meta.slices) ORDER BY 1"
        ).fetchall()
        for (delivery_id,) in touched:  # the reconcile gate again over the owners that lost rows (no other changed)
            if source_mismatches(con, delivery_id):
                raise GpuledgerError(f"vacuum refused: delivery {delivery_id} would no longer match its source totals")
    if is_lake(con):  # compaction, and the files only expired snapshots still name
        con.execute(load_sql("warehouse/lake_maintenance.sql"))
    else:
        con.execute("CHECKPOINT")  # the freed blocks become reusable
    return VacuumResult(int(rows), int(slices), int(deliveries))
