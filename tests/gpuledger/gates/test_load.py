"""Slice replacement: a newer delivery replaces the old one for its period, never adds to it."""

from __future__ import annotations

import datetime as dt
import json
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from connectors.aws.exports import discover_cur1
from gpuledger.gates.load import accept_delivery, finish_load, load_delivery, plan_load, plan_parts, stage_part
from gpuledger.gates.vacuum import vacuum
from gpuledger.gates.verdicts import delivery_verdict
from gpuledger.normalize.files import verify_files
from gpuledger.normalize.formats import FORMAT_MODELS
from gpuledger.warehouse.home import open_warehouse
from models.delivery import Delivery
from models.errors import GpuledgerError, InputError
from tests.conftest import focus_snapshot
from tests.fixtures.azure_cases import EA_HEADER, ea_actual, write_csv
from tests.fixtures.cur_cases import EXPECTED_BILLED, PAYER, every_line_item_type, write_cur1_csv

pytestmark = pytest.mark.both_warehouses


def _deliver(report: Path, assembly: str, rows: list[dict[str, str]]) -> None:
    """A CUR 1 assembly for 2026-11 and the period manifest pointing at it (as AWS writes them)."""
    period = report / "20261101-20261201"
    write_cur1_csv(period / assembly / "helios-1.csv.gz", rows)
    manifest = {
        "assemblyId": assembly,
        "account": PAYER,
        "reportKeys": [f"cur/helios/20261101-20261201/{assembly}/helios-1.csv.gz"],
    }
    (period / "helios-Manifest.json").write_text(json.dumps(manifest))


def _billed(con) -> Decimal:
    row = con.execute("SELECT coalesce(sum(BilledCost), 0) FROM focus.costs").fetchone()
    return row[0]


def test_restating_delivery_replaces_the_period(con, tmp_path):
    report = tmp_path / "helios"
    _deliver(report, "a1", every_line_item_type())
    (first,) = discover_cur1(report)
    load_delivery(con, first)
    assert _billed(con) == EXPECTED_BILLED

    restated = every_line_item_type()
    restated.append(
        restated[0]
        | {"identity/LineItemId": "late", "lineItem/UnblendedCost": "-7.5", "lineItem/LineItemType": "Credit"}
    )
    _deliver(report, "a2", restated)
    (second,) = discover_cur1(report)
    assert second.version == "a2"
    load_delivery(con, second)
    assert _billed(con) == EXPECTED_BILLED - Decimal("7.5")
    (owner,) = con.execute("SELECT DISTINCT x_DeliveryId FROM focus.costs").fetchall()
    assert owner[0].startswith("aws-cur1:012345678901:2026-11:a2:")
    # loading appended: the first delivery's rows are still stored, invisible, until the vacuum removes them
    (earlier,) = con.execute(
        "SELECT count(*) FROM focus.cost_rows WHERE x_DeliveryId <> $owner", {"owner": owner[0]}
    ).fetchone()
    assert earlier > len(every_line_item_type())  # every line item, and the split ones' parts
    assert vacuum(con, lease=dt.timedelta(hours=1)).rows == 0  # younger than the lease: kept
    removed = vacuum(con, lease=dt.timedelta(0))
    assert (removed.deliveries, removed.slices, removed.rows) == (1, 1, earlier)
    assert con.execute("SELECT DISTINCT x_DeliveryId FROM focus.cost_rows").fetchall() == [owner]
    assert _billed(con) == EXPECTED_BILLED - Decimal("7.5")


