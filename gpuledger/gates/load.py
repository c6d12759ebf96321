"""Load one delivery into ``focus.costs``: write, audit, publish (docs/decisions/0003).

A slice is (ProviderName, BillingAccountId, BillingPeriodStart). The delivery's FOCUS rows are first
*written* (committed into ``focus.cost_rows`` but invisible: ``focus.costs`` shows only rows of the
deliveries that own a slice), then *audited* (conformance checks, rows match the manifest, sums equal
the source's exactly), then *published* in one small transaction that appends one owner row per slice
(``meta.slice_owners``): loading deletes nothing of other deliveries, the earlier owners' rows stay invisible
until the vacuum removes them (docs/decisions/0019). A failure at any step leaves what readers see unchanged.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Literal

import duckdb

from gpuledger.gates.checks import CheckResult
from gpuledger.gates.contract import Hold, SliceKey, hold_reasons, refuse_foreign_slices, stage_slices
from gpuledger.gates.verdicts import DeliveryVerdict, delivery_verdict
from gpuledger.normalize import aws_cur
from gpuledger.normalize.files import (
    FileStats,
    GzipCheck,
    bad_cast_predicates,
    checking_gzip,
    first_bad_row,
    first_repeat,
    matching_rows,
    read_error,
    read_raw,
    verify_files,
)
from gpuledger.normalize.formats import FORMAT_MODELS, FormatModel
from gpuledger.warehouse.database import retry_on_conflict, transaction
from gpuledger.warehouse.failpoints import failpoint
from gpuledger.warehouse.sqlfiles import load_sql
from models.config import IngestConfig
from models.delivery import Delivery
from models.errors import GpuledgerError, InputError, ReconciliationError, describe_error
from models.focus import SOURCE_CHANGES, origin_line_item

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SliceTotal:
    """FOCUS totals of one replaced slice in one currency."""

    provider_name: str
    billing_account_id: str
    billing_period_start: dt.datetime
    currency: str | None
    rows: int
    billed_cost: Decimal
    effective_cost: Decimal


@dataclass(frozen=True)
class LoadResult:
    delivery_id: str
    unchanged: bool
    """True when this exact delivery was already loaded (published, or still held): nothing was done."""
    slices: tuple[SliceTotal, ...]
    """The delivery's own rows per slice it replaces (or would replace, when held)."""
    holds: tuple[Hold, ...] = ()
    """Why the delivery waits for ``gpuledger accept`` instead of being published; empty when it was published."""
    repairs: tuple[tuple[str, int], ...] = ()
    """Descriptive values repaired (x_SourceChanges): each change with its row count."""
    verdict: DeliveryVerdict | None = None
    """The delivery gate's verdict on the rows this load staged and audited (they do not change once audited);
    None when it audited none (unchanged, or accepted after a hold)."""

    @property
    def held(self) -> bool:
        return bool(self.holds)


PUBLISHED, HELD, SUPERSEDED = "published", "held", "superseded"
"""Temp table a reader fills with source rows it did not load, and why (counted in meta.delivery_repairs)."""


def load_delivery(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    rules: IngestConfig | None = None,
    *,
    part_bytes: int | None = None,
    stager: PartStager | None = None,
) -> LoadResult:
    """Replace the delivery's slices in ``focus.costs`` with its rows, hold it for ``gpuledger accept``, or change
    nothing and raise (docs/decisions/0003, 0011). Its files are staged in parts of ``part_bytes`` (None: one part),
    by ``stager`` when it has several (None: here, one after another); audit and publish cover all of them."""
    return finish_load(con, plan_load(con, delivery, part_bytes), rules, stager)


LoadAction = Literal["held", "published", "accepted", "stage"]
"""What a load does: nothing (``held`` for review, or ``published`` and owning a slice already), publish the rows
staged before a person accepted them (``accepted``), or stage, audit and publish the delivery's files."""


@dataclass(frozen=True)
class PlannedLoad:
    """A delivery's load as decided before any of its files is staged; its parts may then be staged anywhere (a
    Dagster step each), and ``finish_load`` audits and publishes what they staged."""

    delivery: Delivery
    delivery_id: str
    stats: FileStats
    ingested_at: dt.datetime
    action: LoadAction
    parts: tuple[Part, ...]
    """The parts to stage (``stage`` only)."""


def plan_load(con: duckdb.DuckDBPyConnection, delivery: Delivery, part_bytes: int | None = None) -> PlannedLoad:
    """Decide what loading ``delivery`` does; when it must be staged, drop what an earlier attempt left of it and
    cut its files into parts of ``part_bytes`` (None: one part)."""
    model = FORMAT_MODELS[delivery.source_format]
    stats = verify_files(delivery.files, delivery.root, model.extract_of)
    delivery_id = delivery.delivery_id(stats.sha256)
    previous = con.execute(
        "SELECT first_ingested_at, state FROM meta.deliveries WHERE delivery_id = $id", {"id": delivery_id}
    ).fetchone()
    ingested_at = previous[0] if previous else dt.datetime.now(dt.UTC).replace(microsecond=0)
    action: LoadAction = "stage"
    if previous and previous[1] == HELD:
        action = "accepted" if _accepted(con, delivery_id) else "held"
    elif previous and previous[1] == PUBLISHED and _owns_a_slice(con, delivery_id):
        action = "published"
    parts: tuple[Part, ...] = ()
    if action == "stage":
        _discard_own_rows(con, delivery_id)
        parts = tuple(plan_parts(delivery, delivery_id, ingested_at, part_bytes))
    return PlannedLoad(delivery, delivery_id, stats, ingested_at, action, parts)


