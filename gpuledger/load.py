"""Load one delivery into ``focus.costs``: write, audit, publish (docs/decisions/0003).

A slice is (ProviderName, BillingAccountId, BillingPeriodStart). The delivery's FOCUS rows are first
*written* (committed into ``focus.cost_rows`` but invisible: ``focus.costs`` shows only rows of the
deliveries that own a slice), then *audited* (conformance checks, rows match the manifest, sums equal
the source's exactly), then *published* in one small transaction that deletes the older rows of its
slices and makes this delivery their owner. A failure at any step leaves what readers see unchanged.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

import duckdb

from gpuledger.checks import run_checks
from gpuledger.errors import InputError, ReconciliationError
from gpuledger.failpoints import failpoint
from gpuledger.normalize import aws_cur, aws_focus, azure_cost_details, azure_focus, focus_passthrough, gcp_billing
from gpuledger.normalize.files import FileStats, first_bad_row, read_raw, verify_files
from gpuledger.sqlfiles import load_sql
from gpuledger.warehouse import transaction
from models.aws import AWS_PROVIDER_NAME
from models.aws_cur import LINE_ITEM_TYPES
from models.azure import CHARGE_TYPES, PRICING_MODELS
from models.delivery import Delivery
from models.focus import BILLING_MONTH_SQL
from models.gcp import GCP_PROVIDER_NAME
from models.gpu_catalog import AZURE

log = logging.getLogger(__name__)

SourceViewBuilder = Callable[[duckdb.DuckDBPyConnection, duckdb.DuckDBPyRelation, Sequence[Path]], dict[str, str]]


def _utc_month_start(period: str) -> dt.datetime:
    return dt.datetime.strptime(period, "%Y-%m").replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class FormatModel:
    """How one export format becomes FOCUS rows."""

    provider_name: str | None
    """ProviderName of the format's slices; None: several providers, named by the rows (generic FOCUS)."""
    create_source_view: SourceViewBuilder
    model_sql: str
    source_totals_sql: str
    enumerated_columns: dict[str, tuple[str, ...]]
    """Source columns with a closed set of values the model understands (checked in errors)."""
    line_item_id_column: str | None = None
    """Canonical column holding the provider's line-item id, to find a failing row in its file."""
    read_files: Callable[[duckdb.DuckDBPyConnection, Sequence[Path]], duckdb.DuckDBPyRelation] = read_raw
    """Reads the delivery's files into the relation ``create_source_view`` gets (GCP: JSON lines)."""
    billing_period_start: Callable[[str], dt.datetime] = _utc_month_start
    """A manifest's ``YYYY-MM`` as the BillingPeriodStart of its slice (GCP: the US/Pacific month start)."""
    find_bad_value: Callable[[duckdb.DuckDBPyConnection, Path, Sequence[str]], InputError | None] | None = None
    """Format-specific search for a value its view rejects beyond plain casts (Azure: dates in several formats)."""


_AWS_CUR = FormatModel(
    provider_name=AWS_PROVIDER_NAME,
    create_source_view=aws_cur.create_source_view,
    model_sql="focus/aws_cur.sql",
    source_totals_sql="reconcile/aws_cur_source_totals.sql",
    enumerated_columns={"line_item_line_item_type": LINE_ITEM_TYPES},
    line_item_id_column="identity_line_item_id",
)


def _focus_passthrough(provider_name: str | None, profile: focus_passthrough.FocusProfile) -> FormatModel:
    # One model for every FOCUS export; the profile adds what one provider's export carries.
    return FormatModel(
        provider_name=provider_name,
        create_source_view=profile.create_source_view,
        model_sql="focus/focus_passthrough.sql",
        source_totals_sql="reconcile/focus_passthrough_source_totals.sql",
        enumerated_columns={},
    )


_GCP_BQ = FormatModel(
    provider_name=GCP_PROVIDER_NAME,
    create_source_view=gcp_billing.create_source_view,
    model_sql="focus/gcp_billing_export.sql",
    source_totals_sql="reconcile/gcp_billing_source_totals.sql",
    enumerated_columns={},
    read_files=gcp_billing.read_files,
    billing_period_start=gcp_billing.billing_period_start,
)

# Google's FOCUS view, mapped back to the export's fields and read by the same model (docs/decisions/0007).
_GCP_FOCUS = replace(_GCP_BQ, create_source_view=gcp_billing.create_focus_view_source_view)