def test_empty_restatement_is_held_and_empties_its_period_once_accepted(con, tmp_path):
    report = tmp_path / "helios"
    _deliver(report, "a1", every_line_item_type())
    load_delivery(con, discover_cur1(report)[0])
    _deliver(report, "a2", [])
    held = load_delivery(con, discover_cur1(report)[0])
    assert [(h.reason, h.billing_period) for h in held.holds] == [("empty_slice", "2026-11")]
    assert _billed(con) == EXPECTED_BILLED
    assert load_delivery(con, discover_cur1(report)[0]).unchanged  # still held, nothing done again
    accept_delivery(con, held.delivery_id)
    result = load_delivery(con, discover_cur1(report)[0])
    assert not result.held and _billed(con) == 0
    (emptied,) = result.slices
    assert (emptied.billing_account_id, emptied.rows) == (PAYER, 0)


def test_a_load_carries_the_verdict_its_audit_reached_and_it_is_the_gate_s_verdict_on_its_rows(con, tmp_path):
    # the ingestion step's asset checks report it instead of running every check again on the same rows
    report = tmp_path / "helios"
    _deliver(report, "a1", every_line_item_type())
    published = load_delivery(con, discover_cur1(report)[0])
    assert published.verdict is not None and published.verdict.passed
    assert published.verdict == delivery_verdict(con, published.delivery_id)
    assert load_delivery(con, discover_cur1(report)[0]).verdict is None  # unchanged: nothing audited
    _deliver(report, "a2", [])
    held = load_delivery(con, discover_cur1(report)[0])
    assert held.held and held.verdict == delivery_verdict(con, held.delivery_id)


def test_first_empty_delivery_of_a_slice_loads_as_zero_rows(con, tmp_path):
    report = tmp_path / "helios"
    _deliver(report, "a1", [])
    result = load_delivery(con, discover_cur1(report)[0])
    assert not result.held
    (empty,) = result.slices
    assert (empty.billing_account_id, empty.rows, empty.billed_cost) == (PAYER, 0, 0)


def test_rows_outside_the_manifest_period_are_refused(con, tmp_path):
    report = tmp_path / "helios"
    rows = every_line_item_type()
    rows[0] = rows[0] | {
        "bill/BillingPeriodStartDate": "2026-10-01T00:00:00.000Z",
        "bill/BillingPeriodEndDate": "2026-11-01T00:00:00.000Z",
        "lineItem/UsageStartDate": "2026-10-03T00:00:00Z",
        "lineItem/UsageEndDate": "2026-10-03T01:00:00Z",
    }
    _deliver(report, "a1", rows)
    with pytest.raises(InputError, match="manifest"):
        load_delivery(con, discover_cur1(report)[0])
    assert focus_snapshot(con).num_rows == 0


def test_failed_restatement_leaves_the_published_slice_intact(con, tmp_path):
    report = tmp_path / "helios"
    _deliver(report, "a1", every_line_item_type())
    load_delivery(con, discover_cur1(report)[0])
    before = focus_snapshot(con)
    bad = every_line_item_type()
    bad[5] = bad[5] | {"lineItem/UnblendedCost": "n/a"}
    _deliver(report, "a2", bad)
    with pytest.raises(InputError, match="row 6"):
        load_delivery(con, discover_cur1(report)[0])
    assert focus_snapshot(con) == before
    assert con.execute("SELECT DISTINCT delivery_id FROM meta.slices").fetchall() == [
        (con.execute("SELECT delivery_id FROM meta.deliveries").fetchone()[0],)
    ]