def finish_load(
    con: duckdb.DuckDBPyConnection,
    planned: PlannedLoad,
    rules: IngestConfig | None = None,
    stager: PartStager | None = None,
) -> LoadResult:
    """Do what ``plan_load`` decided: stage the parts (``stager``, as in ``load_delivery``), audit, then publish or
    hold; any failure discards what this load staged and leaves what readers see unchanged."""
    rules = rules or IngestConfig()
    delivery, delivery_id, ingested_at = planned.delivery, planned.delivery_id, planned.ingested_at
    model = FORMAT_MODELS[delivery.source_format]
    if planned.action == "held":
        return _result(con, delivery_id, _delivery_slices(con, delivery, model, delivery_id), unchanged=True)
    if planned.action == "published":
        return _result(con, delivery_id, _owned_slices(con, delivery_id), unchanged=True)
    if planned.action == "accepted":  # its checked rows are staged already
        slices = _delivery_slices(con, delivery, model, delivery_id)
        stage_slices(con, slices)
        refuse_foreign_slices(con, delivery, delivery_id, rules)
        retry_on_conflict(lambda: _publish(con, delivery, delivery_id, planned.stats, ingested_at, slices))
        log.info("published accepted delivery %s into %d slice(s)", delivery_id, len(slices))
        return _result(con, delivery_id, slices, unchanged=False)
    try:
        _write(con, planned.parts, stager)
        verdict = _audit(con, delivery, model, delivery_id, rules, len(planned.parts))
        slices = _delivery_slices(con, delivery, model, delivery_id)
        stage_slices(con, slices)
        refuse_foreign_slices(con, delivery, delivery_id, rules)
    except BaseException:
        _discard_own_rows(con, delivery_id)
        raise
    holds = hold_reasons(con, delivery_id, rules, twins_held=model.twins_held)
    if holds:
        _hold(con, delivery, delivery_id, planned.stats, ingested_at, holds)
        log.info("held %s: %s", delivery_id, "; ".join(h.detail for h in holds))
        return _result(con, delivery_id, slices, unchanged=False, verdict=verdict)
    # a lake refuses the commit when a concurrent writer changed the same tables: nothing committed, tried again
    retry_on_conflict(lambda: _publish(con, delivery, delivery_id, planned.stats, ingested_at, slices))
    log.info("loaded %s into %d slice(s)", delivery_id, len(slices))
    return _result(con, delivery_id, slices, unchanged=False, verdict=verdict)


def _result(
    con: duckdb.DuckDBPyConnection,
    delivery_id: str,
    slices: Sequence[SliceKey],
    *,
    unchanged: bool,
    verdict: DeliveryVerdict | None = None,
) -> LoadResult:
    holds = con.execute(
        "SELECT reason, provider_name, billing_account_id, billing_period, detail FROM meta.delivery_holds"
        " WHERE delivery_id = $id AND accepted_at IS NULL AND $id IN"
        " (SELECT delivery_id FROM meta.deliveries WHERE state = 'held') ORDER BY ALL",
        {"id": delivery_id},
    ).fetchall()
    repairs = con.execute(
        "SELECT change, rows FROM meta.delivery_repairs WHERE delivery_id = $id ORDER BY change", {"id": delivery_id}
    ).fetchall()
    return LoadResult(
        delivery_id,
        unchanged,
        _slice_totals(con, delivery_id, slices),
        tuple(Hold(*row) for row in holds),
        tuple((str(change), int(rows)) for change, rows in repairs),
        verdict,
    )


def _accepted(con: duckdb.DuckDBPyConnection, delivery_id: str) -> bool:
    row = con.execute(
        "SELECT bool_and(accepted_at IS NOT NULL) FROM meta.delivery_holds WHERE delivery_id = $id",
        {"id": delivery_id},
    ).fetchone()
    return bool(row and row[0])


def accept_delivery(con: duckdb.DuckDBPyConnection, delivery_id: str) -> list[Hold]:
    """Record that a person accepted a held delivery: the next load of it publishes it. Returns its holds."""
    _refuse_unless_held(con, delivery_id)
    holds = con.execute(
        "SELECT reason, provider_name, billing_account_id, billing_period, detail FROM meta.delivery_holds"
        " WHERE delivery_id = $id ORDER BY ALL",
        {"id": delivery_id},
    ).fetchall()
    con.execute(
        "UPDATE meta.delivery_holds SET accepted_at = now() WHERE delivery_id = $id AND accepted_at IS NULL",
        {"id": delivery_id},
    )
    return [Hold(*row) for row in holds]


def _refuse_unless_held(con: duckdb.DuckDBPyConnection, delivery_id: str) -> None:
    state = con.execute("SELECT state FROM meta.deliveries WHERE delivery_id = $id", {"id": delivery_id}).fetchone()
    if state is None or state[0] != HELD:
        held = [r[0] for r in con.execute("SELECT delivery_id FROM meta.deliveries WHERE state = 'held'").fetchall()]
        what = "superseded by a newer delivery" if state and state[0] == SUPERSEDED else "not held"
        choices = f"held now: {', '.join(held)}" if held else "no delivery is held"
        raise InputError(delivery_id, f"delivery {what}; {choices}")


def publish_accepted(
    con: duckdb.DuckDBPyConnection, delivery_id: str, rules: IngestConfig | None = None
) -> tuple[list[Hold], LoadResult]:
    """Accept a held delivery and publish its staged rows now, wherever its files were imported from (a run only
    finds the configured sources' deliveries): its holds and the load's result. Its files must still be the ones
    it was loaded from; when publishing is refused the delivery stays held, not accepted."""
    delivery = _recorded_delivery(con, delivery_id)
    holds = accept_delivery(con, delivery_id)
    try:
        planned = plan_load(con, delivery)
        if planned.delivery_id != delivery_id:
            raise InputError(
                delivery.files[0] if delivery.files else delivery_id,
                f"the files of held delivery {delivery_id} changed since it was loaded: nothing published (import"
                " them again, then accept the new delivery)",
            )
        return holds, finish_load(con, planned, rules)
    except BaseException:
        con.execute("UPDATE meta.delivery_holds SET accepted_at = NULL WHERE delivery_id = $id", {"id": delivery_id})
        raise


