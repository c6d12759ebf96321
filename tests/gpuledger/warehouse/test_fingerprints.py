"""Fingerprints of what a step reads: the product's code and the engine that runs it are part of them; the home's place
is not (a home moved, copied or restored elsewhere keeps them)."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from gpuledger.warehouse.fingerprints import code_version, relative_path


def test_a_new_duckdb_release_changes_the_code_version(monkeypatch):
    # an engine upgrade may change results (casts, rounding): every partition runs again on the new release
    compute = code_version.__wrapped__  # uncached: the process's value is computed once
    current = compute()
    assert compute() == current == code_version()
    monkeypatch.setattr(duckdb, "__version__", "1.5.99")
    assert compute() != current


def test_a_path_below_the_home_is_named_from_it_and_any_other_in_full(tmp_path: Path):
    home = tmp_path / "home"
    assert relative_path(home, home / "exports" / "focus.csv") == "exports/focus.csv"
    # outside the home: a folder configured by absolute path, one reached through "..", a sibling named alike
    for outside in (tmp_path / "shared" / "focus.csv", home / ".." / "shared" / "focus.csv", tmp_path / "home2" / "a"):
        assert relative_path(home, outside) == os.path.abspath(outside)