def _azure_cost_details(create_source_view: SourceViewBuilder) -> FormatModel:
    # Azure spells headers EA-style or MCA-style (camelCase): both spellings are enumerated.
    enumerated = {"ChargeType": CHARGE_TYPES, "chargeType": CHARGE_TYPES}
    enumerated |= {"PricingModel": PRICING_MODELS, "pricingModel": PRICING_MODELS}
    return FormatModel(
        provider_name=AZURE,
        create_source_view=create_source_view,
        model_sql="focus/azure_cost_details.sql",
        source_totals_sql="reconcile/azure_cost_details_source_totals.sql",
        enumerated_columns=enumerated,
        find_bad_value=azure_cost_details.find_bad_value,
    )


FORMAT_MODELS: dict[str, FormatModel] = {
    "aws-cur1": _AWS_CUR,
    "aws-cur2": _AWS_CUR,
    "aws-focus": _focus_passthrough(AWS_PROVIDER_NAME, aws_focus.PROFILE),
    "azure-focus": _focus_passthrough(AZURE, azure_focus.PROFILE),
    "focus": _focus_passthrough(None, focus_passthrough.GENERIC),
    "gcp-bq": _GCP_BQ,
    "gcp-focus": _GCP_FOCUS,
    "azure-actual": _azure_cost_details(azure_cost_details.create_actual_view),
    "azure-amortized": _azure_cost_details(azure_cost_details.create_amortized_view),
    "azure-cost-details": _azure_cost_details(azure_cost_details.create_combined_view),
    "azure-legacy": _azure_cost_details(azure_cost_details.create_legacy_view),
}


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
    """True when this exact delivery was already loaded and still owns its slices: nothing was done."""
    slices: tuple[SliceTotal, ...]


def load_delivery(con: duckdb.DuckDBPyConnection, delivery: Delivery) -> LoadResult:
    """Replace the delivery's slices in ``focus.costs`` with its rows, or change nothing and raise."""
    model = FORMAT_MODELS[delivery.source_format]
    stats = verify_files(delivery.files)
    delivery_id = delivery.delivery_id(stats.sha256)
    previous = con.execute(
        "SELECT first_ingested_at FROM meta.deliveries WHERE delivery_id = $id", {"id": delivery_id}
    ).fetchone()
    if previous and _owns_a_slice(con, delivery_id):
        return LoadResult(delivery_id, True, _slice_totals(con, delivery_id))
    ingested_at = previous[0] if previous else dt.datetime.now(dt.UTC).replace(microsecond=0)

    _discard_unpublished(con)
    _write(con, delivery, model, delivery_id, ingested_at)
    try:
        _audit(con, delivery, model, delivery_id)
    except BaseException:
        _discard_unpublished(con)
        raise
    slices = _publish(con, delivery, model, delivery_id, stats, ingested_at)
    log.info("loaded %s into %d slice(s)", delivery_id, len(slices))
    return LoadResult(delivery_id, False, _slice_totals(con, delivery_id))


def _owns_a_slice(con: duckdb.DuckDBPyConnection, delivery_id: str) -> bool:
    """A later delivery of the same slices takes them over in meta.slices; then this one owns none."""
    row = con.execute("SELECT count(*) FROM meta.slices WHERE delivery_id = $id", {"id": delivery_id}).fetchone()
    return bool(row and row[0])


def _discard_unpublished(con: duckdb.DuckDBPyConnection) -> None:
    """Drop staged rows that never got published (a failed audit, or a crash between write and publish)."""
    with transaction(con):
        con.execute("DELETE FROM focus.cost_rows WHERE x_DeliveryId NOT IN (SELECT delivery_id FROM meta.slices)")
        con.execute("DELETE FROM meta.source_totals WHERE delivery_id NOT IN (SELECT delivery_id FROM meta.slices)")


def _write(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    model: FormatModel,
    delivery_id: str,
    ingested_at: dt.datetime,
) -> None:
    """Stage the delivery's FOCUS rows and its source totals, committed but not yet visible in focus.costs."""
    if not delivery.files:
        return
    with transaction(con):
        _insert_focus_rows(con, delivery, model, delivery_id, ingested_at)
        con.execute(
            "INSERT INTO meta.source_totals SELECT $id, * FROM (" + load_sql(model.source_totals_sql) + ")",
            {"id": delivery_id},
        )