def _recorded_delivery(con: duckdb.DuckDBPyConnection, delivery_id: str) -> Delivery:
    """The held delivery as its load recorded it in meta.deliveries."""
    _refuse_unless_held(con, delivery_id)
    row = con.execute(
        "SELECT source_format, files, billing_period, billing_account_id, version, manifest, source_name,"
        " version_time, origin FROM meta.deliveries WHERE delivery_id = $id",
        {"id": delivery_id},
    ).fetchone()
    assert row is not None  # held, so recorded
    fmt, files, period, account, version, manifest, source, version_time, origin = row
    return Delivery(
        fmt, tuple(Path(f) for f in files), period, account, version, Path(manifest) if manifest else None, source,
        version_time, origin,
    )  # fmt: skip


def held_deliveries(con: duckdb.DuckDBPyConnection) -> dict[str, list[Hold]]:
    """Deliveries waiting for ``gpuledger accept`` (none accepted yet), with why."""
    rows = con.execute(
        "SELECT h.delivery_id, h.reason, h.provider_name, h.billing_account_id, h.billing_period, h.detail"
        " FROM meta.delivery_holds AS h JOIN meta.deliveries AS d USING (delivery_id)"
        " WHERE d.state = 'held' AND h.accepted_at IS NULL ORDER BY ALL"
    ).fetchall()
    held: dict[str, list[Hold]] = {}
    for delivery_id, *hold in rows:
        held.setdefault(str(delivery_id), []).append(Hold(*hold))
    return held


def _owns_a_slice(con: duckdb.DuckDBPyConnection, delivery_id: str) -> bool:
    """A later delivery of the same slices takes them over in meta.slices; then this one owns none."""
    row = con.execute("SELECT count(*) FROM meta.slices WHERE delivery_id = $id", {"id": delivery_id}).fetchone()
    return bool(row and row[0])


def _owned_slices(con: duckdb.DuckDBPyConnection, delivery_id: str) -> list[SliceKey]:
    rows = con.execute(
        "SELECT provider_name, billing_account_id, billing_period_start FROM meta.slices WHERE delivery_id = $id"
        " ORDER BY ALL",
        {"id": delivery_id},
    ).fetchall()
    return [(str(p), str(a), start) for p, a, start in rows]


def _discard_own_rows(con: duckdb.DuckDBPyConnection, delivery_id: str) -> None:
    """Drop what an earlier attempt at this delivery left (a failed audit, a crash between write and publish, or
    the rows of a delivery that owns no slice any more); it is neither held nor an owner when this runs. Other
    deliveries' rows are the vacuum's: a load touches only its own."""
    retry_on_conflict(lambda: _delete_own_rows(con, delivery_id))


def _delete_own_rows(con: duckdb.DuckDBPyConnection, delivery_id: str) -> None:
    with transaction(con):
        con.execute("DELETE FROM focus.cost_rows WHERE x_DeliveryId = $id", {"id": delivery_id})
        con.execute("DELETE FROM meta.source_totals WHERE delivery_id = $id", {"id": delivery_id})


@dataclass(frozen=True)
class Part:
    """Files of one delivery staged in one transaction. What they become depends on nothing outside them (a line
    item's identity is its file's), so a delivery's rows are the same however its files are grouped."""

    delivery: Delivery
    delivery_id: str
    ingested_at: dt.datetime
    number: int
    of: int
    """How many parts the delivery has."""
    files: tuple[Path, ...]


@dataclass(frozen=True)
class StagedPart:
    """What staging one part committed. The delivery's audit starts only once the warehouse holds every part's
    rows: a part staged hours earlier (a failed step re-run) may have lost them to the vacuum meanwhile."""

    delivery_id: str
    number: int
    focus_rows: int
    source_totals: int
    """Rows the part added to meta.source_totals."""


PartStager = Callable[[Sequence[Part]], Sequence[StagedPart]]
"""Stages every part it is given (``stage_part``) and returns what each committed, or raises: in this process one
after another, in several, or (Dagster) by steps that already ran."""


def plan_parts(delivery: Delivery, delivery_id: str, ingested_at: dt.datetime, part_bytes: int | None) -> list[Part]:
    """The delivery's files in order, cut into parts of at least ``part_bytes`` (None: one part); a format whose
    files are read together is one part."""
    model = FORMAT_MODELS[delivery.source_format]
    groups: list[list[Path]] = [[]]
    size = 0
    for file in delivery.files:
        if groups[-1] and part_bytes is not None and not model.read_whole and size >= part_bytes:
            groups.append([])
            size = 0
        groups[-1].append(file)
        size += file.stat().st_size
    groups = [files for files in groups if files]
    return [
        Part(delivery, delivery_id, ingested_at, number, len(groups), tuple(files))
        for number, files in enumerate(groups, start=1)
    ]


