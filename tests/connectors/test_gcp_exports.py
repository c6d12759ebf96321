"""GCP extracts: a month's appended extracts form one delivery; reloading or appending never double counts."""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal
from pathlib import Path

import pytest

from connectors.gcp.exports import billing_account_from_table, discover, is_dataset, is_table
from gpuledger.gates.load import load_delivery
from gpuledger.normalize.detect import detect_format
from models.errors import InputError
from pipelines.deliveries import deliveries_for, deliveries_from_paths, load_month
from tests.conftest import focus_snapshot
from tests.fixtures.gcp_cases import (
    ACCOUNT,
    DECEMBER_BILLED,
    EVERY_CREDIT_BILLED,
    december_with_corrections,
    every_credit_type,
    standard,
    write_jsonl,
    write_parquet,
)

TABLE = "gcp_billing_export_resource_v1_01A2B3_C4D5E6_F7A8B9"


def _extract(table: Path, month: str, export_time: str, records: list[dict], *, parquet: bool = False) -> Path:
    folder = table / f"invoice_month={month}" / f"export_time={export_time}"
    folder.mkdir(parents=True, exist_ok=True)
    if parquet:
        return write_parquet(folder / "part-000000000000.parquet", records)
    return write_jsonl(folder / "part-000000000000.json.gz", records)


def _totals(con) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT strftime(BillingPeriodStart, '%Y-%m-%dT%H:%MZ'), sum(BilledCost), sum(EffectiveCost), count(*)"
        " FROM focus.costs GROUP BY ALL ORDER BY ALL"
    ).fetchall()


def test_a_months_appended_extracts_form_one_delivery_versioned_by_the_newest(tmp_path):
    table = tmp_path / "billing" / TABLE
    first = _extract(table, "202611", "2026-11-30T10:00:00Z", every_credit_type())
    appended = _extract(table, "202611", "2026-12-02T04:05:06Z", [standard(cost_type="adjustment", cost=-1.0)])
    december = _extract(table, "202612", "2026-12-03T00:00:00Z", december_with_corrections(), parquet=True)
    # an extract still being written has another name; a folder without data adds nothing
    (table / "invoice_month=202611" / "_writing-export_time=2026-12-09T00:00:00Z").mkdir()
    (table / "invoice_month=202611" / "export_time=2026-12-01T00:00:00Z").mkdir()
    assert is_table(table) and is_dataset(table.parent)
    november_delivery, december_delivery = discover(table, "gcp-bq", "gcp")
    assert november_delivery.files == (first, appended)
    assert (november_delivery.billing_period, november_delivery.billing_account_id) == ("2026-11", ACCOUNT)
    assert november_delivery.version == "2026-12-02T04:05:06.000000Z"
    assert (november_delivery.source_format, november_delivery.source_name) == ("gcp-bq", "gcp")
    assert december_delivery.files == (december,)
    assert discover(table.parent, "gcp-bq") == [
        d.__class__(**{**d.__dict__, "source_name": TABLE}) for d in (november_delivery, december_delivery)
    ]


def test_reloading_and_newer_extracts_never_double_count(con, tmp_path):
    table = tmp_path / "billing" / TABLE
    _extract(table, "202611", "2026-11-30T10:00:00Z", every_credit_type())
    _extract(table, "202612", "2026-12-03T00:00:00Z", december_with_corrections())
    for delivery in discover(table, "gcp-bq"):
        load_delivery(con, delivery)
    expected = [
        ("2026-11-01T07:00Z", EVERY_CREDIT_BILLED, EVERY_CREDIT_BILLED, 10),
        ("2026-12-01T08:00Z", DECEMBER_BILLED, DECEMBER_BILLED, 5),
    ]
    assert _totals(con) == expected
    before = focus_snapshot(con)
    assert all(load_delivery(con, d).unchanged for d in discover(table, "gcp-bq"))
    assert focus_snapshot(con) == before
    # Google appends a correction to November: the month's max(export_time) moves, a new extract appears
    appended = [standard(cost_type="adjustment", cost=-1.5, adjustment_info={"id": "late"})]
    _extract(table, "202611", "2026-12-04T00:00:00Z", appended)
    results = [load_delivery(con, d) for d in discover(table, "gcp-bq")]
    assert [r.unchanged for r in results] == [False, True]
    expected[0] = ("2026-11-01T07:00Z", EVERY_CREDIT_BILLED - Decimal("1.5"), EVERY_CREDIT_BILLED - Decimal("1.5"), 11)
    assert _totals(con) == expected
    owners = con.execute("SELECT count(*), count(DISTINCT delivery_id) FROM meta.slices").fetchone()
    assert owners == (2, 2)


