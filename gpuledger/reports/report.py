"""Issue a closed month when needed and write its reports: rendered only from the data stored with an issued
statement version (``chargeback.statements.data``), so re-rendering a version gives the same bytes forever;
figures that changed since make a new version (``gpuledger report --issue``), never an edited one. Files go to
``<home>/reports/<YYYY-MM>/v<N>/``.
"""

from __future__ import annotations

import json
import os
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from gpuledger.chargeback.months import issue_month, lifecycle_now
from gpuledger.chargeback.statement import content_sha256
from gpuledger.reports.formatting import team_slugs
from gpuledger.reports.pdf import pdf_unavailable, render_pdf
from models.billing_month import BillingMonth
from models.errors import GpuledgerError

REPORTS_FOLDER = "reports"


@dataclass(frozen=True)
class Report:
    month: str
    version: int
    issued_now: bool
    """True when this call issued the version."""
    folder: Path
    files: list[Path]
    pending_adjustments: int
    """Differences between today's figures and this version (a restatement since): ``--issue`` makes a new one."""
    publish_refused: str | None = None
    """Why the analyst file could not be published again after issuing (None: published, or nothing issued)."""

    @property
    def pdf_missing(self) -> str | None:
        """Why no PDF was written, as the one line saying what to install (None: one was)."""
        return None if any(path.suffix == ".pdf" for path in self.files) else pdf_unavailable()


def report_month(home: Path, month: str, *, team: str | None = None, issue: bool = False) -> Report:
    """Issue closed month ``YYYY-MM`` if it never was (or, with ``issue``, again when its figures changed), then
    write the reports of its latest version. Takes the home's run lock: never beside a pipeline run."""
    from gpuledger.warehouse.home import exclusive_run, open_warehouse

    with exclusive_run(home), closing(open_warehouse(home)) as con:
        start = BillingMonth.parse(month).first_day
        latest = _latest(con, start)
        issued_now = False
        if latest is None or latest[1] is None or issue:
            statement = issue_month(con, month, lifecycle_now())
            issued_now = statement.new
            latest = _latest(con, start)
        assert latest is not None
        version, text, digest = latest
        data = json.loads(text)
        if content_sha256(data) != digest:
            raise GpuledgerError(f"statement {month} v{version}: stored data does not match its SHA-256 {digest}")
        pending = con.execute(
            "SELECT count(*) FROM chargeback.adjustments WHERE billing_month = $m", {"m": start}
        ).fetchone()
        published = _republish(con, home) if issued_now else None
    folder = home / REPORTS_FOLDER / month / f"v{version}"
    files = write_reports(data, folder, stored=text.encode("utf-8"), team=team)
    return Report(month, version, issued_now, folder, files, pending[0] if pending else 0, published)


def _republish(con: duckdb.DuckDBPyConnection, home: Path) -> str | None:
    """Publish the analyst file again, so analysts see the version just issued; why not, when refused."""
    from gpuledger.publish.snapshot import PublishRefused, publish

    try:
        publish(con, home)
    except PublishRefused as exc:
        return str(exc)
    return None


def _latest(con: duckdb.DuckDBPyConnection, start: object) -> tuple[int, str | None, str] | None:
    row = con.execute(
        "SELECT version, data, content_sha256 FROM chargeback.statements WHERE billing_month = $m"
        " ORDER BY version DESC LIMIT 1",
        {"m": start},
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def write_reports(data: dict[str, Any], folder: Path, *, stored: bytes, team: str | None = None) -> list[Path]:
    """Write the reports of statement ``data`` into ``folder``; ``team`` alone (with the company summary) if given.
    Without the system libraries WeasyPrint needs there is no PDF (:func:`~gpuledger.reports.pdf.pdf_unavailable`)."""
    from gpuledger.reports.html import render_html
    from gpuledger.reports.tables import render_csv, render_xlsx

    names = [t["team"] for t in data["teams"]]
    if team is not None and team not in names:
        raise GpuledgerError(f"no team {team!r} in statement {data['month']} v{data['version']}: {', '.join(names)}")
    slugs = team_slugs(names)
    folder.mkdir(parents=True, exist_ok=True)
    stem = "index" if team is None else slugs[team]
    html = render_html(data, team=team)
    outputs: list[tuple[str, bytes]] = [("statement.json", stored), (f"{stem}.html", html.encode("utf-8"))]
    if pdf_unavailable() is None:
        outputs.append(("statement.pdf" if team is None else f"{stem}.pdf", render_pdf(html, data)))
    for section in data["teams"]:
        if team is None or section["team"] == team:
            outputs.append((f"{slugs[section['team']]}.csv", render_csv(data, section)))
            outputs.append((f"{slugs[section['team']]}.xlsx", render_xlsx(data, section)))
    return [_write(folder / name, content) for name, content in outputs]


def _write(path: Path, content: bytes) -> Path:
    """Replace ``path`` whole (a reader never sees half a file)."""
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_bytes(content)
    os.replace(temp, path)
    return path