def stage_part(con: duckdb.DuckDBPyConnection, part: Part) -> StagedPart:
    """Stage one part's FOCUS rows and source totals, committed but not yet visible in focus.costs; the transaction
    commits only once every gzip file of the part proved complete."""
    model = FORMAT_MODELS[part.delivery.source_format]
    _discard_part_rows(con, part)
    with checking_gzip(part.files) as gzip_check:
        try:
            # the reader notes here the source rows it did not load (GCP: records an earlier extract delivered)
            con.execute("CREATE TEMP TABLE IF NOT EXISTS source_skipped (change VARCHAR, rows BIGINT)")
            started_at = dt.datetime.now(dt.UTC)
            # temp tables and views only, made before the transaction: uncommitted rows scan slower (GCP: 2x the insert)
            raw = model.read_files(con, part.files)
            cast_columns = model.create_source_view(con, raw, part.files)
            staged = retry_on_conflict(
                lambda: _commit_part(con, part, model, raw, cast_columns, gzip_check, started_at)
            )
        except Exception:
            gzip_check.result()  # a truncated file explains whatever its read raised
            raise
    failpoint("load:part-staged", f"{part.delivery.source_name}:{part.number}")
    return staged


def _discard_part_rows(con: duckdb.DuckDBPyConnection, part: Part) -> None:
    """Drop what an earlier attempt at this very part committed (its step killed after staging, then run again
    without a new plan): a part whose files hold rows has source totals, and its FOCUS rows name its files."""
    staged = con.execute(
        "SELECT count(*) FROM meta.source_totals WHERE delivery_id = $id AND part = $part",
        {"id": part.delivery_id, "part": part.number},
    ).fetchone()
    if staged and staged[0]:
        retry_on_conflict(lambda: _delete_part_rows(con, part))


def _delete_part_rows(con: duckdb.DuckDBPyConnection, part: Part) -> None:
    with transaction(con):
        con.execute(
            "DELETE FROM focus.cost_rows WHERE x_DeliveryId = $id AND x_SourceFile IN (SELECT unnest($files))",
            {"id": part.delivery_id, "files": [str(file) for file in part.files]},
        )
        con.execute(
            "DELETE FROM meta.source_totals WHERE delivery_id = $id AND part = $part",
            {"id": part.delivery_id, "part": part.number},
        )


def _commit_part(
    con: duckdb.DuckDBPyConnection,
    part: Part,
    model: FormatModel,
    raw: duckdb.DuckDBPyRelation,
    cast_columns: dict[str, str],
    gzip_check: GzipCheck,
    started_at: dt.datetime,
) -> StagedPart:
    with transaction(con):
        focus_rows = _insert_focus_rows(con, part, model, raw, cast_columns)
        # the format's source-totals model, a project SQL file, as the subquery of one insert; the times are the
        # clock's (DuckDB's now() and get_current_timestamp() both give the transaction's start)
        totals = (
            "INSERT INTO meta.source_totals BY NAME SELECT $id AS delivery_id, $part AS part,"
            " $started_at AS staging_started_at, $staged_at AS staged_at, * FROM ({})"
        )
        times = {"started_at": started_at, "staged_at": dt.datetime.now(dt.UTC)}  # once its FOCUS rows are in
        try:
            sql = totals.format(load_sql(model.source_totals_sql))
            source_totals = _inserted(con.execute(sql, {"id": part.delivery_id, "part": part.number} | times))
        except duckdb.Error as exc:  # the totals read columns the model does not (the file's every cell counts)
            raise read_error(part.files, exc) or exc from exc
        gzip_check.result()
    return StagedPart(part.delivery_id, part.number, focus_rows, source_totals)


def _inserted(insert: duckdb.DuckDBPyConnection) -> int:
    """How many rows the INSERT just executed on ``insert`` added (DuckDB answers with the count)."""
    row = insert.fetchone()
    return int(row[0]) if row else 0


def _write(con: duckdb.DuckDBPyConnection, parts: Sequence[Part], stager: PartStager | None) -> None:
    """Stage the delivery's parts (several at once when ``stager`` runs them in processes of its own), then what
    depends on all of its rows: one category per service, the count of repairs."""
    if not parts:
        return
    con.execute("CREATE OR REPLACE TEMP TABLE source_skipped (change VARCHAR, rows BIGINT)")
    if stager is None or len(parts) == 1:  # one part: here, where the reader's notes (source_skipped) are
        staged: Sequence[StagedPart] = [stage_part(con, part) for part in parts]
    else:
        staged = stager(parts)
    _confirm_staged(con, parts, staged)
    delivery_id = parts[0].delivery_id
    retry_on_conflict(lambda: _finish_write(con, delivery_id, len(parts)))


def _confirm_staged(con: duckdb.DuckDBPyConnection, parts: Sequence[Part], staged: Sequence[StagedPart]) -> None:
    """Every part was staged, and the warehouse still holds exactly what staging them committed."""
    delivery_id = parts[0].delivery_id
    mine = [s for s in staged if s.delivery_id == delivery_id]
    missing = sorted({part.number for part in parts} - {s.number for s in mine})
    if missing or len(mine) != len(parts):
        raise GpuledgerError(
            f"delivery {delivery_id}: part(s) {', '.join(map(str, missing)) or 'repeated'} of {len(parts)} not"
            " staged; load it again"
        )
    held = con.execute(
        "SELECT (SELECT count(*) FROM focus.cost_rows WHERE x_DeliveryId = $id),"
        " (SELECT count(*) FROM meta.source_totals WHERE delivery_id = $id)",
        {"id": delivery_id},
    ).fetchone()
    committed = (sum(s.focus_rows for s in mine), sum(s.source_totals for s in mine))
    if held != committed:
        raise GpuledgerError(
            f"delivery {delivery_id}: its parts committed {committed[0]:,} FOCUS rows and {committed[1]:,} source"
            f" totals, the warehouse holds {held[0] if held else 0:,} and {held[1] if held else 0:,} (removed by a"
            " vacuum since they were staged?); load it again"
        )