def _audit(con: duckdb.DuckDBPyConnection, delivery: Delivery, model: FormatModel, delivery_id: str) -> None:
    _check_rows_match_manifest(con, delivery, delivery_id)
    _fail_on_check_violations(con, model, delivery_id)
    if delivery.files:
        _reconcile(con, delivery, delivery_id)


def _publish(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    model: FormatModel,
    delivery_id: str,
    stats: FileStats,
    ingested_at: dt.datetime,
) -> list[tuple[str, str, dt.datetime]]:
    """One transaction: older rows of the delivery's slices go, the delivery becomes their owner."""
    with transaction(con):
        slices = _replace_slices(con, delivery, model, delivery_id)
        _record_delivery(con, delivery, delivery_id, stats, ingested_at)
        failpoint("load:before-commit")
    return slices


def _insert_focus_rows(
    con: duckdb.DuckDBPyConnection,
    delivery: Delivery,
    model: FormatModel,
    delivery_id: str,
    ingested_at: dt.datetime,
) -> None:
    raw = model.read_files(con, delivery.files)
    cast_columns = model.create_source_view(con, raw, delivery.files)
    params = {
        "delivery_id": delivery_id,
        "source_format": delivery.source_format,
        "ingested_at": ingested_at,
        "provider_name": model.provider_name,
    }
    try:
        con.execute("INSERT INTO focus.cost_rows BY NAME " + load_sql(model.model_sql), params)
    except duckdb.Error as exc:
        # A separate cursor: the failed statement aborted this transaction, and diagnostics only read files.
        with con.cursor() as diagnostics:
            raise _locate_bad_input(diagnostics, delivery.files, raw.columns, cast_columns, model, exc) from exc


def _locate_bad_input(
    con: duckdb.DuckDBPyConnection,
    files: Sequence[Path],
    raw_columns: Sequence[str],
    cast_columns: dict[str, str],
    model: FormatModel,
    exc: duckdb.Error,
) -> InputError:
    """Turn a failed cast or an unknown value into an error naming the file, row and column."""
    for file in files:
        for header, sql_type in cast_columns.items():
            text = "nullif(trim(CAST(v AS VARCHAR)), '')"
            found = first_bad_row(con, file, header, f"{text} IS NOT NULL AND TRY_CAST({text} AS {sql_type}) IS NULL")
            if found:
                return InputError(file, f"{found[1]!r} is not a valid {sql_type}", row=found[0], column=header)
        for canonical, allowed in model.enumerated_columns.items():
            header = aws_cur.source_column(raw_columns, canonical)
            if header is None:
                continue
            found = first_bad_row(con, file, header, "NOT list_contains($allowed, v)", {"allowed": list(allowed)})
            if found:
                return InputError(file, f"unknown value {found[1]!r}", row=found[0], column=header)
        if model.find_bad_value and (error := model.find_bad_value(con, file, raw_columns)):
            return error
    return InputError(files[0], f"cannot normalize: {str(exc).strip().splitlines()[0]}")


def _check_rows_match_manifest(con: duckdb.DuckDBPyConnection, delivery: Delivery, delivery_id: str) -> None:
    """Rows of a manifest's delivery must belong to the account and period the manifest names."""
    if delivery.billing_period is None:
        return
    stray = con.execute(
        f"SELECT x_SourceFile, x_SourceLineItemId, BillingAccountId, {BILLING_MONTH_SQL}"
        " FROM focus.cost_rows WHERE x_DeliveryId = $id"
        f" AND ({BILLING_MONTH_SQL} <> $period"
        " OR BillingAccountId <> coalesce($account, BillingAccountId))"
        " LIMIT 1",
        {"id": delivery_id, "period": delivery.billing_period, "account": delivery.billing_account_id},
    ).fetchone()
    if stray:
        raise InputError(
            stray[0],
            f"line item {stray[1]} is for account {stray[2]}, period {stray[3]},"
            f" but {delivery.manifest or 'the delivery'} delivers account {delivery.billing_account_id},"
            f" period {delivery.billing_period}",
            column="BillingPeriodStart",
        )


