"""Source freshness: a source that delivered nothing new for a day and a half has probably stopped exporting."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import duckdb

from models.config import SourceConfig
from models.landing import read_ledger

STALE_AFTER_HOURS = 36
"""Providers refresh their exports at least daily; 36 hours leaves room for one late refresh."""


def last_delivery_times(con: duckdb.DuckDBPyConnection, sources: Sequence[SourceConfig]) -> dict[str, datetime | None]:
    """When each source last brought a new delivery: landed by a sync (remote) or first loaded (a folder)."""
    loaded = dict(
        con.execute("SELECT source_name, max(first_ingested_at) FROM meta.deliveries GROUP BY ALL").fetchall()
    )
    times: dict[str, datetime | None] = {}
    for source in sources:
        if source.remote is not None:
            landed = [e.synced_at for e in read_ledger(source.remote.landing) if e.source == source.name]
            times[source.name] = datetime.fromisoformat(max(landed)) if landed else None
        else:
            times[source.name] = loaded.get(source.name)
    return times


def stale_sources(con: duckdb.DuckDBPyConnection, sources: Sequence[SourceConfig], now: datetime) -> dict[str, str]:
    """Sources with no new delivery within :data:`STALE_AFTER_HOURS` of ``now``, and when they last had one."""
    limit = now - timedelta(hours=STALE_AFTER_HOURS)
    return {
        name: at.isoformat() if at else "never"
        for name, at in last_delivery_times(con, sources).items()
        if at is None or at < limit
    }