def _finish_write(con: duckdb.DuckDBPyConnection, delivery_id: str, parts: int) -> None:
    with transaction(con):
        if parts > 1:  # a service's category is chosen among all of its rows, once every part is staged
            con.execute(load_sql("normalize/unify_service_categories.sql"), {"id": delivery_id})
        con.execute("DELETE FROM meta.delivery_repairs WHERE delivery_id = $id", {"id": delivery_id})
        con.execute(load_sql("gates/delivery_repairs.sql"), {"id": delivery_id})


def _audit(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    model: FormatModel,
    delivery_id: str,
    rules: IngestConfig,
    parts: int,
) -> DeliveryVerdict:
    """The load's own refusals and the delivery gate on the staged rows (raises on a failure); the gate's verdict."""
    _check_rows_match_manifest(con, delivery, model, delivery_id)
    _refuse_duplicate_line_items(con, delivery, model, delivery_id, parts)
    if rules.strict:
        _refuse_repairs(con, model, delivery_id)
    verdict = delivery_verdict(con, delivery_id)  # the delivery gate
    _fail_on_check_violations(con, delivery, model, delivery_id, verdict.failed_checks)
    if delivery.files:
        _reconcile(delivery, delivery_id, verdict.mismatches)
    return verdict


def _publish(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    delivery_id: str,
    stats: FileStats,
    ingested_at: dt.datetime,
    slices: Sequence[SliceKey],
) -> None:
    """One transaction: the delivery becomes the owner of its slices (their older rows become invisible)."""
    with transaction(con):
        _supersede_held(con, delivery_id)
        _take_over_slices(con, delivery, delivery_id, slices)
        _record_delivery(con, delivery, delivery_id, stats, ingested_at, PUBLISHED)
        failpoint("load:before-commit", delivery.source_name)


def _hold(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    delivery_id: str,
    stats: FileStats,
    ingested_at: dt.datetime,
    holds: Sequence[Hold],
) -> None:
    """Keep the checked rows staged, invisible, and record why they wait for ``gpuledger accept``."""
    with transaction(con):
        _supersede_held(con, delivery_id)
        _record_delivery(con, delivery, delivery_id, stats, ingested_at, HELD)
        con.execute("DELETE FROM meta.delivery_holds WHERE delivery_id = $id", {"id": delivery_id})
        for hold in holds:
            con.execute(
                "INSERT INTO meta.delivery_holds VALUES ($id, $reason, $provider, $account, $period, $detail, now(),"
                " NULL)",
                {
                    "id": delivery_id,
                    "reason": hold.reason,
                    "provider": hold.provider_name,
                    "account": hold.billing_account_id,
                    "period": hold.billing_period,
                    "detail": hold.detail,
                },
            )


def _supersede_held(con: duckdb.DuckDBPyConnection, delivery_id: str) -> None:
    """Held deliveries of the slices in ``delivery_slices`` are overtaken by this newer one: their rows go."""
    overtaken = [
        row[0]
        for row in con.execute(
            "SELECT d.delivery_id FROM meta.deliveries AS d WHERE d.state = 'held' AND d.delivery_id <> $id AND ("
            " EXISTS (SELECT 1 FROM meta.delivery_holds AS h JOIN delivery_slices AS s"
            "  ON s.ProviderName = h.provider_name AND s.BillingAccountId = h.billing_account_id"
            "  AND strftime(s.billing_month, '%Y-%m') = h.billing_period WHERE h.delivery_id = d.delivery_id)"
            " OR EXISTS (SELECT 1 FROM focus.cost_rows AS c SEMI JOIN delivery_slices AS s"
            "  USING (ProviderName, BillingAccountId, BillingPeriodStart) WHERE c.x_DeliveryId = d.delivery_id))",
            {"id": delivery_id},
        ).fetchall()
    ]
    for held in overtaken:
        con.execute("DELETE FROM focus.cost_rows WHERE x_DeliveryId = $id", {"id": held})
        con.execute("DELETE FROM meta.source_totals WHERE delivery_id = $id", {"id": held})
        con.execute("UPDATE meta.deliveries SET state = 'superseded' WHERE delivery_id = $id", {"id": held})
        log.info("held delivery %s superseded by %s", held, delivery_id)


def _insert_focus_rows(
    con: duckdb.DuckDBPyConnection,
    part: Part,
    model: FormatModel,
    raw: duckdb.DuckDBPyRelation,
    cast_columns: dict[str, str],
) -> int:
    """The part's FOCUS rows, from the source view ``create_source_view`` made (``raw``: what it read); how many."""
    params = {
        "delivery_id": part.delivery_id,
        "source_format": part.delivery.source_format,
        "ingested_at": part.ingested_at,
        "provider_name": model.provider_name,
    }
    sql = load_sql(model.model_sql)
    try:
        # a model binds the parameters it names (DuckDB refuses others)
        insert = con.execute(
            "INSERT INTO focus.cost_rows BY NAME " + _NUL_FREE_TAGS + "(\n" + sql + "\n)",
            {k: v for k, v in params.items() if f"${k}" in sql},
        )
        rows = _inserted(insert)
    except duckdb.Error as exc:
        # A separate cursor: the failed statement aborted this transaction, and diagnostics only read files.
        with con.cursor() as diagnostics:
            raise _locate_bad_input(diagnostics, part.files, raw, cast_columns, model, exc) from exc
    if part.of == 1:  # in the insert's transaction: an update of committed rows aborts other loads' inserts on a lake
        con.execute(load_sql("normalize/unify_service_categories.sql"), {"id": part.delivery_id})
    return rows


# A NUL character in a tag is removed from every format's rows, and the row flagged (normalize/macros.sql); a model
# with no tag at all may type its NULL Tags as a number.
_NUL_FREE_TAGS = (
    "SELECT * REPLACE (tags_without_nul(CAST(Tags AS VARCHAR)) AS Tags,"
    " nul_in_tags_flagged(x_SourceChanges, CAST(Tags AS VARCHAR)) AS x_SourceChanges) FROM "
)


