"""Transfer progress: drawn on a terminal while a transfer runs, never elsewhere."""

from __future__ import annotations

import io
import re

from connectors.progress import show_progress, transfer


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_transfer_is_drawn_on_a_terminal_with_its_amounts():
    screen = Terminal()
    with show_progress(screen):
        with transfer("s3://billing/cur/part-00001.parquet", 4 * 2**20) as advance:
            advance(2**20)
        with transfer("bigquery://p.d.t invoice_month=202611", 300, unit="rows") as advance:
            advance(120)
    drawn = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())  # without the terminal's control codes
    assert "s3://billing/cur/part-00001.parquet" in drawn and "25% 1.0/4.2 MB" in drawn
    assert "120/300 rows" in drawn


def test_names_are_drawn_as_text_not_markup():
    screen = Terminal()
    with show_progress(screen), transfer("exports/[bold]team[/bold]/part.csv", 10):
        pass
    assert "exports/[bold]team[/bold]/part.csv" in screen.getvalue()


def test_nothing_is_drawn_off_a_terminal_or_outside_show_progress():
    piped = io.StringIO()
    with show_progress(piped), transfer("part.csv", 10) as advance:
        advance(10)
    assert piped.getvalue() == ""
    with transfer("part.csv", 10) as advance:  # no display installed: a no-op, not an error
        advance(10)
