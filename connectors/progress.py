"""Progress of long transfers: the connectors report what moved, the command line decides whether to draw it.

A connector wraps each download in :func:`transfer` and calls the returned ``advance(n)`` as bytes (or rows)
arrive; with no display installed (Dagster runs, tests, libraries) that is a no-op. ``gpuledger sync`` installs
a rich progress display with :func:`show_progress` when its output is a terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.text import Text

Advance = Callable[[int], None]


class _Display:
    """A progress display on one terminal, drawn only while a transfer runs (so other output is never held up)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._progress: Progress | None = None

    @contextmanager
    def task(self, label: str, total: int | None, unit: str) -> Iterator[Advance]:
        if self._progress is None:
            columns = (
                TextColumn("{task.description}", markup=False),  # blob and key names are user data, not markup
                BarColumn(),
                TaskProgressColumn(),
                _AmountColumn(),
                TimeRemainingColumn(),
            )
            self._progress = Progress(*columns, console=Console(file=self._stream), transient=True)
            self._progress.start()
        progress = self._progress
        task = progress.add_task(label, total=total, unit=unit)
        try:
            yield lambda n: progress.advance(task, n)
        finally:
            progress.refresh()  # the transfer's last state, not the last timed frame
            progress.remove_task(task)
            if not progress.tasks:
                progress.stop()
                self._progress = None


_display: ContextVar[_Display | None] = ContextVar("gpuledger_progress", default=None)


@contextmanager
def transfer(label: str, total: int | None, unit: str = "bytes") -> Iterator[Advance]:
    """Report one transfer of ``total`` ``unit`` (``bytes`` or ``rows``); yields ``advance(n)``.

    A retried transfer enters again: its bar restarts rather than counting the dropped attempt's bytes.
    """
    display = _display.get()
    if display is None:
        yield _ignore
        return
    with display.task(label, total, unit) as advance:
        yield advance


def _ignore(_: int) -> None:
    """No display installed: nothing to draw."""


@contextmanager
def show_progress(stream: IO[str]) -> Iterator[None]:
    """Draw the transfers started inside this block on ``stream`` when it is a terminal; else draw nothing."""
    token = _display.set(_Display(stream) if stream.isatty() else None)
    try:
        yield
    finally:
        _display.reset(token)


class _AmountColumn(ProgressColumn):
    """Bytes as a size and a speed; rows as ``done/total rows``."""

    def __init__(self) -> None:
        super().__init__()
        self._size, self._speed, self._rows = DownloadColumn(), TransferSpeedColumn(), MofNCompleteColumn()

    def render(self, task: Task) -> Text:
        if task.fields.get("unit") == "rows":
            return Text.assemble(self._rows.render(task), " rows")
        return Text.assemble(self._size.render(task), " ", self._speed.render(task))
