"""The billing month stored on the split's rows: written by the split, and filled in on warehouses made before it."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from gpuledger.warehouse.home import connect_warehouse, open_warehouse

_MONTHS = (
    "SELECT billing_month, count(*) FILTER (WHERE billing_month IS DISTINCT FROM billing_month(BillingPeriodStart))"
    " FROM allocation.cost_split GROUP BY ALL ORDER BY ALL"
)


def test_a_warehouse_made_before_the_column_gains_it_filled_by_the_one_rule(demo_copy: Path) -> None:
    with closing(connect_warehouse(demo_copy)) as con:
        split = con.execute(_MONTHS).fetchall()
        con.execute("ALTER TABLE allocation.cost_split DROP COLUMN billing_month")
        con.execute("DROP TABLE meta.schema_version")  # made by a version before schema fingerprints, too
    assert [str(month) for month, _ in split] == ["2026-10-01", "2026-11-01"]
    assert {wrong for _, wrong in split} == {0}
    with closing(open_warehouse(demo_copy)) as con:
        assert con.execute(_MONTHS).fetchall() == split