def _locate_bad_input(
    con: duckdb.DuckDBPyConnection,
    files: Sequence[Path],
    raw: duckdb.DuckDBPyRelation,
    cast_columns: dict[str, str],
    model: FormatModel,
    exc: duckdb.Error,
) -> InputError:
    """Turn a failed cast, a missing value or an unknown value into an error naming the file, row and column."""
    if error := read_error(files, exc):  # the file itself is malformed (a quote, a row, an encoding)
        return error
    raw_types = {name: str(t) for name, t in zip(raw.columns, raw.types, strict=True)}
    empty = _NOT_NULL_FAILED.search(str(exc))
    for file in files:
        for header, sql_type in cast_columns.items():
            for predicate, problem in bad_cast_predicates(raw_types.get(header, "VARCHAR"), sql_type):
                if found := first_bad_row(con, file, header, predicate):
                    return InputError(file, f"{found[1]!r} {problem}", row=found[0], column=header)
        if empty and (error := _find_empty(con, [file], raw.columns, model, empty.group(1))):
            return error
        for canonical, allowed in model.enumerated_columns.items():
            header = aws_cur.source_column(raw.columns, canonical)
            if header is None:
                continue
            found = first_bad_row(con, file, header, "NOT list_contains($allowed, v)", {"allowed": list(allowed)})
            if found:
                return InputError(file, f"unknown value {found[1]!r}", row=found[0], column=header)
        if model.find_bad_value and (error := model.find_bad_value(con, file, raw.columns)):
            return error
    return InputError(files[0], f"cannot normalize: {describe_error(exc)}")


# DuckDB names the FOCUS column a NULL was inserted into: the source value it comes from was empty.
_NOT_NULL_FAILED = re.compile(r"NOT NULL constraint failed: cost_rows\.(\w+)")


def _find_empty(
    con: duckdb.DuckDBPyConnection, files: Sequence[Path], raw_columns: Sequence[str], model: FormatModel, column: str
) -> InputError | None:
    header = model.source_header(raw_columns, column)
    if header is None:
        return None
    found = _find_row(con, files, model, header, "nullif(trim(CAST(v AS VARCHAR)), '') IS NULL", {})
    if found is None:
        return None
    file, row, _ = found
    return InputError(file, f"is empty, but FOCUS {column} (made from it) must not be null", row=row, column=header)


def _find_row(
    con: duckdb.DuckDBPyConnection,
    files: Sequence[Path],
    model: FormatModel,
    header: str,
    predicate: str,
    params: dict[str, object],
) -> tuple[Path, int, str] | None:
    """The first source row (file, row, value) whose ``header`` satisfies ``predicate`` over ``v``."""
    if model.find_row is not None:
        return model.find_row(con, files, header, predicate, params)
    for file in files:
        if found := first_bad_row(con, file, header, predicate, params):
            return file, found[0], found[1]
    return None


def _check_rows_match_manifest(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, model: FormatModel, delivery_id: str
) -> None:
    """Rows of a manifest's delivery (or a month folder's) must belong to the account and period it names."""
    if delivery.billing_period is None:
        return
    stray = con.execute(
        "SELECT x_SourceFile, x_SourceLineItemId, BillingAccountId, strftime(billing_month(BillingPeriodStart),"
        " '%Y-%m'), BillingAccountId <> coalesce($account, BillingAccountId)"
        " FROM focus.cost_rows WHERE x_DeliveryId = $id"
        " AND (strftime(billing_month(BillingPeriodStart), '%Y-%m') <> $period"
        " OR BillingAccountId <> coalesce($account, BillingAccountId))"
        " ORDER BY x_SourceFile, x_SourceLineItemId LIMIT 1",
        {"id": delivery_id, "period": delivery.billing_period, "account": delivery.billing_account_id},
    ).fetchone()
    if stray:
        file, line_item, account, period, other_account = stray
        focus_column = "BillingAccountId" if other_account else "BillingPeriodStart"
        row = _source_row(con, model, file, line_item)
        named = delivery.manifest or "its month folder (or file name)"  # a month folder's delivery has no manifest
        delivers = f"account {delivery.billing_account_id}, " if delivery.billing_account_id else ""
        raise InputError(
            file,
            f"{'the row' if row is not None else f'line item {line_item}'} is for account {account}, period {period},"
            f" but {named} delivers {delivers}period {delivery.billing_period}",
            row=row,
            column=_column_name(con, model, file, focus_column),
        )