def test_detailed_table_wins_over_the_standard_one_of_the_same_account(tmp_path):
    dataset = tmp_path / "billing"
    _extract(dataset / TABLE, "202611", "2026-11-30T10:00:00Z", every_credit_type())
    _extract(dataset / TABLE.replace("resource_v1", "v1"), "202611", "2026-11-30T10:00:00Z", every_credit_type())
    (delivery,) = discover(dataset, "gcp-bq")
    assert TABLE in str(delivery.files[0])
    assert discover(dataset, "gcp-focus") == []


def test_usage_day_partitions_are_refused(tmp_path):
    table = tmp_path / TABLE
    (table / "2026-11-03" / "export_time=2026-11-04T00:00:00Z").mkdir(parents=True)
    (table / "invoice_month=202611").mkdir()
    with pytest.raises(InputError, match="usage-day partitions") as caught:
        discover(table, "gcp-bq")
    assert caught.value.file == str(table / "2026-11-03")


def test_bad_export_time_is_named(tmp_path):
    table = tmp_path / TABLE
    (table / "202611" / "export_time=yesterday").mkdir(parents=True)
    with pytest.raises(InputError, match="export_time 'yesterday'"):
        discover(table, "gcp-bq")


def test_month_without_a_complete_extract_is_not_a_delivery(tmp_path, caplog):
    table = tmp_path / TABLE
    (table / "202611" / "export_time=2026-11-04T00:00:00").mkdir(parents=True)
    with caplog.at_level(logging.INFO):
        assert discover(table, "gcp-bq") == []
    assert "no complete extract" in caplog.text


@pytest.mark.parametrize(
    ("name", "account"),
    [
        (TABLE, ACCOUNT),
        ("gcp_billing_export_v1_01a2b3_c4d5e6_f7a8b9", ACCOUNT),
        ("gcp_billing_export_focus_01A2B3_C4D5E6_F7A8B9", ACCOUNT),
        ("my_export", None),
    ],
)
def test_billing_account_from_the_table_name(name, account):
    assert billing_account_from_table(name) == account


def test_export_time_without_zone_is_utc(tmp_path):
    table = tmp_path / TABLE
    _extract(table, "202611", "2026-11-30T10:00:00", every_credit_type())
    (delivery,) = discover(table, "gcp-bq")
    assert delivery.version == dt.datetime(2026, 11, 30, 10, tzinfo=dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_detects_json_lines_and_parquet_extracts(con, tmp_path):
    records = every_credit_type()
    assert detect_format(con, write_jsonl(tmp_path / "a.jsonl", records)) == "gcp-bq"
    assert detect_format(con, write_jsonl(tmp_path / "a.json.gz", records)) == "gcp-bq"
    assert detect_format(con, write_parquet(tmp_path / "a.parquet", records)) == "gcp-bq"


def test_configured_gcp_source_is_discovered_and_loaded(con, home):
    table = home / "exports" / "billing" / TABLE
    _extract(table, "202611", "2026-11-30T10:00:00Z", every_credit_type())
    (home / "gpuledger.toml").write_text(
        '[[sources]]\nname = "gcp"\nformat = "gcp-bq"\npath = "exports/billing"\n', encoding="utf-8"
    )
    (delivery,) = deliveries_for(home, "gcp", "2026-11")
    assert delivery.source_name == "gcp"
    (result,) = load_month(con, home, "gcp", "2026-11")
    assert [(s.billing_period_start, s.billed_cost) for s in result.slices] == [
        (dt.datetime(2026, 11, 1, 7, tzinfo=dt.UTC), EVERY_CREDIT_BILLED)
    ]
    assert deliveries_from_paths(con, [table], "auto") == [
        delivery.__class__(**{**delivery.__dict__, "source_name": TABLE})
    ]
