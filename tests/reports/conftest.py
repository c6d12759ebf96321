"""Fixtures of the report tests: the reports `gpuledger demo` wrote for its closed October, and its showback."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_cases import MONTH, Showback


@pytest.fixture(scope="session")
def demo_reports(demo_home: Path) -> Path:
    """``<demo home>/reports/2026-10/v1``: written by the demo, never changed by a test."""
    return demo_home / "reports" / MONTH / "v1"


@pytest.fixture(scope="session")
def showback(demo_home: Path) -> Showback:
    return Showback(demo_home)