def test_rows_staged_by_a_crashed_run_stay_invisible_and_are_discarded(con, tmp_path):
    report = tmp_path / "helios"
    _deliver(report, "a1", every_line_item_type())
    load_delivery(con, discover_cur1(report)[0])
    published = focus_snapshot(con)
    _deliver(report, "a2", every_line_item_type()[::-1])  # the same charges in another order
    crashed = discover_cur1(report)[0]
    model = FORMAT_MODELS["aws-cur1"]
    crashed_id = crashed.delivery_id(verify_files(crashed.files, crashed.root, model.extract_of).sha256)
    # runs that wrote their rows and died before publishing: this delivery's own, and one of a delivery never retried
    for staged_id in (crashed_id, "never-retried"):
        for part in plan_parts(crashed, staged_id, dt.datetime(2026, 12, 1, tzinfo=dt.UTC), None):
            stage_part(con, part)
    staged = (
        "SELECT x_DeliveryId, count(*) FROM focus.cost_rows WHERE x_DeliveryId IN ($id, 'never-retried') GROUP BY 1"
    )
    assert dict(con.execute(staged, {"id": crashed_id}).fetchall()) == {crashed_id: 19, "never-retried": 19}
    assert focus_snapshot(con) == published
    load_delivery(con, crashed)  # the retry replaces its own leftovers and touches nobody else's
    assert dict(con.execute(staged, {"id": crashed_id}).fetchall()) == {crashed_id: 19, "never-retried": 19}
    assert con.execute("SELECT count(*) FROM focus.costs").fetchone() == (19,)
    vacuum(con, lease=dt.timedelta(0))  # the other leftovers and the superseded delivery's rows go
    assert dict(con.execute(staged, {"id": crashed_id}).fetchall()) == {crashed_id: 19}
    assert con.execute("SELECT count(*) FROM focus.cost_rows").fetchone() == (19,)
    assert con.execute(
        "SELECT count(*) FROM meta.source_totals WHERE delivery_id <> $id", {"id": crashed_id}
    ).fetchone() == (0,)


def test_failed_audit_leaves_no_staged_rows(con, tmp_path):
    rows = every_line_item_type()
    rows[0] = rows[0] | {"lineItem/UsageAmount": ""}  # a Usage row without quantity breaks FOCUS nullability
    bad = write_cur1_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(InputError, match="focus_nullability") as caught:
        load_delivery(con, Delivery("aws-cur1", (bad,)))
    # the file's own column is named, with the FOCUS column made from it
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(bad), 1, "lineItem/UsageAmount")
    assert "(FOCUS ConsumedQuantity)" in caught.value.reason
    assert con.execute("SELECT count(*) FROM focus.cost_rows").fetchone() == (0,)


# --- a delivery staged in parts (docs/decisions/0021) ---------------------------------------------------------------


def _cur_in_three_files(folder: Path) -> Delivery:
    """Every line item type over three files; one product under two codes (two categories) in two of them."""
    rows = every_line_item_type()
    for row, code in zip(rows[:2], ("AmazonEC2", "5bctyqvmoe4a8c3f7gbrd8tsk"), strict=True):
        row.update({"product/ProductName": "Red Hat Enterprise Linux 7", "lineItem/ProductCode": code})
    files = [write_cur1_csv(folder / f"helios-{n}.csv.gz", rows[n - 1 :: 3]) for n in (1, 2, 3)]
    return Delivery("aws-cur1", tuple(files))


def _azure_in_two_files(folder: Path) -> Delivery:
    """EA actual cost over two files; one row repeated in its own file and in the other (identical rows are
    legitimate in Azure's exports)."""
    rows = ea_actual()
    first = write_csv(folder / "part_0_0001.csv", [*rows[::2], rows[0]], EA_HEADER)
    second = write_csv(folder / "part_0_0002.csv", [*rows[1::2], rows[0]], EA_HEADER)
    return Delivery("azure-actual", (first, second))


