"""Per-team tables for finance systems: one CSV and one XLSX per team, the same rows (one per amount or
quantity of the statement, at the stored precision), rendered only from stored statement data.

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

from gpuledger.chargeback.statement import AMOUNTS
from gpuledger.reports.charts import WEEKDAYS

COLUMNS = (
    "month",
    "statement_version",
    "team",
    "section",
    "item",
    "detail",
    "currency",
    "amount",
    "reporting_currency",
    "exchange_rate",
    "amount_reporting",
    "quantity",
    "unit",
)
NUMERIC = {"statement_version", "amount", "exchange_rate", "amount_reporting", "quantity"}
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def team_rows(data: dict[str, Any], team: dict[str, Any]) -> list[dict[str, Any]]:
    """The finance rows of one team's statement section (values as stored: decimal strings, ints, text)."""
    reporting = data["reporting_currency"]
    base = {"month": data["month"], "statement_version": data["version"], "team": team["team"]}
    rows: list[dict[str, Any]] = []

    def add(section: str, item: str, **values: Any) -> None:
        rows.append({**dict.fromkeys(COLUMNS), **base, "section": section, "item": item, **values})

    for line in team["lines"]:
        money = {"currency": line["currency"], "reporting_currency": reporting, "exchange_rate": line["exchange_rate"]}
        for key in AMOUNTS:
            reported = line["reporting"][key] if line["reporting"] else None
            add("amount", key, amount=line["amounts"][key], amount_reporting=reported, **money)
        add("usage", "gpu_hours", currency=line["currency"], quantity=line["gpu_hours"], unit="GPU-hours")
        add("usage", "active_gpu_hours", currency=line["currency"], quantity=line["active_gpu_hours"], unit="GPU-hours")
        add("usage", "failed_jobs", currency=line["currency"], quantity=line["failed_jobs"], unit="jobs")
        add("usage", "completed_runs", currency=line["currency"], quantity=line["completed_runs"], unit="runs")
    if team["reporting_totals"] is not None:
        for key, value in team["reporting_totals"].items():
            add("reporting_total", key, reporting_currency=reporting, amount_reporting=value)
    add("usage", "mean_gpu_utilization", quantity=team["mean_gpu_utilization"], unit="ratio")
    add("usage", "idle_share", quantity=team["idle_share"], unit="ratio")
    previous = team["previous"]
    add(
        "month_over_month",
        data["previous_month"],
        reporting_currency=reporting,
        amount_reporting=previous["total_reporting"],
        detail=(
            f"total of the month before as charged on its statement version {data['previous_month_statement']}"
            if data["previous_month_statement"]
            else "total of the month before as it stands today (not issued)"
        ),
    )
    for p in team["providers"]:
        add(
            "provider_service",
            p["provider"],
            detail=p["service"],
            currency=p["currency"],
            amount=p["cost"],
            reporting_currency=reporting,
            amount_reporting=p["cost_reporting"],
        )
    for j in team["top_jobs"]:
        add(
            "job",
            f"{j['cluster']}/{j['job_id']}",
            detail=j["name"],
            currency=j["currency"],
            amount=j["total_cost"],
            reporting_currency=reporting,
            amount_reporting=j["total_cost_reporting"],
            quantity=j["gpu_hours"],
            unit="GPU-hours",
        )
    for g in team["run_groups"]:
        money = {"currency": g["currency"], "reporting_currency": reporting}
        add("run_group", g["run_group"], detail=g["cluster"], amount=g["month_cost"],
            amount_reporting=g["month_cost_reporting"], quantity=g["attempts"], unit="attempts", **money)  # fmt: skip
        if g["cost_to_finish"] is not None:
            add("run_group_cost_to_finish", g["run_group"], detail=g["cluster"], amount=g["cost_to_finish"],
                amount_reporting=g["cost_to_finish_reporting"], **money)  # fmt: skip
    for a in data["adjustments"]:
        if a["team"] == team["team"]:
            add(
                f"adjustment_{a['kind']}",
                a["restated_month"],
                detail=f"issued version {a['statement_version']}",
                currency=a["currency"],
                amount=a["adjustment"],
                reporting_currency=reporting,
                exchange_rate=a["exchange_rate"],
                amount_reporting=a["adjustment_reporting"],
            )
    heat = team["idle_heatmap"]
    for day in range(7):
        for hour in range(24):
            add(
                "idle_hour_of_week",
                WEEKDAYS[day],
                detail=f"{hour:02d}:00 UTC",
                reporting_currency=reporting,
                amount_reporting=heat["idle_cost_reporting"][day][hour],
                quantity=heat["idle_gpu_hours"][day][hour],
                unit="idle GPU-hours",
            )
    return rows


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
    from openpyxl import Workbook
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    from openpyxl.writer.excel import ExcelWriter

    issued = datetime.fromisoformat(data["issued_at"]).astimezone(UTC).replace(tzinfo=None)
    book = Workbook()
    book.properties.created = issued
    book.properties.modified = issued
    book.properties.creator = "gpuledger"
    book.properties.title = f"Chargeback {data['month']} v{data['version']}"
    sheet = book.active
    sheet.title = "statement"
    sheet.append(list(COLUMNS))
    for number, row in enumerate(team_rows(data, team), start=2):
        for col, column in enumerate(COLUMNS, start=1):
            value = row[column]
            if value is None:
                continue
            cell = sheet.cell(row=number, column=col)
            if column in NUMERIC:
                cell.value = Decimal(str(value)) if column != "statement_version" else value
                if column in ("amount", "amount_reporting"):
                    cell.number_format = "#,##0.00########"
            else:  # user-controlled text: a string cell, never a formula
                cell.value = ILLEGAL_CHARACTERS_RE.sub("\ufffd", str(value))
                cell.data_type = "s"
    sheet.freeze_panes = "A2"
    buffer = io.BytesIO()
    with _FixedTimeZip(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(book, archive).write_data()
    return buffer.getvalue()


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
