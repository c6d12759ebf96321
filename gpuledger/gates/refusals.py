"""Deliveries a nightly run refused, kept per ingestion partition (provider, billing month): a refusal fails its
delivery, never the night (the other deliveries, telemetry, the split and the publish go on), and it stands until
the partition runs again on changed inputs (docs/decisions/0011)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import duckdb

from gpuledger.warehouse.database import transaction


@dataclass(frozen=True)
class Refusal:
    """One delivery (or a source's folder, when discovery refused it) a run did not load, and why, in one line."""

    source_name: str | None
    delivery: str
    """Its manifest, else its first file, else the source's folder."""
    reason: str
    error: BaseException | None = field(default=None, compare=False)
    """The error that refused it (its traceback goes to the run's log), when this run refused it."""


def replace_refusals(
    con: duckdb.DuckDBPyConnection, provider: str, month: str, refusals: Sequence[Refusal], *, keep: bool = False
) -> None:
    """The partition's standing refusals become ``refusals`` (``keep``: added to those its plan recorded)."""
    with transaction(con):
        if not keep:
            con.execute(
                "DELETE FROM meta.delivery_refusals WHERE provider = $provider AND billing_period = $month",
                {"provider": provider, "month": month},
            )
        for refusal in refusals:
            con.execute(
                "INSERT INTO meta.delivery_refusals VALUES ($provider, $month, $source, $delivery, $reason, now())",
                {
                    "provider": provider,
                    "month": month,
                    "source": refusal.source_name,
                    "delivery": refusal.delivery,
                    "reason": refusal.reason,
                },
            )


def standing_refusals(
    con: duckdb.DuckDBPyConnection, provider: str | None = None, month: str | None = None
) -> list[Refusal]:
    """The standing refusals of every partition (or of one), by billing month and provider."""
    rows = con.execute(
        "SELECT source_name, delivery, reason FROM meta.delivery_refusals"
        " WHERE provider = coalesce($provider, provider) AND billing_period = coalesce($month, billing_period)"
        " ORDER BY billing_period, provider, refused_at",
        {"provider": provider, "month": month},
    ).fetchall()
    return [Refusal(source, str(delivery), str(reason)) for source, delivery, reason in rows]