@pytest.mark.parametrize("make", [_cur_in_three_files, _azure_in_two_files], ids=["aws-cur1", "azure-actual"])
def test_a_delivery_staged_a_part_per_file_has_the_rows_it_has_staged_whole(tmp_path, make):
    delivery = make(tmp_path / "export")
    seen = {}
    for grouping, part_bytes in (("whole", None), ("part-per-file", 0)):
        (home := tmp_path / grouping).mkdir()
        with closing(open_warehouse(home)) as con:
            result = load_delivery(con, delivery, part_bytes=part_bytes)
            assert not result.held
            parts = con.execute(
                "SELECT count(DISTINCT part), bool_and(staged_at > staging_started_at) FROM meta.source_totals"
            ).fetchone()
            assert parts == (1 if part_bytes is None else len(delivery.files), True)  # each part took its time
            seen[grouping] = (
                focus_rows(con),
                con.execute("SELECT change, rows FROM meta.delivery_repairs ORDER BY ALL").fetchall(),
                result.slices,
            )
            # one category per service over the delivery, though each part saw one of the product's two codes
            categories = con.execute(
                "SELECT count(DISTINCT ServiceCategory) FROM focus.costs GROUP BY ServiceName ORDER BY 1 DESC LIMIT 1"
            ).fetchone()
            assert categories == (1,)
            # the reader's views are the session's own, never stored in the warehouse (on a lake: in its catalog)
            stored = "SELECT view_name FROM duckdb_views() WHERE NOT temporary AND schema_name = 'main'"
            assert con.execute(stored).fetchall() == []
    assert seen["part-per-file"] == seen["whole"]
    rows = [tuple(row.values()) for row in seen["whole"][0].to_pylist()]
    assert len(rows) == len(set(rows))  # no row lost to another's identity, none twice


def test_a_line_item_in_files_of_two_parts_is_refused_and_nothing_stays_staged(con, tmp_path):
    rows = every_line_item_type()
    first = write_cur1_csv(tmp_path / "helios-1.csv.gz", rows)
    second = write_cur1_csv(tmp_path / "helios-2.csv.gz", rows[1:2])  # a line item of the first file again
    with pytest.raises(InputError, match=r"line item u2 \(.*\) is listed 2 times across the files") as caught:
        load_delivery(con, Delivery("aws-cur1", (first, second)), part_bytes=0)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(second), 1, "identity/LineItemId")
    assert con.execute("SELECT count(*) FROM focus.cost_rows").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM meta.source_totals").fetchone() == (0,)


def test_a_part_staged_again_replaces_what_its_earlier_attempt_committed(con, tmp_path):
    delivery = _cur_in_three_files(tmp_path / "export")
    planned = plan_load(con, delivery, part_bytes=0)
    staged = {part.number: stage_part(con, part) for part in planned.parts}
    # part 2's step killed after its commit and run again (no new plan): its rows once, not twice
    staged[2] = stage_part(con, planned.parts[1])
    result = finish_load(con, planned, stager=lambda parts: list(staged.values()))
    assert not result.held
    (whole := tmp_path / "whole").mkdir()
    with closing(open_warehouse(whole)) as reference:
        load_delivery(reference, delivery)
        assert focus_rows(con) == focus_rows(reference)
    totals = con.execute("SELECT count(*) FROM meta.source_totals WHERE part = 2").fetchone()
    assert totals == (staged[2].source_totals,)


def focus_rows(con) -> pa.Table:
    return con.execute("SELECT * EXCLUDE (x_IngestedAt) FROM focus.costs ORDER BY ALL").to_arrow_table()


@pytest.mark.parametrize("loss", ["part never staged", "rows vacuumed since"])
def test_a_delivery_missing_a_staged_part_is_refused_and_nothing_is_published(con, tmp_path, loss):
    delivery = _cur_in_three_files(tmp_path / "export")
    planned = plan_load(con, delivery, part_bytes=0)
    staged = [stage_part(con, part) for part in planned.parts]
    if loss == "part never staged":
        staged, expected = staged[:2], "part.s. 3 of 3 not staged"
    else:  # what the vacuum removes of a delivery nobody owns yet: all of a part's rows
        con.execute("DELETE FROM focus.cost_rows WHERE x_SourceFile = $file", {"file": str(planned.parts[0].files[0])})
        expected = "the warehouse holds"
    with pytest.raises(GpuledgerError, match=expected):
        finish_load(con, planned, stager=lambda parts: staged)
    assert con.execute("SELECT count(*) FROM focus.costs").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM focus.cost_rows").fetchone() == (0,)  # its staged rows discarded
    assert con.execute("SELECT count(*) FROM meta.deliveries").fetchone() == (0,)
