"""The billing month is one rule: the Python type and the SQL macro agree, and nothing else spells the window."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from gpuledger.warehouse.database import connect
from models.billing_month import BillingMonth
from tests.fixtures.paths import REPO, tracked_files

# Spellings of the billing-month window or of month arithmetic done by hand.
HAND_MADE = re.compile(
    r"INTERVAL '?1[24] ?HOURS?'?|hours=1[24]\b|\* 12 \+|\.month % 12|month // 12|\) % 12|monthrange|%Y-%m-01"
    r"|strptime\([^)]*%Y-%m\"\)",
    re.IGNORECASE,
)
THE_RULE = {"models/billing_month.py", "sql/normalize/billing_month.sql"}


def test_the_window_is_spelled_only_where_the_rule_lives() -> None:
    product = [p for p in tracked_files("*.py", "*.sql") if not p.startswith(("tests/", "bench/", "tools/"))]
    spelled = {p for p in product if HAND_MADE.search((REPO / p).read_text(encoding="utf-8"))}
    assert spelled == THE_RULE, sorted(spelled ^ THE_RULE)


@pytest.mark.parametrize("offset_hours", [-12, -8, 0, 1, 9, 14])
def test_python_and_sql_put_every_time_zones_period_start_in_the_same_month(tmp_path, offset_hours) -> None:
    with connect(tmp_path / "w.duckdb") as con:
        for month in (BillingMonth(2026, 1), BillingMonth(2026, 11), BillingMonth(2026, 12)):
            start = month.start - timedelta(hours=offset_hours)  # local midnight of the 1st at UTC+offset
            sql_month = con.execute("SELECT billing_month($s)", {"s": start}).fetchone()[0]
            assert BillingMonth.of_period_start(start) == month == BillingMonth.of_day(sql_month)


def test_month_arithmetic() -> None:
    december = BillingMonth.parse("2026-12")
    assert str(december.next()) == "2027-01" and str(BillingMonth.parse("2027-01").previous()) == "2026-12"
    assert december.start == datetime(2026, 12, 1, tzinfo=UTC) and december.end == datetime(2027, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="not a billing month"):
        BillingMonth.parse("2026-13")
