"""The PDF: the same statement as the HTML (text extracted with pypdf), one page break per team, deterministic."""

from __future__ import annotations

import io
import json

import pypdf
import pytest

from gpuledger.chargeback.statement import CATEGORIES, content_sha256
from gpuledger.reports.html import render_html
from gpuledger.reports.pdf import render_pdf
from tests.fixtures.report_cases import money, parse_html

pytestmark = pytest.mark.both_warehouses


def _pages(pdf: bytes) -> list[str]:
    return [" ".join(page.extract_text().split()) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def test_the_pdf_shows_each_team_s_figures_on_its_own_pages(demo_reports, showback):
    reader = pypdf.PdfReader(io.BytesIO((demo_reports / "statement.pdf").read_bytes()))
    assert reader.metadata["/CreationDate"] == reader.metadata["/ModDate"] == "D:20261202030000+00'00"
    pages = _pages((demo_reports / "statement.pdf").read_bytes())
    html = parse_html((demo_reports / "index.html").read_text(encoding="utf-8")).cells
    assert f"Company total {money(showback.company_total_from_focus())} USD" in pages[0]
    starts = [i for i, text in enumerate(pages) if text.startswith("Team ")]
    assert [pages[i].split(" — ")[0].removeprefix("Team ") for i in starts] == showback.teams
    for team, start, end in zip(showback.teams, starts, [*starts[1:], len(pages)], strict=True):
        text = " ".join(pages[start:end])
        cells = showback.expected_team_cells(team)
        assert f"Total {html[(team, 'total')]}" in text
        for key in (*CATEGORIES, "total"):  # the HTML's figures (test_report_html compares them with showback)
            assert f" {html[(team, f'catr:{key}:all')]}" in text, (team, key)
            for currency in showback.currencies(team):
                assert f" {html[(team, f'cat:{key}:{currency}')]}" in text, (team, key, currency)
        for currency in showback.currencies(team):
            assert f" {cells[f'failed:{currency}']}" in text and f" {cells[f'perrun:{currency}']}" in text
        for i in range(1, min(3, len(showback.top_jobs(team))) + 1):
            assert cells[f"job:{i}:cost"] in text


@pytest.mark.slow
def test_rendering_the_stored_data_again_gives_the_same_pdf_bytes(demo_reports):
    data = json.loads((demo_reports / "statement.json").read_bytes())
    html = render_html(data)
    assert html.encode() == (demo_reports / "index.html").read_bytes()
    assert render_pdf(html, data) == (demo_reports / "statement.pdf").read_bytes()


def test_the_pdf_reads_cleanly(demo_reports):
    data = json.loads((demo_reports / "statement.json").read_bytes())
    reader = pypdf.PdfReader(io.BytesIO((demo_reports / "statement.pdf").read_bytes()))
    pages = [page.extract_text() for page in reader.pages]
    text = "\n".join(pages)
    assert "FAILED (failed)" not in text and "TIMEOUT (failed)" in text  # the outcome only when it adds to the state
    assert "\u2013 (\u2013)" not in text and "vs 2026-09" not in text  # the demo has no September: no comparison
    assert "no figures for 2026-09 to compare with" in pages[0]
    assert "Issued 2026-12-02 03:00:00 UTC" in pages[0]
    lines = {line.strip() for line in text.splitlines()}
    assert f"Content SHA-256 {content_sha256(data)}" in lines  # the hash on one line
    assert "AWS · Amazon Simple Storage Service" in lines  # chart labels not cut
    empty = [t["team"] for t in data["teams"] if not t["top_jobs"]]
    assert empty and text.count("No jobs this month.") == len(empty)
    assert "Amounts are rounded to cents once" in text.replace("\n", " ")
    fonts = {
        str(font["/BaseFont"]).split("+")[-1]
        for page in reader.pages
        for font in page["/Resources"]["/Font"].values()
        if "/BaseFont" in font.get_object()
    }
    assert fonts and all(name.startswith("DejaVu-Sans") for name in fonts), fonts  # the footer too: no serif
    company_pages = next(i for i, page in enumerate(pages) if page.startswith("Team "))
    assert company_pages == 1  # the company summary and its note on one page


def test_a_table_split_across_pages_repeats_its_header(demo_reports):
    data = json.loads((demo_reports / "statement.json").read_bytes())
    team = next(t for t in data["teams"] if t["top_jobs"])
    team["top_jobs"] = [dict(job, job_id=f"{job['job_id']}{n}") for n in range(8) for job in team["top_jobs"]]
    data["teams"] = [team]
    pages = _pages(render_pdf(render_html(data), data))
    with_jobs = [page for page in pages if f"{team['top_jobs'][0]['cluster']}/" in page]
    assert len(with_jobs) >= 2
    assert all("Job Name User Run group State GPU-hours" in page for page in with_jobs)