def _replace_slices(
    con: duckdb.DuckDBPyConnection, delivery: Delivery, model: FormatModel, delivery_id: str
) -> list[tuple[str, str, dt.datetime]]:
    """Delete every older row of the slices this delivery covers; record the delivery as their owner."""
    rows = con.execute(
        "SELECT DISTINCT ProviderName, BillingAccountId, BillingPeriodStart FROM focus.cost_rows"
        " WHERE x_DeliveryId = $id",
        {"id": delivery_id},
    ).fetchall()
    slices = {(str(p), str(a), s) for p, a, s in rows}
    if model.provider_name and delivery.billing_period and delivery.billing_account_id:
        # An empty restatement still replaces its period: the manifest names the slice (a provider-less
        # format can only name the slices its rows cover).
        start = model.billing_period_start(delivery.billing_period)
        slices.add((model.provider_name, delivery.billing_account_id, start))
    for provider, account, start in sorted(slices):
        key = {"provider": provider, "account": account, "start": start}
        con.execute(
            "DELETE FROM focus.cost_rows WHERE ProviderName = $provider AND BillingAccountId = $account"
            " AND BillingPeriodStart = $start AND x_DeliveryId <> $id",
            {**key, "id": delivery_id},
        )
        con.execute(
            "DELETE FROM meta.slices WHERE provider_name = $provider AND billing_account_id = $account"
            " AND billing_period_start = $start",
            key,
        )
        con.execute(
            "INSERT INTO meta.slices VALUES ($provider, $account, $start, $id, now())",
            {**key, "id": delivery_id},
        )
    return sorted(slices)


def _fail_on_check_violations(con: duckdb.DuckDBPyConnection, model: FormatModel, delivery_id: str) -> None:
    failed = [result for result in run_checks(con, delivery_id) if not result.passed]
    if not failed:
        return
    first = failed[0].sample[0]
    summary = "; ".join(f"{r.check}: {r.violations} row(s)" for r in failed)
    raise InputError(
        first.source_file or delivery_id,
        f"FOCUS conformance failed ({summary}); first: line item {first.line_item_id}: {first.problem}",
        row=_source_row(con, model, first.source_file, first.line_item_id),
        column=first.column_name,
    )


def _source_row(
    con: duckdb.DuckDBPyConnection, model: FormatModel, source_file: str | None, line_item_id: str | None
) -> int | None:
    """Row number, in its own file, of the line item a FOCUS row came from (derived rows share their origin's)."""
    if not (model.line_item_id_column and source_file and line_item_id):
        return None
    file = Path(source_file)
    header = aws_cur.source_column(read_raw(con, [file]).columns, model.line_item_id_column)
    if header is None:
        return None
    found = first_bad_row(con, file, header, "v = $id", {"id": line_item_id.removesuffix("/unused")})
    return found[0] if found else None


def _reconcile(con: duckdb.DuckDBPyConnection, delivery: Delivery, delivery_id: str) -> None:
    """Sums per (billing account, period, currency) must equal the source's exactly."""
    mismatches = con.execute(load_sql("reconcile/focus_vs_source.sql"), {"id": delivery_id}).fetchall()
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
) -> None:
    con.execute("DELETE FROM meta.deliveries WHERE delivery_id = $id", {"id": delivery_id})
    con.execute(
        "INSERT INTO meta.deliveries SELECT $id, $source_name, $format, $account, $period, $version, $manifest,"
        " $files, $bytes, $sha256, (SELECT count(*) FROM focus.cost_rows WHERE x_DeliveryId = $id), $first, now()",
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
        },
    )


def _slice_totals(con: duckdb.DuckDBPyConnection, delivery_id: str) -> tuple[SliceTotal, ...]:
    rows = con.execute(
        "SELECT s.provider_name, s.billing_account_id, s.billing_period_start, c.BillingCurrency,"
        " count(c.BilledCost), coalesce(sum(c.BilledCost), 0), coalesce(sum(c.EffectiveCost), 0)"
        " FROM meta.slices s LEFT JOIN focus.costs c ON c.ProviderName = s.provider_name"
        " AND c.BillingAccountId = s.billing_account_id AND c.BillingPeriodStart = s.billing_period_start"
        " WHERE s.delivery_id = $id GROUP BY ALL ORDER BY ALL",
        {"id": delivery_id},
    ).fetchall()
    return tuple(SliceTotal(*row) for row in rows)