def _refuse_duplicate_line_items(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, model: FormatModel, delivery_id: str, parts: int
) -> None:
    """A delivery lists each line item once, under an id: a line item without one could not be told from its
    repeats, and a repeated identity (a part copied, rows doubled, the id in other letters) would count twice.
    Each part's source totals count its repeats; a line item in files of two parts has FOCUS rows in both."""
    if not model.line_item_identity:
        return
    _refuse_missing_line_item_ids(con, model, delivery_id)
    row = con.execute(
        "SELECT coalesce(sum(duplicate_line_items), 0) FROM meta.source_totals WHERE delivery_id = $id",
        {"id": delivery_id},
    ).fetchone()
    repeats = bool(row and row[0])
    if not repeats and parts > 1:
        found = con.execute(load_sql("gates/line_items_in_several_files.sql"), {"id": delivery_id}).fetchone()
        repeats = bool(found and found[0])
    if not repeats:
        return
    model.create_source_view(con, model.read_files(con, delivery.files), delivery.files)  # every part's files
    raw_columns = read_raw(con, [delivery.files[0]]).columns
    key, interval = model.line_item_identity
    columns = {alias: str(aws_cur.source_column(raw_columns, name)) for alias, name in (("k", key), ("t", interval))}
    rule = "a delivery lists each line item once (ids in any letter case are one id)"
    for file in delivery.files:  # the common case: rows repeated within one file
        if repeat := first_repeat(con, file, columns, fold_case=("k",)):
            number, first, (line_item, interval) = repeat
            message = f"line item {line_item} ({interval}) repeats row {first}: {rule}"
            raise InputError(file, message, row=number, column=columns["k"])
    line_item, time_interval, count = con.execute(  # type: ignore[misc]
        # canonical column names of the format model and the reader's view name: constants, never input
        f"SELECT lower({key}), {interval}, count(*) FROM {aws_cur.SOURCE_VIEW} GROUP BY ALL"  # noqa: S608
        " HAVING count(*) > 1 ORDER BY 3 DESC, 1, 2 LIMIT 1"
    ).fetchone()
    places = [
        (file, number)
        for file in delivery.files
        for number, _ in matching_rows(
            con, file, columns, "lower(k) = $k AND t IS NOT DISTINCT FROM $t", {"k": line_item, "t": time_interval}
        )
    ]
    where = "; ".join(f"{file} row {number}" for file, number in places)
    raise InputError(
        places[-1][0] if places else delivery.files[0],
        f"line item {line_item} ({time_interval}) is listed {count:,} times across the files ({where}): {rule}",
        row=places[-1][1] if places else None,
        column=columns["k"],
    )


def _refuse_missing_line_item_ids(con: duckdb.DuckDBPyConnection, model: FormatModel, delivery_id: str) -> None:
    """Every line item of a format with ids has one (identity is never repaired): name the first without."""
    found = con.execute(
        "SELECT x_SourceFile, count(*) OVER () FROM focus.cost_rows WHERE x_DeliveryId = $id"
        " AND x_SourceLineItemId IS NULL ORDER BY x_SourceFile LIMIT 1",
        {"id": delivery_id},
    ).fetchone()
    if found is None:
        return
    file, count = Path(found[0]), int(found[1])
    header = str(aws_cur.source_column(read_raw(con, [file]).columns, model.line_item_identity[0]))
    empty = matching_rows(con, file, {"k": header}, "nullif(trim(k), '') IS NULL")
    raise InputError(
        file,
        f"the line item has no id ({count:,} FOCUS row(s) of the delivery lack one): a line item without an id"
        " cannot be told from its repeats",
        row=empty[0][0] if empty else None,
        column=header,
    )


def _refuse_repairs(con: duckdb.DuckDBPyConnection, model: FormatModel, delivery_id: str) -> None:
    """``[ingest] strict``: a delivery whose descriptive values needed repairs is refused, naming the first."""
    found = con.execute(
        "SELECT x_SourceFile, x_SourceLineItemId, x_SourceChanges, count(*) OVER () FROM focus.cost_rows"
        " WHERE x_DeliveryId = $id AND x_SourceChanges IS NOT NULL ORDER BY x_SourceFile, x_SourceLineItemId LIMIT 1",
        {"id": delivery_id},
    ).fetchone()
    if found is None:
        return
    file, line_item, changes, count = found
    change = changes.split(",")[0]
    raise InputError(
        file,
        f"{count:,} row(s) needed repairs ([ingest] strict = true refuses them); first: line item {line_item}:"
        f" {changes} ({SOURCE_CHANGES[change].repair})",
        row=_source_row(con, model, file, line_item),
        column=_column_name(con, model, file, SOURCE_CHANGES[change].column),
    )


def _column_name(con: duckdb.DuckDBPyConnection, model: FormatModel, file: str | None, focus_column: str) -> str:
    """The source column a FOCUS column comes from, as the file spells it; the FOCUS name when none does."""
    raw_columns = read_raw(con, [Path(file)]).columns if file and model.find_row is None else []
    header = model.source_header(raw_columns, focus_column)
    return header if header is not None else f"FOCUS {focus_column}"


def _delivery_slices(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, model: FormatModel, delivery_id: str
) -> list[SliceKey]:
    """The slices the delivery replaces: those its rows are in, plus the one its manifest names (so an empty
    restatement empties its month; a provider-less format can only name the slices its rows cover)."""
    rows = con.execute(
        "SELECT DISTINCT ProviderName, BillingAccountId, BillingPeriodStart FROM focus.cost_rows"
        " WHERE x_DeliveryId = $id",
        {"id": delivery_id},
    ).fetchall()
    slices = {(str(p), str(a), s) for p, a, s in rows}
    if model.provider_name and delivery.billing_period and delivery.billing_account_id:
        slices.add(
            (model.provider_name, delivery.billing_account_id, model.billing_period_start(delivery.billing_period))
        )
    return sorted(slices)


def _take_over_slices(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, delivery_id: str, slices: Sequence[SliceKey]
) -> None:
    """Record the delivery (and its source) as the newest owner of each slice it covers: an append, no delete."""
    if not slices:
        return
    con.executemany(
        "INSERT INTO meta.slice_owners BY NAME SELECT $provider AS provider_name, $account AS billing_account_id,"
        " $start AS billing_period_start, $id AS delivery_id, now() AS replaced_at, $source AS source_name",
        [
            {"provider": p, "account": a, "start": start, "id": delivery_id, "source": delivery.source_name}
            for p, a, start in slices
        ],
    )


