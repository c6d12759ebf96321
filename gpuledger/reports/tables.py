"""Per-team tables for finance systems: one CSV and one XLSX per team, the same rows (one per amount or
quantity of the statement), rendered only from stored statement data. Each row says its ``kind``: the
components of ``cost_by_category`` add up exactly to its subtotals and total in the printed cents (``amount``,
``amount_reporting``, rounded as the report prints them); the ``_exact`` columns keep the stored precision.

Team names, job names, services and the like are user-controlled: a CSV cell of text starting with
``= + - @``, TAB or CR gets a leading apostrophe (spreadsheets would run it as a formula); an XLSX cell of text
is always written as a string, never a formula. The same data gives the same bytes: the XLSX's document
properties carry the issue time and its ZIP entries a fixed timestamp."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from gpuledger.chargeback.statement import CATEGORIES, CATEGORY_LABELS
from gpuledger.reports.charts import WEEKDAYS
from gpuledger.reports.figures import IDLE, statement_figures
from gpuledger.reports.footing import rounded

COLUMNS = (
    "month",
    "statement_version",
    "team",
    "section",
    "kind",
    "item",
    "detail",
    "currency",
    "amount",
    "amount_exact",
    "reporting_currency",
    "exchange_rate",
    "amount_reporting",
    "amount_reporting_exact",
    "quantity",
    "unit",
)
NUMERIC = {
    "statement_version",
    "amount",
    "amount_exact",
    "exchange_rate",
    "amount_reporting",
    "amount_reporting_exact",
    "quantity",
}
MONEY = ("amount", "amount_reporting")
"""Rounded to cents as the report prints them (the components of a section foot to its total)."""
EXACT = ("amount_exact", "amount_reporting_exact")
"""As stored with the statement (10 decimals)."""
KINDS = ("component", "subtotal", "total", "measure")
"""component: a part of the team's cost (summed per currency, or all in the reporting currency, they give the
total); subtotal: a sum of components (idle, a currency's total, a category over all currencies); total: the
team's cost; measure: a figure on its own (usage, cost measures, listings, comparisons), never added to the rest."""
COST = "cost_by_category"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
_IDLE_DETAIL = " + ".join(IDLE)


def team_rows(data: dict[str, Any], team: dict[str, Any]) -> list[dict[str, Any]]:
    """The finance rows of one team's statement section: ``amount`` and ``amount_reporting`` rounded to cents as the
    report prints them (the components of ``cost_by_category`` add up exactly to their subtotals and total), the
    ``_exact`` columns as stored; decimal strings, ints and text."""
    reporting = data["reporting_currency"]
    shown = statement_figures(data).teams[team["team"]]
    base = {"month": data["month"], "statement_version": data["version"], "team": team["team"]}
    rows: list[dict[str, Any]] = []

    def add(section: str, kind: str, item: str, **values: Any) -> None:
        row = {**dict.fromkeys(COLUMNS), **base, "section": section, "kind": kind, "item": item, **values}
        rows.append({key: _text(value) for key, value in row.items()})

    def measure(
        section: str, item: str, *, amount: str | None = None, reported: str | None = None, **values: Any
    ) -> None:
        add(
            section,
            "measure",
            item,
            amount=_rounded(amount),
            amount_exact=amount,
            amount_reporting=_rounded(reported),
            amount_reporting_exact=reported,
            **values,
        )

    converted = shown.total is not None
    for line in team["lines"]:
        money = {"currency": line["currency"], "reporting_currency": reporting, "exchange_rate": line["exchange_rate"]}
        source, in_reporting = shown.source[line["currency"]], shown.reporting.get(line["currency"])
        for key in (*CATEGORIES, "idle", "total"):
            kind = "component" if key in CATEGORIES else "subtotal" if key == "idle" or converted else "total"
            add(
                COST,
                kind,
                key,
                detail=_IDLE_DETAIL if key == "idle" else None,
                amount=source.amounts[key],
                amount_exact=line["amounts"][key],
                amount_reporting=in_reporting.amounts[key] if in_reporting else None,
                amount_reporting_exact=line["reporting"][key] if in_reporting else None,
                **money,
            )
    if shown.total is not None:
        for key in (*CATEGORIES, "idle", "total"):
            add(
                COST,
                "total" if key == "total" else "subtotal",
                key,
                detail="all source currencies",
                reporting_currency=reporting,
                amount_reporting=shown.total.amounts[key],
                amount_reporting_exact=team["reporting_totals"][key],
            )
    for line in team["lines"]:
        for key in ("billed", "failed_run", "cost_per_completed_run"):
            reported = line["reporting"][key] if line["reporting"] else None
            measure(
                "cost_measure",
                key,
                amount=line["amounts"][key],
                reported=reported,
                currency=line["currency"],
                reporting_currency=reporting,
                exchange_rate=line["exchange_rate"],
            )
        for key, unit in (
            ("gpu_hours", "GPU-hours"),
            ("active_gpu_hours", "GPU-hours"),
            ("failed_jobs", "jobs"),
            ("completed_runs", "runs"),
        ):
            measure("usage", key, currency=line["currency"], quantity=line[key], unit=unit)
    if team["reporting_totals"] is not None:
        for key in ("billed", "failed_run"):
            measure(
                "cost_measure",
                key,
                reported=team["reporting_totals"][key],
                detail="all source currencies",
                reporting_currency=reporting,
            )
    measure("usage", "mean_gpu_utilization", quantity=team["mean_gpu_utilization"], unit="ratio")
    measure("usage", "idle_share", quantity=team["idle_share"], unit="ratio")
    if shown.previous_total is not None:
        previous = team["previous"]
        measure(
            "month_over_month",
            data["previous_month"],
            reported=previous["total_reporting"],
            reporting_currency=reporting,
            detail=(
                f"total of the month before as charged on its statement version {data['previous_month_statement']}"
                if data["previous_month_statement"]
                else "total of the month before as it stands today (not issued)"
            ),
        )
        add(
            "month_over_month",
            "measure",
            "change",
            detail=f"{data['month']} total less {data['previous_month']} total",
            reporting_currency=reporting,
            amount_reporting=shown.change,
            amount_reporting_exact=previous["change_reporting"],
        )
    for p in team["providers"]:
        measure(
            "provider_service",
            p["provider"],
            detail=p["service"],
            currency=p["currency"],
            amount=p["cost"],
            reporting_currency=reporting,
            reported=p["cost_reporting"],
        )
    for j in team["top_jobs"]:
        measure(
            "job",
            f"{j['cluster']}/{j['job_id']}",
            detail=j["name"],
            currency=j["currency"],
            amount=j["total_cost"],
            reporting_currency=reporting,
            reported=j["total_cost_reporting"],
            quantity=j["gpu_hours"],
            unit="GPU-hours",
        )
    for g in team["run_groups"]:
        money = {"currency": g["currency"], "reporting_currency": reporting, "detail": g["cluster"]}
        measure(
            "run_group",
            g["run_group"],
            amount=g["month_cost"],
            reported=g["month_cost_reporting"],
            quantity=g["attempts"],
            unit="attempts",
            **money,
        )
    for g in team["run_groups"]:
        if g["cost_to_finish"] is not None:
            measure(
                "run_group_cost_to_finish",
                g["run_group"],
                amount=g["cost_to_finish"],
                reported=g["cost_to_finish_reporting"],
                currency=g["currency"],
                reporting_currency=reporting,
                detail=g["cluster"],
            )
    for a in data["adjustments"]:
        if a["team"] == team["team"]:
            measure(
                f"adjustment_{a['kind']}",
                a["restated_month"],
                detail=f"issued version {a['statement_version']}",
                currency=a["currency"],
                amount=a["adjustment"],
                reporting_currency=reporting,
                exchange_rate=a["exchange_rate"],
                reported=a["adjustment_reporting"],
            )
    heat = team["idle_heatmap"]
    for day in range(7):
        for hour in range(24):
            measure(
                "idle_hour_of_week",
                WEEKDAYS[day],
                detail=f"{hour:02d}:00 UTC",
                reporting_currency=reporting,
                reported=heat["idle_cost_reporting"][day][hour],
                quantity=heat["idle_gpu_hours"][day][hour],
                unit="idle GPU-hours",
            )
    return rows


def _rounded(value: str | None) -> Decimal | None:
    return None if value is None else rounded(Decimal(value))


def _text(value: object) -> object:
    return format(value, "f") if isinstance(value, Decimal) else value


def neutralize(text: str) -> str:
    """A CSV cell that a spreadsheet reads as text, never as a formula (OWASP CSV injection)."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def render_csv(data: dict[str, Any], team: dict[str, Any]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for row in team_rows(data, team):
        writer.writerow([_csv_cell(column, row[column]) for column in COLUMNS])
    return out.getvalue().encode("utf-8")


def _csv_cell(column: str, value: object) -> str:
    if value is None:
        return ""
    if column in NUMERIC:
        return str(value)
    return neutralize(str(value))


def render_xlsx(data: dict[str, Any], team: dict[str, Any]) -> bytes:
    """The team's workbook: a ``summary`` sheet (its cost by category, as the report prints it), then one sheet per
    section holding that section's CSV rows. Money in cents as numbers (``#,##0.00``), exact amounts as text."""
    from openpyxl import Workbook
    from openpyxl.writer.excel import ExcelWriter

    issued = datetime.fromisoformat(data["issued_at"]).astimezone(UTC).replace(tzinfo=None)
    book = Workbook()
    book.properties.created = issued
    book.properties.modified = issued
    book.properties.creator = "gpuledger"
    book.properties.title = f"Chargeback {data['month']} v{data['version']}"
    summary = book.active
    summary.title = "summary"
    _summary(summary, data, team)
    sections: dict[str, list[dict[str, Any]]] = {}
    for row in team_rows(data, team):
        sections.setdefault(row["section"], []).append(row)
    for section, rows in sections.items():
        sheet = book.create_sheet(section[:31])
        sheet.append(list(COLUMNS))
        for number, row in enumerate(rows, start=2):
            for col, column in enumerate(COLUMNS, start=1):
                if row[column] is not None:
                    _set(sheet.cell(row=number, column=col), row[column], column)
        _fit(sheet)
        sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    with _FixedTimeZip(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(book, archive).write_data()
    return buffer.getvalue()


SUMMARY_HEADER_ROW = 4
"""The summary sheet's category table starts on this row (its header), the categories below it, then Total."""


def _summary(sheet: Any, data: dict[str, Any], team: dict[str, Any]) -> None:
    reporting = data["reporting_currency"]
    shown = statement_figures(data).teams[team["team"]]
    columns: list[tuple[str, dict[str, Decimal]]] = []
    for line in team["lines"]:
        currency = line["currency"] or "(none)"
        columns.append((currency, shown.source[line["currency"]].amounts))
        if shown.total is not None and line["currency"] != reporting:
            columns.append((f"{currency} in {reporting}", shown.reporting[line["currency"]].amounts))
    if shown.total is not None:
        columns.append((f"Total {reporting}", shown.total.amounts))
    _set(sheet.cell(row=1, column=1), f"Chargeback {data['month']} v{data['version']}: team {team['team']}", "")
    _set(sheet.cell(row=2, column=1), SUMMARY_NOTE, "")
    header = ["Category", *(name for name, _ in columns)]
    for col, name in enumerate(header, start=1):
        _set(sheet.cell(row=SUMMARY_HEADER_ROW, column=col), name, "")
    for number, key in enumerate((*CATEGORIES, "total"), start=SUMMARY_HEADER_ROW + 1):
        _set(sheet.cell(row=number, column=1), CATEGORY_LABELS.get(key, "Total"), "")
        for col, (_, amounts) in enumerate(columns, start=2):
            _set(sheet.cell(row=number, column=col), amounts[key], "amount")
    for col in range(1, len(header) + 1):
        letter = sheet.cell(row=SUMMARY_HEADER_ROW, column=col).column_letter
        sheet.column_dimensions[letter].width = 30 if col == 1 else max(16, len(header[col - 1]) + 2)


SUMMARY_NOTE = (
    "Rounded to cents so that the table adds up: each total is the exact total rounded half away from zero, its"
    " lines share its cents by largest remainder. Exact amounts: the amount_exact columns of the other sheets."
)


def _set(cell: Any, value: object, column: str) -> None:
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    if column in NUMERIC and column not in EXACT:
        cell.value = Decimal(str(value)) if column != "statement_version" else value
        if column in MONEY:
            cell.number_format = "#,##0.00"
    else:  # text (user-controlled, or an exact amount kept exact): a string cell, never a formula
        cell.value = ILLEGAL_CHARACTERS_RE.sub("\ufffd", str(value))
        cell.data_type = "s"


def _fit(sheet: Any) -> None:
    """Column widths from the longest value shown (within bounds)."""
    for cells in sheet.iter_cols():
        longest = max(
            len(f"{c.value:,.2f}" if c.number_format == "#,##0.00" else str(c.value))
            for c in cells
            if c.value is not None
        )
        sheet.column_dimensions[cells[0].column_letter].width = min(max(longest + 2, 8), 60)


class _FixedTimeZip(zipfile.ZipFile):
    """A ZIP whose entries all carry the same timestamp (DOS times have no zone: the bytes would vary)."""

    def writestr(self, zinfo_or_arcname: Any, data: Any, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        if not isinstance(zinfo_or_arcname, zipfile.ZipInfo):
            zinfo_or_arcname = zipfile.ZipInfo(zinfo_or_arcname, date_time=_ZIP_TIME)
            zinfo_or_arcname.compress_type = self.compression
        super().writestr(zinfo_or_arcname, data, *args, **kwargs)

    def write(self, filename: Any, arcname: Any = None, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        with open(filename, "rb") as handle:  # openpyxl writes worksheets through temporary files
            self.writestr(str(arcname or filename), handle.read())
