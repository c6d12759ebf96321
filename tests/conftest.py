"""Shared fixtures: a fresh warehouse per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from gpuledger.pipeline import open_warehouse


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def con(home: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_warehouse(home)
    yield connection
    connection.close()


def focus_snapshot(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """Every stored FOCUS row, in a stable order, for before/after comparisons."""
    return con.execute("SELECT * FROM focus.costs ORDER BY ALL").fetchall()
