"""The PDF: the same statement as the HTML (text extracted with pypdf), one page break per team, deterministic."""

from __future__ import annotations

import io
import json

import pypdf

from gpuledger.chargeback.statement import CATEGORIES
from gpuledger.reports.html import render_html
from gpuledger.reports.pdf import render_pdf
from tests.fixtures.report_cases import money


def _pages(pdf: bytes) -> list[str]:
    return [" ".join(page.extract_text().split()) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def test_the_pdf_shows_each_team_s_figures_on_its_own_pages(demo_reports, showback):
    reader = pypdf.PdfReader(io.BytesIO((demo_reports / "statement.pdf").read_bytes()))
    assert reader.metadata["/CreationDate"] == reader.metadata["/ModDate"] == "D:20261202030000+00'00"
    pages = _pages((demo_reports / "statement.pdf").read_bytes())
    assert f"Company total {money(showback.company_total_from_focus())} USD" in pages[0]
    starts = [i for i, text in enumerate(pages) if text.startswith("Team ")]
    assert [pages[i].split(" — ")[0].removeprefix("Team ") for i in starts] == showback.teams
    for team, start, end in zip(showback.teams, starts, [*starts[1:], len(pages)], strict=True):
        text = " ".join(pages[start:end])
        cells = showback.expected_team_cells(team)
        assert f"Total {cells['total']}" in text
        for key in (*CATEGORIES, "total"):
            assert f" {cells[f'catr:{key}:all']}" in text, (team, key)
            for currency in showback.currencies(team):
                assert f" {cells[f'cat:{key}:{currency}']}" in text, (team, key, currency)
        for currency in showback.currencies(team):
            assert f" {cells[f'failed:{currency}']}" in text and f" {cells[f'perrun:{currency}']}" in text
        for i in range(1, min(3, len(showback.top_jobs(team))) + 1):
            assert cells[f"job:{i}:cost"] in text


def test_rendering_the_stored_data_again_gives_the_same_pdf_bytes(demo_reports):
    data = json.loads((demo_reports / "statement.json").read_bytes())
    html = render_html(data)
    assert html.encode() == (demo_reports / "index.html").read_bytes()
    assert render_pdf(html, data) == (demo_reports / "statement.pdf").read_bytes()
