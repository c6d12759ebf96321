"""What makes a partition stale beyond its own inputs: the product's code and the engine that runs it."""

from __future__ import annotations

import duckdb

from pipelines.inputs import code_version


def test_a_new_duckdb_release_changes_the_code_version(monkeypatch):
    # an engine upgrade may change results (casts, rounding): every partition runs again on the new release
    compute = code_version.__wrapped__  # uncached: the process's value is computed once
    current = compute()
    assert compute() == current == code_version()
    monkeypatch.setattr(duckdb, "__version__", "1.5.99")
    assert compute() != current
