"""Publishing the analyst file: only after every check passed, swapped whole, identical on reruns."""

from __future__ import annotations

import hashlib
import os
from contextlib import closing
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates import verdicts
from gpuledger.gates.verdicts import delivery_verdict, publish_blockers, record_passed_deliveries
from gpuledger.publish.snapshot import (
    ANALYST_FILE,
    PUBLISHED_FOLDER,
    PUBLISHED_TABLES,
    PublishRefused,
    crash_leftovers,
    publish,
)
from gpuledger.warehouse.home import connect_warehouse, open_warehouse
from pipelines.cli import main
from tests.end_to_end.test_crash_safety import parquet_rows

pytestmark = pytest.mark.both_warehouses


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _published(home: Path) -> dict[str, object]:
    """Every published table's rows in a fixed order (Arrow tables: compared exactly, as tuples would be) and every
    view's definition."""
    with duckdb.connect(str(home / ANALYST_FILE), read_only=True) as con:
        # table names are the module's constants
        found: dict[str, object] = {
            t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").to_arrow_table() for t in PUBLISHED_TABLES
        }
        views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE schema_name = 'views'").fetchall()
    found.update({f"views.{name}": sql for name, sql in views})
    return found


def test_published_tables_equal_the_warehouse_s(demo_home):
    with closing(connect_warehouse(demo_home, read_only=True)) as warehouse:
        expected = {t: warehouse.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in PUBLISHED_TABLES}
        money = warehouse.execute(
            "SELECT BillingCurrency, sum(BilledCost), sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    with duckdb.connect(str(demo_home / ANALYST_FILE), read_only=True) as analyst:
        assert {t: analyst.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in PUBLISHED_TABLES} == expected
        assert (
            analyst.execute(
                "SELECT BillingCurrency, sum(BilledCost), sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
            ).fetchall()
            == money
        )
        assert expected["focus.costs"] > 0 and expected["showback.team_month"] > 0
        # the analyst file holds what analysts query and the GPU catalog, not the pipeline's staging tables
        schemas = {row[0] for row in analyst.execute("SELECT DISTINCT schema_name FROM duckdb_tables()").fetchall()}
        assert schemas == {"focus", "allocation", "showback", "gpu", "meta", "chargeback", "ref", "advice"}


def test_a_failed_check_publishes_nothing_and_keeps_the_old_file(demo_copy, capsys):
    before = _file_sha(demo_copy / ANALYST_FILE)
    link = os.readlink(demo_copy / "published" / "focus")
    with closing(open_warehouse(demo_copy)) as con:
        # one split piece loses a cent: the split no longer sums to its charge
        con.execute(
            "UPDATE allocation.cost_split SET EffectiveCost = EffectiveCost - 0.01 WHERE x_SourceLineItemId ="
            " (SELECT min(x_SourceLineItemId) FROM allocation.cost_split WHERE category = 'run')"
        )
        with pytest.raises(PublishRefused, match=r"billing month 2026-1\d: allocation audits cost_split_sums"):
            publish(con, demo_copy)
    assert _file_sha(demo_copy / ANALYST_FILE) == before
    assert os.readlink(demo_copy / "published" / "focus") == link
    assert not list(demo_copy.glob(".analyst-*"))
    capsys.readouterr()
    assert main(["status", "--home", str(demo_copy)]) == 1  # the refusal is visible, with what failed
    out = capsys.readouterr().out
    assert "was refused; failed checks:" in out and "allocation audits cost_split_sums" in out
    # months as published (the demo issued October and published again)
    assert "2026-10  issued  2026-11-15" in out and "2026-11  open    2026-12-15" in out


def test_the_gate_checks_again_only_a_delivery_whose_rows_or_code_changed_and_an_edited_row_is_refused(
    demo_copy, monkeypatch
):
    checked = []

    def counted(con, delivery_id):
        checked.append(delivery_id)
        return delivery_verdict(con, delivery_id)

    monkeypatch.setattr(verdicts, "delivery_verdict", counted)
    this_code = verdicts.code_version
    with closing(open_warehouse(demo_copy)) as con:
        published = [row[0] for row in con.execute("SELECT DISTINCT delivery_id FROM meta.slices").fetchall()]
        assert publish_blockers(con) == [] and checked == []  # the demo's publishes passed every delivery as it is
        monkeypatch.setattr(verdicts, "code_version", lambda: "other code")
        assert publish_blockers(con) == [] and sorted(checked) == sorted(published)  # new code: every one again
        monkeypatch.setattr(verdicts, "code_version", this_code)
        checked.clear()
        edited, line_item = con.execute(
            "SELECT x_DeliveryId, x_SourceLineItemId FROM focus.costs ORDER BY ALL LIMIT 1"
        ).fetchone()
        # a published row edited in place: a placeholder where a name was
        con.execute(
            "UPDATE focus.cost_rows SET ServiceName = 'NULL' WHERE x_DeliveryId = $d AND x_SourceLineItemId = $l",
            {"d": edited, "l": line_item},
        )
        record_passed_deliveries(con)
        assert checked == [edited]  # checked, failed, not recorded: the gate checks it again
        assert publish_blockers(con) == [f"delivery {edited}: FOCUS checks focus_nullability"]


def test_the_replaced_parquet_folder_stays_for_its_readers_until_the_next_publish(demo_copy):
    folder = demo_copy / PUBLISHED_FOLDER
    first = (folder / "focus").resolve(strict=True)  # where a reader that started before the publishes reads
    rows = parquet_rows(first)
    with closing(open_warehouse(demo_copy)) as con:
        publish(con, demo_copy)
        second = (folder / "focus").resolve(strict=True)
        assert second != first and parquet_rows(first) == parquet_rows(second) == rows  # the reader reads on
        publish(con, demo_copy)
    third = (folder / "focus").resolve(strict=True)
    assert not first.exists() and parquet_rows(second) == parquet_rows(third) == rows
    # the published folder and the one it replaced, nothing else: no folder of every publish piling up
    assert sorted(p.name for p in folder.iterdir()) == sorted(["focus", ".previous-focus", second.name, third.name])
    assert crash_leftovers(demo_copy) == []


def test_a_rerun_publishes_identical_tables_and_cleans_crash_leftovers(demo_copy):
    assert main(["run", "--home", str(demo_copy)]) == 0  # the copy's own paths (rate source file) settle first
    before = _published(demo_copy)
    old_parquet = os.readlink(demo_copy / "published" / "focus")
    leftover = demo_copy / ".analyst-0123abcd.duckdb"  # what a publish killed before its rename leaves
    leftover.write_bytes(b"half a database")
    (demo_copy / "published" / ".focus-0123abcd").mkdir()
    assert main(["run", "--home", str(demo_copy)]) == 0
    assert _published(demo_copy) == before
    assert not leftover.exists()
    folders = sorted(p.name for p in (demo_copy / "published").iterdir())
    new_parquet = os.readlink(demo_copy / "published" / "focus")
    # the folder it replaced stays for its readers, named by .previous-focus
    assert folders == sorted([new_parquet, "focus", ".previous-focus", old_parquet]) and new_parquet != old_parquet
