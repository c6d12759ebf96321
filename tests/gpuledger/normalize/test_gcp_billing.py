"""GCP Cloud Billing export (BigQuery extracts) -> FOCUS 1.2: credits, corrections, Pacific periods, bad input."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates.checks import run_checks
from gpuledger.gates.load import LoadResult, load_delivery
from gpuledger.normalize.gcp_billing import billing_period_start, read_files
from models.delivery import Delivery
from models.errors import InputError
from tests.conftest import focus_snapshot, validate_warehouse
from tests.fixtures.gcp_cases import (
    ACCOUNT,
    DECEMBER_BILLED,
    EVERY_CREDIT_BILLED,
    EVERY_CREDIT_ROWS,
    MACHINE,
    PROJECT,
    VM,
    as_focus_view,
    december_with_corrections,
    every_credit_type,
    record,
    standard,
    storage,
    write_jsonl,
    write_parquet,
)

UTC = dt.UTC


def _load(con: duckdb.DuckDBPyConnection, *paths: Path) -> LoadResult:
    return load_delivery(con, Delivery("gcp-bq", tuple(paths)))


def _totals(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """(account, period start, currency, billed, effective) per slice, as readers see them."""
    return con.execute(
        "SELECT BillingAccountId, BillingPeriodStart, BillingCurrency, sum(BilledCost), sum(EffectiveCost)"
        " FROM focus.costs GROUP BY ALL ORDER BY ALL"
    ).fetchall()


def _row(con: duckdb.DuckDBPyConnection, line_item: str, columns: str) -> tuple[object, ...]:
    found = con.execute(f"SELECT {columns} FROM focus.costs WHERE x_SourceLineItemId = $id", {"id": line_item})
    row = found.fetchone()
    assert row is not None, line_item
    return row


def _source_totals(records: list[dict]) -> Decimal:
    """sum(cost) + sum(credits.amount), computed in Python from the records themselves."""
    total = Decimal(0)
    for r in records:
        total += Decimal(str(r["cost"]))
        total += sum((Decimal(str(c["amount"])) for c in r.get("credits") or []), Decimal(0))
    return total


NOV_START = dt.datetime(2026, 11, 1, 7, tzinfo=UTC)
DEC_START = dt.datetime(2026, 12, 1, 8, tzinfo=UTC)


def test_every_credit_type_reconciles_to_the_cent(con, tmp_path):
    records = every_credit_type()
    assert _source_totals(records) == EVERY_CREDIT_BILLED
    result = _load(con, write_jsonl(tmp_path / "nov.jsonl", records))
    assert _totals(con) == [(ACCOUNT, NOV_START, "USD", EVERY_CREDIT_BILLED, EVERY_CREDIT_BILLED)]
    (only_slice,) = result.slices
    assert (only_slice.provider_name, only_slice.billing_period_start) == ("Google Cloud", NOV_START)
    assert (only_slice.rows, only_slice.billed_cost) == (EVERY_CREDIT_ROWS, EVERY_CREDIT_BILLED)
    source = con.execute("SELECT billed_cost, effective_cost, source_rows FROM meta.source_totals").fetchall()
    assert source == [(EVERY_CREDIT_BILLED, EVERY_CREDIT_BILLED, len(records))]


def test_credits_reduce_their_row_and_promotions_become_credit_rows(con, tmp_path):
    _load(con, write_jsonl(tmp_path / "nov.jsonl", every_credit_type()))
    columns = "ChargeCategory, ChargeClass, BilledCost, EffectiveCost, PricingCategory, ChargeFrequency"
    # committed use discount: on the row, priced Committed
    assert _row(con, "nov.jsonl:1", columns) == (
        "Usage",
        None,
        Decimal("38.49"),
        Decimal("38.49"),
        "Committed",
        "Usage-Based",
    )
    assert _row(con, "nov.jsonl:2", columns)[2:5] == (Decimal("7"), Decimal("7"), "Standard")
    assert _row(con, "nov.jsonl:3", columns)[2:5] == (Decimal("0"), Decimal("0"), "Committed")
    # the hourly commitment fee is usage of its commitment SKU, billed as it accrues (nothing to amortize)
    fee = ("Usage", None, Decimal("29.75"), Decimal("29.75"), "Committed", "Recurring")
    assert _row(con, "nov.jsonl:4", columns) == fee
    assert _row(con, "nov.jsonl:5", columns)[2:4] == (Decimal("12"), Decimal("12"))
    assert _row(con, "nov.jsonl:6", columns)[2:4] == (Decimal("3"), Decimal("3"))
    # the promotion is its own Credit row: EffectiveCost = BilledCost, no unit pricing
    credit = _row(con, "nov.jsonl:6/credit/3", columns + ", ListCost, SkuId, PricingQuantity, ChargeDescription")
    assert credit == (
        "Credit",
        None,
        Decimal("-5"),
        Decimal("-5"),
        None,
        "One-Time",
        Decimal("-5"),
        None,
        None,
        "Free trial credit",
    )
    # a discount larger than the cost is never clamped at zero
    assert _row(con, "nov.jsonl:7", columns)[2:4] == (Decimal("-0.5"), Decimal("-0.5"))
    tax = _row(con, "nov.jsonl:8", "ChargeCategory, SkuId, PricingQuantity, ListUnitPrice, SubAccountId, BilledCost")
    assert tax == ("Tax", None, None, None, None, Decimal("5"))
    assert _row(con, "nov.jsonl:9", "ChargeCategory, BilledCost") == ("Adjustment", Decimal("-0.004"))


def test_a_committed_use_discount_is_named_on_its_fee_and_on_the_usage_it_covers(con, tmp_path):
    commitment = {"instance_id": "projects/ml/regions/us-central1/commitments/h100-1y"}
    fee_sku = {"id": "CMT-H100-0001", "description": "Commitment v1: Nvidia H100 80GB GPU in Americas for 1 Year"}
    records = [
        record(
            credits=[
                {"name": "CUD", "amount": -50.0, "full_name": None, "id": "CUD", "type": "COMMITTED_USAGE_DISCOUNT"}
            ],
            subscription=commitment,
        ),
        record(sku=fee_sku, subscription=commitment),
        record(subscription=commitment),  # a subscription without a commitment fee or credit names none
        record(
            credits=[
                {"name": "CUD", "amount": -50.0, "full_name": None, "id": "CUD", "type": "COMMITTED_USAGE_DISCOUNT"}
            ]
        ),  # no instance id
        standard(sku=fee_sku),  # the standard export has no subscription
    ]
    _load(con, write_jsonl(tmp_path / "nov.jsonl", records))
    named = [_row(con, f"nov.jsonl:{n}", "x_CommitmentId, CommitmentDiscountId")[0] for n in range(1, 6)]
    assert named == [commitment["instance_id"], commitment["instance_id"], None, None, None]
    assert con.execute("SELECT count(CommitmentDiscountId) FROM focus.costs").fetchone() == (0,)  # 1.2 unchanged


def test_every_loaded_row_passes_the_strict_checks(con, tmp_path):
    _load(con, write_jsonl(tmp_path / "nov.jsonl", every_credit_type()))
    _load(con, write_jsonl(tmp_path / "dec.jsonl", december_with_corrections()))
    failed = [r for r in run_checks(con) if not r.passed]
    assert failed == []


@pytest.mark.parametrize(
    ("month", "start", "end"),
    [
        ("202611", dt.datetime(2026, 11, 1, 7, tzinfo=UTC), dt.datetime(2026, 12, 1, 8, tzinfo=UTC)),
        ("202603", dt.datetime(2026, 3, 1, 8, tzinfo=UTC), dt.datetime(2026, 4, 1, 7, tzinfo=UTC)),
        ("202612", dt.datetime(2026, 12, 1, 8, tzinfo=UTC), dt.datetime(2027, 1, 1, 8, tzinfo=UTC)),
    ],
)
def test_billing_period_is_the_pacific_invoice_month_in_utc(con, tmp_path, month, start, end):
    row = record(
        invoice={"month": month},
        usage_start_time=start.strftime("%Y-%m-%d %H:%M:%S UTC"),
        usage_end_time=(start + dt.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )
    _load(con, write_jsonl(tmp_path / "m.jsonl", [row]))
    periods = con.execute("SELECT BillingPeriodStart, BillingPeriodEnd, ChargeClass, x_InvoiceMonth FROM focus.costs")
    assert periods.fetchall() == [(start, end, None, month)]
    assert billing_period_start(f"{month[:4]}-{month[4:]}") == start


def test_usage_on_the_pacific_month_edge_belongs_to_the_earlier_invoice(con, tmp_path):
    # 2026-11-01 06:00Z is October 31, 23:00 in California: October's invoice, not a correction
    row = record(
        invoice={"month": "202610"},
        usage_start_time="2026-11-01 06:00:00 UTC",
        usage_end_time="2026-11-01 07:00:00 UTC",
    )
    _load(con, write_jsonl(tmp_path / "edge.jsonl", [row]))
    periods = con.execute("SELECT BillingPeriodStart, BillingPeriodEnd, ChargeClass FROM focus.costs").fetchall()
    assert periods == [(dt.datetime(2026, 10, 1, 7, tzinfo=UTC), NOV_START, None)]


def test_corrections_billed_in_a_later_invoice_month(con, tmp_path):
    _load(con, write_jsonl(tmp_path / "nov.jsonl", every_credit_type()))
    _load(con, write_jsonl(tmp_path / "dec.jsonl", december_with_corrections()))
    assert _totals(con) == [
        (ACCOUNT, NOV_START, "USD", EVERY_CREDIT_BILLED, EVERY_CREDIT_BILLED),
        (ACCOUNT, DEC_START, "USD", DECEMBER_BILLED, DECEMBER_BILLED),
    ]
    columns = "ChargeCategory, ChargeClass, BilledCost, BillingPeriodStart, ChargePeriodStart"
    nov_hour = dt.datetime(2026, 11, 3, 10, tzinfo=UTC)
    assert _row(con, "dec.jsonl:1", columns) == ("Adjustment", "Correction", Decimal("-38.49"), DEC_START, nov_hour)
    assert _row(con, "dec.jsonl:2", columns) == ("Adjustment", "Correction", Decimal("30"), DEC_START, nov_hour)
    # usage reported late (November 30 in California) corrects November's invoice too
    assert _row(con, "dec.jsonl:3", columns)[:3] == ("Usage", "Correction", Decimal("1.25"))
    assert _row(con, "dec.jsonl:4", columns)[:2] == ("Usage", None)
    goodwill = _row(con, "dec.jsonl:5", columns + ", ChargeDescription, ChargeFrequency")
    assert goodwill[:3] == ("Adjustment", None, Decimal("-2"))
    assert goodwill[5:] == ("Goodwill", "One-Time")


def test_tags_ids_resource_and_instance_type(con, tmp_path):
    _load(con, write_jsonl(tmp_path / "nov.jsonl", [record(), standard(labels=[])]))
    columns = (
        "Tags, SubAccountId, SubAccountName, SubAccountType, ResourceId, ResourceName, ResourceType, x_InstanceType,"
        " SkuPriceDetails, x_ServiceCode, x_UsageType, x_SourceVersion, RegionId, RegionName, AvailabilityZone,"
        " ConsumedQuantity, ConsumedUnit, ServiceCategory, ServiceSubcategory, BillingAccountType"
    )
    detailed = _row(con, "nov.jsonl:1", columns)
    assert json.loads(str(detailed[0])) == {
        "123456789012/env": "prod",
        "compute.googleapis.com/cores": "208",
        "compute.googleapis.com/machine_spec": MACHINE,
        "cost-center": "cc-7",
        "spot-ok": True,
        "team": "ml",
    }
    assert list(json.loads(str(detailed[0]))) == sorted(json.loads(str(detailed[0])))
    assert detailed[1:] == (
        PROJECT,
        "ML training (prod)",
        "Project",
        VM,
        "trainer-0",
        "compute.googleapis.com/instances",
        MACHINE,
        json.dumps({"InstanceType": MACHINE}, separators=(",", ":")),
        "6F81-5844-456A",
        "Nvidia H100 80GB GPU running in Americas",
        "gcp_billing_export_resource_v1",
        "us-central1",
        "Iowa",
        "us-central1-a",
        Decimal("3600"),
        "Seconds",
        "Compute",
        "Virtual Machines",
        "Billing Account",
    )
    plain = _row(con, "nov.jsonl:2", columns)
    # without resource labels, the project's labels are inherited
    assert json.loads(str(plain[0]))["team"] == "research"
    assert (plain[4], plain[5], plain[6], plain[11]) == (None, None, None, "gcp_billing_export_v1")


def test_empty_arrays_objects_and_missing_project(con, tmp_path):
    row = standard(
        credits=[],
        labels=[],
        system_labels=[],
        tags=[],
        adjustment_info={},
        project=None,
        location={},
        sku={"id": "E8A1-0001-A3GP", "description": "Some SKU"},
    )
    _load(con, write_jsonl(tmp_path / "empty.jsonl", [row]))
    found = con.execute("SELECT Tags, SubAccountId, SubAccountName, RegionId, BilledCost, ChargeClass FROM focus.costs")
    assert found.fetchall() == [(None, None, None, None, Decimal("88.49"), None)]


def test_parquet_and_gzip_extracts_give_the_same_rows(con, tmp_path):
    records = every_credit_type()
    json_result = _load(con, write_jsonl(tmp_path / "nov.jsonl", records))
    # a Parquet file has one schema, so its table kind (x_SourceVersion) is the file's, not the record's
    columns = (
        "* EXCLUDE (x_DeliveryId, x_SourceFile, x_SourceLineItemId, x_IngestedAt, x_SourceFormat, x_SourceVersion)"
    )
    from_json = con.execute(f"SELECT {columns} FROM focus.costs ORDER BY ALL").fetchall()
    for path in (write_parquet(tmp_path / "nov.parquet", records), write_jsonl(tmp_path / "nov.json.gz", records)):
        result = _load(con, path)
        assert not result.unchanged
        assert con.execute(f"SELECT {columns} FROM focus.costs ORDER BY ALL").fetchall() == from_json
    assert result.slices == json_result.slices


def test_a_parquet_extract_is_read_from_its_typed_columns_not_through_json(con, tmp_path):
    path = write_parquet(tmp_path / "nov.parquet", every_credit_type())
    read_files(con, [path])
    lines, records = con.execute(
        "SELECT (SELECT count(*) FROM gcp_bq_lines), count(*) FROM gcp_bq_parquet_records"
    ).fetchone()
    assert (lines, records) == (0, len(every_credit_type()))


def test_a_parquet_file_of_another_shape_is_checked_record_by_record(con, tmp_path):
    records = every_credit_type()
    path = write_parquet(tmp_path / "odd.parquet", records)
    with duckdb.connect() as scratch:  # credits flattened to text: not the export's schema
        scratch.execute(
            f"COPY (SELECT * REPLACE (CAST(credits AS VARCHAR) AS credits) FROM read_parquet('{path}'))"
            f" TO '{tmp_path / 'flat.parquet'}' (FORMAT parquet)"
        )
    with pytest.raises(InputError, match="expected a JSON array, found varchar") as caught:
        _load(con, tmp_path / "flat.parquet")
    first_with_credits = next(i for i, r in enumerate(records, start=1) if r.get("credits"))
    assert (caught.value.row, caught.value.column) == (first_with_credits, "credits")


def test_records_a_json_extract_delivered_count_once_when_a_parquet_extract_repeats_them(con, tmp_path):
    records = every_credit_type()
    first = tmp_path / "export_time=2026-12-01T03:00:00Z"
    later = tmp_path / "export_time=2026-12-02T03:00:00Z"
    first.mkdir()
    later.mkdir()
    # written outside the extract folder: reading it back there would take export_time from the folder name
    parquet = write_parquet(tmp_path / "part-000.parquet", records).rename(later / "part-000.parquet")
    files = (write_jsonl(first / "part-000.jsonl", records), parquet)
    load_delivery(con, Delivery("gcp-bq", files))
    assert _totals(con) == [(ACCOUNT, NOV_START, "USD", EVERY_CREDIT_BILLED, EVERY_CREDIT_BILLED)]
    assert con.execute("SELECT count(*) FROM focus.costs").fetchone() == (EVERY_CREDIT_ROWS,)


def test_numbers_as_strings_read_like_numbers(con, tmp_path):
    as_numbers = storage(cost=12.5, cost_at_list=12.5, usage={**storage()["usage"], "amount_in_pricing_units": 0.625})
    as_numbers["labels"] = [{"key": "spelled", "value": "as numbers"}]  # else its twin: held as listed twice
    _load(con, write_jsonl(tmp_path / "a.jsonl", [storage(), as_numbers]))
    rows = con.execute("SELECT BilledCost, ListCost, PricingQuantity, ConsumedQuantity FROM focus.costs").fetchall()
    assert rows[0] == rows[1] == (Decimal("12.5"), Decimal("12.5"), Decimal("0.625"), Decimal("1649267441664000"))


def test_reimport_is_a_no_op_and_a_newer_export_replaces_the_month(con, tmp_path):
    first = write_jsonl(tmp_path / "v1" / "part-000.jsonl", _mkdir(tmp_path / "v1", every_credit_type()))
    result = load_delivery(con, Delivery("gcp-bq", (first,), "2026-11", ACCOUNT, "2026-11-04T00:00:00Z"))
    before = focus_snapshot(con)
    again = load_delivery(con, Delivery("gcp-bq", (first,), "2026-11", ACCOUNT, "2026-11-04T00:00:00Z"))
    assert again.unchanged and focus_snapshot(con) == before
    # the next extract of the month holds every earlier row plus an appended correction
    appended = [*every_credit_type(), standard(cost_type="adjustment", cost=-1.0, adjustment_info={"id": "a"})]
    newer = write_jsonl(tmp_path / "v2" / "part-000.jsonl", _mkdir(tmp_path / "v2", appended))
    replaced = load_delivery(con, Delivery("gcp-bq", (newer,), "2026-11", ACCOUNT, "2026-11-05T00:00:00Z"))
    assert _totals(con) == [(ACCOUNT, NOV_START, "USD", EVERY_CREDIT_BILLED - 1, EVERY_CREDIT_BILLED - 1)]
    assert [s.billing_period_start for s in replaced.slices] == [NOV_START]
    assert con.execute("SELECT count(*) FROM meta.slices").fetchone() == (1,)
    assert result.delivery_id != replaced.delivery_id


def test_rows_of_another_invoice_month_than_the_delivery_names_are_refused(con, tmp_path):
    path = write_jsonl(tmp_path / "dec.jsonl", december_with_corrections())
    with pytest.raises(InputError, match="period 2026-12"):
        load_delivery(con, Delivery("gcp-bq", (path,), "2026-11", ACCOUNT, "v1"))
    assert focus_snapshot(con).num_rows == 0


def _mkdir(folder: Path, records: list[dict]) -> list[dict]:
    folder.mkdir(parents=True, exist_ok=True)
    return records


def _malformed(path: Path) -> None:
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:40]
    path.write_text("\n".join(lines) + "\n")


def _records_with(index: int, **changes: object) -> list[dict]:
    records = every_credit_type()
    records[index].update(changes)
    return records


def _without(key: str) -> list[dict]:
    records = every_credit_type()
    for r in records:
        r.pop(key)
    return records


BAD_INPUTS = {
    "malformed line": (every_credit_type(), _malformed, 2, None, "malformed JSON"),
    "unknown credit type": (
        _records_with(
            1,
            credits=[
                {"name": "x", "amount": -1, "type": "SUSTAINED_USAGE_DISCOUNT"},
                {"amount": -1, "type": "LOYALTY"},
            ],
        ),
        None,
        2,
        "credits[2].type",
        "unknown credit type LOYALTY",
    ),
    "missing column": (_without("invoice"), None, 1, "invoice.month", "required value is missing"),
    "bad timestamp": (
        _records_with(2, usage_start_time="yesterday"),
        None,
        3,
        "usage_start_time",
        "yesterday is not a valid",
    ),
    "bad number": (_records_with(3, cost="12,50"), None, 4, "cost", "12,50 is not a valid DECIMAL"),
    "bad credit amount": (
        _records_with(4, credits=[{"amount": "n/a", "type": "FREE_TIER"}]),
        None,
        5,
        "credits[1].amount",
        "n/a is not",
    ),
    "credits not an array": (_records_with(5, credits={"amount": -1}), None, 6, "credits", "expected a JSON array"),
    "unknown cost type": (_records_with(0, cost_type="refund"), None, 1, "cost_type", "unknown cost type refund"),
    "bad invoice month": (_records_with(0, invoice={"month": "2026-11"}), None, 1, "invoice.month", "YYYYMM"),
    "end before start": (
        _records_with(6, usage_end_time="2026-11-03 09:00:00 UTC"),
        None,
        7,
        "usage_end_time",
        "is not after",
    ),
}


@pytest.mark.parametrize(
    "labels",
    ["team=ml", {"team": "ml"}, ["team"], [{"key": "team", "value": "ml"}, "env=prod"]],
    ids=["string", "object", "list of strings", "one element a string"],
)
def test_labels_that_are_no_list_of_records_are_repaired_and_flagged(con, tmp_path, labels):
    records = _records_with(2, labels=labels)
    result = _load(con, write_jsonl(tmp_path / "labels.jsonl", records))
    assert result.repairs == (("InvalidTags", 1),)
    flagged = con.execute("SELECT x_SourceLineItemId, Tags FROM focus.costs WHERE x_SourceChanges = 'InvalidTags'")
    line_item, tags = flagged.fetchone()
    assert line_item.endswith(":3") and "ml" not in str(json.loads(tags or "{}").get("env", ""))
    assert _totals(con)[0][3] == _source_totals(records)


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_names_file_row_and_column_and_changes_nothing(con, tmp_path, case):
    _load(con, write_jsonl(tmp_path / "good.jsonl", every_credit_type()))
    before = focus_snapshot(con)
    staged = con.execute("SELECT count(*) FROM focus.cost_rows").fetchone()
    records, mutate, row, column, message = BAD_INPUTS[case]
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    if mutate:
        mutate(path)
    with pytest.raises(InputError) as caught:
        _load(con, path)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(path), row, column)
    assert message in caught.value.reason
    assert focus_snapshot(con) == before
    assert con.execute("SELECT count(*) FROM focus.cost_rows").fetchone() == staged


def test_bad_row_in_a_parquet_extract_is_named_by_its_row(con, tmp_path):
    path = write_parquet(tmp_path / "bad.parquet", _records_with(2, credits=[{"amount": -1.0, "type": "LOYALTY"}]))
    with pytest.raises(InputError, match="unknown credit type LOYALTY") as caught:
        _load(con, path)
    assert (caught.value.row, caught.value.column) == (3, "credits[1].type")


def test_csv_is_not_a_gcp_export(con, tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("cost\n1\n")
    with pytest.raises(InputError, match="unsupported file type"):
        _load(con, path)


def test_google_focus_view_reads_like_the_export_it_was_made_from(con, tmp_path):
    records = [*every_credit_type(), *december_with_corrections()]
    _load(con, write_jsonl(tmp_path / "export.jsonl", records))
    # the view has no usage in pricing units and no adjustment description: prices become lump sums
    columns = (
        "* EXCLUDE (x_DeliveryId, x_SourceFile, x_IngestedAt, x_SourceFormat, x_SourceVersion, x_SourceLineItemId,"
        " PricingQuantity, PricingUnit, ListUnitPrice, ContractedUnitPrice, PricingCurrencyListUnitPrice,"
        " PricingCurrencyContractedUnitPrice, ChargeDescription, x_PricingUnitDescription)"
    )
    from_export = con.execute(f"SELECT {columns} FROM focus.costs ORDER BY ALL").fetchall()
    view = write_jsonl(tmp_path / "focus.jsonl", [as_focus_view(r) for r in records])
    result = load_delivery(con, Delivery("gcp-focus", (view,)))
    assert con.execute(f"SELECT {columns} FROM focus.costs ORDER BY ALL").fetchall() == from_export
    assert {s.billed_cost for s in result.slices} == {EVERY_CREDIT_BILLED, DECEMBER_BILLED}
    versions = con.execute("SELECT DISTINCT x_SourceFormat, x_SourceVersion FROM focus.costs").fetchall()
    assert versions == [("gcp-focus", "gcp_focus_view_2024_03_19")]
    lump = _row(con, "focus.jsonl:6", "PricingQuantity, PricingUnit, ListUnitPrice, ContractedUnitPrice")
    assert lump == (Decimal(1), "Units", Decimal("4"), Decimal("3.67"))
    assert [r for r in run_checks(con) if not r.passed] == []


def test_google_focus_view_errors_name_the_views_columns(con, tmp_path):
    records = [as_focus_view(r) for r in every_credit_type()]
    records[1]["x_Credits"] = [{"Amount": -1, "Type": "LOYALTY"}]
    records[2]["BillingPeriodStart"] = "soon"
    with pytest.raises(InputError, match="required value is missing") as caught:
        load_delivery(con, Delivery("gcp-focus", (write_jsonl(tmp_path / "focus.jsonl", records[2:]),)))
    assert (caught.value.row, caught.value.column) == (1, "BillingPeriodStart")
    with pytest.raises(InputError, match="unknown credit type LOYALTY") as caught:
        load_delivery(con, Delivery("gcp-focus", (write_jsonl(tmp_path / "focus2.jsonl", records[:2]),)))
    assert (caught.value.row, caught.value.column) == (2, "x_Credits")


def test_output_passes_the_official_validator(con, tmp_path, validator_ready):
    _load(con, write_jsonl(tmp_path / "nov.jsonl", every_credit_type()))
    _load(con, write_jsonl(tmp_path / "dec.jsonl", december_with_corrections()))
    assert validate_warehouse(con, tmp_path) == []