def _fail_on_check_violations(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    model: FormatModel,
    delivery_id: str,
    failed: Sequence[CheckResult],
) -> None:
    if not failed:
        return
    if failed[0].check == "focus_single_currency":
        _refuse_mixed_currency(con, delivery, model, delivery_id)
    first = failed[0].sample[0]
    summary = "; ".join(f"{r.check}: {r.source_rows:,} source row(s)" for r in failed)
    column = _column_name(con, model, first.source_file, first.column_name)
    row = _source_row(con, model, first.source_file, first.line_item_id)
    # the file, row and column name the line item; its id only when no row of the file could be found
    which = f" line item {first.line_item_id}" if row is None and first.line_item_id else ""
    raise InputError(
        first.source_file or delivery_id,
        f"FOCUS conformance failed ({summary}); first{which}"
        f"{'' if column.startswith('FOCUS ') else f' (FOCUS {first.column_name})'}: {first.problem}",
        row=row,
        column=column,
    )


def _refuse_mixed_currency(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, model: FormatModel, delivery_id: str
) -> None:
    """A slice bills one currency: name the first row, in file order, whose currency is not most rows' one."""
    account, period, usual, others = con.execute(  # type: ignore[misc]
        "SELECT BillingAccountId, strftime(billing_month(BillingPeriodStart), '%Y-%m'), mode(BillingCurrency),"
        " string_agg(DISTINCT BillingCurrency, ', ' ORDER BY BillingCurrency) FROM focus.cost_rows"
        " WHERE x_DeliveryId = $id GROUP BY ALL HAVING count(DISTINCT BillingCurrency) > 1 ORDER BY ALL LIMIT 1",
        {"id": delivery_id},
    ).fetchone()
    header = model.source_header(read_raw(con, [delivery.files[0]]).columns if model.find_row is None else [],
                                 "BillingCurrency")  # fmt: skip
    found = _find_row(con, delivery.files, model, header, "v <> $usual", {"usual": usual}) if header else None
    message = f"account {account} bills {period} in several currencies ({others}); most rows bill {usual}"
    if found is None:
        raise InputError(delivery.files[0], message, column=header)
    file, row, currency = found
    raise InputError(file, f"{currency!r}: {message}; sums never mix currencies", row=row, column=header)


def _source_row(
    con: duckdb.DuckDBPyConnection, model: FormatModel, source_file: str | None, line_item_id: str | None
) -> int | None:
    """Row number, in its own file, of the line item a FOCUS row came from (derived rows share their origin's)."""
    if not (source_file and line_item_id):
        return None
    if model.find_row is not None:  # GCP numbers its line items <file>:<row>
        row = origin_line_item(line_item_id).rpartition(":")[2]
        return int(row) if row.isdigit() else None
    if model.line_item_row is not None:  # Azure and FOCUS ids are made from the row's content
        return model.line_item_row(con, Path(source_file), origin_line_item(line_item_id))
    if not model.line_item_id_column:
        return None
    file = Path(source_file)
    header = aws_cur.source_column(read_raw(con, [file]).columns, model.line_item_id_column)
    if header is None:
        return None
    found = first_bad_row(con, file, header, "v = $id", {"id": origin_line_item(line_item_id)})
    return found[0] if found else None


def _reconcile(delivery: Delivery, delivery_id: str, mismatches: Sequence[tuple[object, ...]]) -> None:
    """Sums per (billing account, period, currency) must equal the source's exactly."""
    if mismatches:
        details = "; ".join(
            f"{account} {period} {currency}: source billed {sb} effective {se}, FOCUS billed {fb} effective {fe}"
            for account, period, currency, sb, se, fb, fe in mismatches
        )
        raise ReconciliationError(f"delivery {delivery_id} ({delivery.files[0]} ...) does not reconcile: {details}")


def _record_delivery(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    delivery_id: str,
    stats: FileStats,
    ingested_at: dt.datetime,
    state: str,
) -> None:
    con.execute("DELETE FROM meta.deliveries WHERE delivery_id = $id", {"id": delivery_id})
    con.execute(
        "INSERT INTO meta.deliveries BY NAME SELECT $id AS delivery_id, $source_name AS source_name,"
        " $format AS source_format, $account AS billing_account_id, $period AS billing_period, $version AS version,"
        " $manifest AS manifest, $files AS files, $bytes AS bytes, $sha256 AS content_sha256,"
        " (SELECT count(*) FROM focus.cost_rows WHERE x_DeliveryId = $id) AS focus_rows,"
        " $first AS first_ingested_at, now() AS ingested_at, $state AS state, $version_time AS version_time,"
        " $origin AS origin",
        {
            "id": delivery_id,
            "source_name": delivery.source_name,
            "format": delivery.source_format,
            "account": delivery.billing_account_id,
            "period": delivery.billing_period,
            "version": delivery.version,
            "manifest": str(delivery.manifest) if delivery.manifest else None,
            "files": [str(f) for f in delivery.files],
            "bytes": stats.bytes,
            "sha256": stats.sha256,
            "first": ingested_at,
            "state": state,
            "version_time": delivery.version_time,
            "origin": delivery.origin,
        },
    )


def _slice_totals(
    con: duckdb.DuckDBPyConnection, delivery_id: str, slices: Sequence[SliceKey]
) -> tuple[SliceTotal, ...]:
    """The delivery's own rows per slice (a slice it empties shows zero rows)."""
    stage_slices(con, slices)
    rows = con.execute(
        "SELECT s.ProviderName, s.BillingAccountId, s.BillingPeriodStart, c.BillingCurrency,"
        " count(c.BilledCost), coalesce(sum(c.BilledCost), 0), coalesce(sum(c.EffectiveCost), 0)"
        " FROM delivery_slices AS s LEFT JOIN focus.cost_rows AS c ON c.x_DeliveryId = $id"
        " AND c.ProviderName = s.ProviderName AND c.BillingAccountId = s.BillingAccountId"
        " AND c.BillingPeriodStart = s.BillingPeriodStart GROUP BY ALL ORDER BY ALL",
        {"id": delivery_id},
    ).fetchall()
    return tuple(SliceTotal(*row) for row in rows)
