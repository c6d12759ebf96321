"""The ingestion contract (docs/decisions/0011): what a delivery must be before it may replace its slices.

Strict where money is at stake, checked on every delivery of every format, in this order:

* **files**: no file listed twice, no two files with the same bytes, none outside its export folder
  (:func:`gpuledger.normalize.files.verify_files`);
* **rows** (after the write, before the publish): the format's conformance checks, line-item identity,
  reconciliation with the source's own totals (``gpuledger.gates.load``);
* **slices** (:func:`refuse_foreign_slices`): a slice belongs to the source that delivered it, keeps the bucket
  it came from, and is never replaced by an older version of itself.

A delivery that passes all of that can still be implausible; :func:`hold_reasons` says why it should wait for a
person (``gpuledger accept``): it empties a slice that has charges, shrinks or inflates an open month's money on the
days already published beyond ``[ingest] hold_open_month_change``, moves a closed month by more than
``[ingest] hold_closed_month_change``, charges usage far outside its billing period, or, in a format without
line-item ids, repeats a row of a provider that never lists one charge as two identical rows.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from gpuledger.warehouse.sqlfiles import load_sql
from models.config import IngestConfig
from models.delivery import Delivery
from models.errors import InputError
from models.formats import PROVIDERS

SliceKey = tuple[str, str, dt.datetime]
"""(ProviderName, BillingAccountId, BillingPeriodStart)."""

HOLD_CHECKS = ("empty_slice", "open_month_change", "closed_month_change", "usage_outside_period", "twin_rows")
"""The hold rules, each a query in ``sql/gates/holds/<name>.sql`` returning the slices it holds and why."""


@dataclass(frozen=True)
class Hold:
    """Why a delivery waits for ``gpuledger accept``: one rule, one slice."""

    reason: str
    """One of :data:`HOLD_CHECKS`."""
    provider_name: str
    billing_account_id: str
    billing_period: str
    """``YYYY-MM``."""
    detail: str

    def describe(self) -> str:
        return f"{self.reason} {self.provider_name} {self.billing_account_id} {self.billing_period}: {self.detail}"


def stage_slices(con: duckdb.DuckDBPyConnection, slices: Sequence[SliceKey]) -> None:
    """Temp table ``delivery_slices``: the slices a delivery would replace, with their billing month."""
    providers, accounts, starts = (list(column) for column in zip(*slices, strict=True)) if slices else ([], [], [])
    con.execute(
        "CREATE OR REPLACE TEMP TABLE delivery_slices AS SELECT *, billing_month(BillingPeriodStart) AS billing_month"
        " FROM ("
        " SELECT unnest($providers::VARCHAR[]) AS ProviderName, unnest($accounts::VARCHAR[]) AS BillingAccountId,"
        " unnest($starts::TIMESTAMPTZ[]) AS BillingPeriodStart)",
        {"providers": providers, "accounts": accounts, "starts": starts},
    )


def refuse_foreign_slices(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, delivery_id: str, rules: IngestConfig
) -> None:
    """Refuse a delivery whose slices (``delivery_slices``) belong to another source, came from another bucket,
    or were delivered by a newer version than this one; the error names both deliveries."""
    owners = con.execute(
        "SELECT s.ProviderName, s.BillingAccountId, strftime(s.billing_month, '%Y-%m'), o.delivery_id, o.source_name,"
        " d.version_time, d.origin FROM delivery_slices AS s"
        " JOIN meta.slices AS o ON o.provider_name = s.ProviderName AND o.billing_account_id = s.BillingAccountId"
        " AND o.billing_period_start = s.BillingPeriodStart"
        " LEFT JOIN meta.deliveries AS d ON d.delivery_id = o.delivery_id"
        " WHERE o.delivery_id <> $id ORDER BY ALL",
        {"id": delivery_id},
    ).fetchall()
    where = delivery.manifest or (delivery.files[0] if delivery.files else delivery_id)
    source = delivery.source_name
    for provider, account, month, owner_id, owner_source, owner_time, owner_origin in owners:
        key = f"{provider} {account} {month}"
        superseded = owner_source in rules.supersedes.get(source or "", ())
        if owner_source is not None and source in rules.supersedes.get(owner_source, ()):
            raise Outranked(
                where,
                f"slice {key} belongs to source {owner_source!r} (delivery {owner_id}), which supersedes"
                f" {_source_label(source)}: nothing changed",
            )
        if owner_source is not None and owner_source != source and not superseded:
            raise InputError(
                where,
                f"slice {key} belongs to source {owner_source!r} (delivery {owner_id}), this delivery comes from"
                f" {_source_label(source)}: nothing changed (a delivery of that source is imported with --source"
                f" {owner_source}; a configured source that replaces it declares supersedes = [{owner_source!r}])",
            )
        if owner_origin is not None and delivery.origin is not None and owner_origin != delivery.origin:
            raise InputError(
                where,
                f"the manifest delivers slice {key} from {delivery.origin}, but its deliveries came from"
                f" {owner_origin} (delivery {owner_id}): another export's files? Nothing changed",
                column="dataFiles",
            )
        older = owner_time is not None and delivery.version_time is not None and delivery.version_time < owner_time
        if older and owner_source == source:
            raise Outranked(
                where,
                f"this delivery of slice {key} (made {_time(delivery.version_time)}) is older than the loaded"
                f" delivery {owner_id} (made {_time(owner_time)}); an older version never replaces a newer one,"
                " so nothing changed",
            )


class Outranked(InputError):
    """A delivery whose slice is owned by a newer version of it, or by a source that supersedes its own: refused when
    imported, passed over by a nightly run (a newer delivery imported by hand leaves the source's folder with the
    older one; a superseded source may still deliver until it is removed)."""


def hold_reasons(
    con: duckdb.DuckDBPyConnection, delivery_id: str, rules: IngestConfig, *, twins_held: bool
) -> list[Hold]:
    """The hold rules the staged delivery breaks against what is published now (empty: publish it); ``twins_held``:
    its format has no line-item ids."""
    enabled = {
        "empty_slice": rules.hold_empty_slice,
        "open_month_change": True,
        "closed_month_change": True,
        "usage_outside_period": rules.hold_usage_outside_period,
        "twin_rows": twins_held,
    }
    holds = []
    for name in HOLD_CHECKS:
        if not enabled[name]:
            continue
        params: dict[str, object] = {"id": delivery_id}
        if name == "closed_month_change":
            params["share"] = rules.hold_closed_month_change
        elif name == "open_month_change":
            params["share"] = rules.hold_open_month_change
        elif name == "twin_rows":
            params["providers"] = [p.name for p in PROVIDERS.values() if p.lists_identical_rows]
        for provider, account, month, detail in con.execute(load_sql(f"gates/holds/{name}.sql"), params).fetchall():
            holds.append(Hold(name, str(provider), str(account), str(month), str(detail)))
    return holds


def _source_label(source: str | None) -> str:
    return f"source {source!r}" if source else "files imported without --source"


def _time(moment: dt.datetime | None) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if moment else "?"
