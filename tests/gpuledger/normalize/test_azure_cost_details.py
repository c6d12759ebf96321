"""Azure cost details (EA, MCA; actual, amortized, combined) and usage details -> FOCUS 1.2: every cent reconciled."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from datetime import UTC
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates.load import LoadResult, accept_delivery, load_delivery
from models.delivery import Delivery
from models.errors import InputError, ReconciliationError
from tests.conftest import focus_snapshot, validate_warehouse
from tests.fixtures.azure_cases import (
    EA_ACTUAL_TOTAL,
    EA_AMORTIZED_CHARGES,
    EA_AMORTIZED_TOTAL,
    EA_HEADER,
    EA_PURCHASE,
    EA_SHORT_NAMES,
    ENROLLMENT,
    LEGACY_HEADER,
    LEGACY_TOTAL,
    MCA_ACTUAL_TOTAL,
    MCA_AMORTIZED_TOTAL,
    MCA_HEADER,
    MCA_PROFILE,
    RESERVATION,
    SUBSCRIPTION,
    VM2_ID,
    VM_ID,
    ea_actual,
    ea_amortized,
    legacy_rows,
    mca_actual,
    mca_amortized,
    renamed,
    write_csv,
)

JANUARY = "2026-01"


def _load(con: duckdb.DuckDBPyConnection, fmt: str, *files: Path) -> LoadResult:
    return load_delivery(con, Delivery(fmt, tuple(files)))


def _totals(con: duckdb.DuckDBPyConnection) -> list[tuple[object, ...]]:
    """(BillingAccountId, month, currency, sum BilledCost, sum EffectiveCost) of everything published."""
    return con.execute(
        "SELECT BillingAccountId, strftime(BillingPeriodStart, '%Y-%m'), BillingCurrency, sum(BilledCost),"
        " sum(EffectiveCost) FROM focus.costs GROUP BY ALL ORDER BY ALL"
    ).fetchall()


def _ea_files(tmp_path: Path, suffix: str = ".csv") -> tuple[Path, Path]:
    actual = write_csv(tmp_path / "ea-actual" / f"part_0_0001{suffix}", ea_actual(), EA_HEADER)
    amortized = write_csv(tmp_path / "ea-amortized" / f"part_0_0001{suffix}", ea_amortized(), EA_HEADER)
    return actual, amortized


def _mca_files(tmp_path: Path) -> tuple[Path, Path]:
    actual = write_csv(tmp_path / "mca-actual" / "part_0_0001.csv.gz", mca_actual(), MCA_HEADER)
    amortized = write_csv(tmp_path / "mca-amortized" / "part_0_0001.csv.gz", mca_amortized(), MCA_HEADER)
    return actual, amortized


# --- exact sums per (billing account, period, currency) ---------------------------------------------


def test_ea_actual_bills_the_invoice_and_zeroes_the_purchase_effective_cost(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    result = _load(con, "azure-actual", actual)
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL, EA_ACTUAL_TOTAL - EA_PURCHASE)]
    assert [(s.billed_cost, s.effective_cost) for s in result.slices] == [
        (EA_ACTUAL_TOTAL, EA_ACTUAL_TOTAL - EA_PURCHASE)
    ]


def test_ea_amortized_costs_everything_and_bills_nothing_the_commitment_covers(con, tmp_path):
    _, amortized = _ea_files(tmp_path)
    _load(con, "azure-amortized", amortized)
    expected_billed = EA_AMORTIZED_TOTAL - EA_AMORTIZED_CHARGES
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", expected_billed, EA_AMORTIZED_TOTAL)]


def test_ea_combined_bills_the_actual_total_and_costs_the_amortized_total(con, tmp_path):
    actual, amortized = _ea_files(tmp_path)
    _load(con, "azure-cost-details", actual, amortized)
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL, EA_AMORTIZED_TOTAL)]
    # every amortized row, plus only the commitment purchase from the actual dataset
    rows = con.execute(
        "SELECT split_part(x_SourceLineItemId, ':', 1), x_SourceLineItemType, count(*) FROM focus.costs"
        " GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert rows == [
        ("actual", "Purchase", 1),
        ("amortized", "Purchase", 1),
        ("amortized", "UnusedReservation", 1),
        ("amortized", "Usage", 5),
    ]


def test_reservation_purchase_and_its_amortized_usage(con, tmp_path):
    actual, amortized = _ea_files(tmp_path)
    _load(con, "azure-cost-details", actual, amortized)
    rows = con.execute(
        "SELECT x_SourceLineItemType, x_AmortizationClass, ChargeCategory, CommitmentDiscountStatus, PricingCategory,"
        " BilledCost, EffectiveCost, CommitmentDiscountId, CommitmentDiscountType, CommitmentDiscountCategory,"
        " ResourceId FROM focus.costs WHERE CommitmentDiscountId IS NOT NULL ORDER BY x_SourceLineItemType"
    ).fetchall()
    commitment, vm = RESERVATION.lower(), VM2_ID.lower()
    assert rows == [
        ("Purchase", "Principal", "Purchase", None, "Standard", EA_PURCHASE, 0, commitment, "Reservation", "Usage",
         None),
        ("UnusedReservation", "Amortized Charge", "Usage", "Unused", "Committed", 0, 540, commitment, "Reservation",
         "Usage", commitment),
        ("Usage", "Amortized Charge", "Usage", "Used", "Committed", 0, 960, commitment, "Reservation", "Usage", vm),
    ]  # fmt: skip


def test_mca_eur_billing_profile_every_charge_type(con, tmp_path):
    actual, amortized = _mca_files(tmp_path)
    _load(con, "azure-cost-details", actual, amortized)
    assert _totals(con) == [(MCA_PROFILE, JANUARY, "EUR", MCA_ACTUAL_TOTAL, MCA_AMORTIZED_TOTAL)]
    by_type = {
        row[0]: row[1:]
        for row in con.execute(
            "SELECT x_SourceLineItemType, ChargeCategory, ChargeClass, BilledCost, EffectiveCost, PricingCurrency,"
            " BillingAccountType, InvoiceId FROM focus.costs"
        ).fetchall()
    }
    assert by_type["Tax"][:4] == ("Tax", None, Decimal(10), Decimal(10))
    assert by_type["Credit"][:4] == ("Credit", None, Decimal(-5), Decimal(-5))
    assert by_type["RoundingAdjustment"][0] == "Adjustment"
    assert by_type["Refund"][:4] == ("Purchase", "Correction", Decimal(-100), Decimal(0))
    assert by_type["Purchase"][:4] == ("Purchase", None, Decimal(920), Decimal(0))
    assert by_type["UnusedSavingsPlan"][:4] == ("Usage", None, Decimal(0), Decimal(900))
    assert {row[4:] for row in by_type.values()} == {("USD", "Billing Profile", "G012345678")}


def test_mca_prices_convert_from_the_pricing_currency(con, tmp_path):
    actual, _ = _mca_files(tmp_path)
    _load(con, "azure-actual", actual)
    row = con.execute(
        "SELECT ListUnitPrice, ContractedUnitPrice, ListCost, ContractedCost, PricingCurrencyListUnitPrice,"
        " PricingCurrencyEffectiveCost, SkuId FROM focus.costs"
        " WHERE x_SourceLineItemType = 'Usage' AND CommitmentDiscountId IS NULL"
    ).fetchone()
    # 3.67 USD x 0.92 = 3.3764 EUR per hour, 10 hours
    assert row == (
        Decimal("3.3764"),
        Decimal("3.3764"),
        Decimal("33.764"),
        Decimal("33.764"),
        Decimal("3.67"),
        Decimal("36.7"),
        "DZH318Z0BPVW",
    )


def test_mca_single_datasets_reconcile_under_the_zeroing_rules(con, tmp_path):
    actual, amortized = _mca_files(tmp_path)
    _load(con, "azure-actual", actual)
    principal = Decimal(920) - 100
    assert _totals(con) == [(MCA_PROFILE, JANUARY, "EUR", MCA_ACTUAL_TOTAL, MCA_ACTUAL_TOTAL - principal)]
    # the other dataset of the same slice moves most of its billed money: held (open_month_change), then accepted
    held = _load(con, "azure-amortized", amortized)
    assert [hold.reason for hold in held.holds] == ["open_month_change"]
    accept_delivery(con, held.delivery_id)
    _load(con, "azure-amortized", amortized)
    amortized_charges = Decimal(20) + 900
    assert _totals(con) == [(MCA_PROFILE, JANUARY, "EUR", MCA_AMORTIZED_TOTAL - amortized_charges, MCA_AMORTIZED_TOTAL)]


def test_legacy_usage_details(con, tmp_path):
    path = write_csv(tmp_path / "legacy" / "usage.csv", legacy_rows(), LEGACY_HEADER)
    _load(con, "azure-legacy", path)
    assert _totals(con) == [(SUBSCRIPTION, JANUARY, "USD", LEGACY_TOTAL, LEGACY_TOTAL)]
    rows = con.execute(
        "SELECT ChargePeriodStart, BillingPeriodEnd, BillingAccountType, SubAccountId, ResourceId, Tags,"
        " x_SourceVersion FROM focus.costs ORDER BY ChargePeriodStart"
    ).fetchall()
    assert [(r[0].strftime("%Y-%m-%d"), r[1].strftime("%Y-%m-%d")) for r in rows] == [
        ("2026-01-05", "2026-02-01"),
        ("2026-01-06", "2026-02-01"),
    ]
    assert {r[2:5] for r in rows} == {("Subscription", SUBSCRIPTION, VM_ID.lower())}
    assert json.loads(rows[0][5]) == {"team": "llm"}
    assert rows[0][6] == "Usage details 2019-10-01"


def test_short_ea_column_names(con, tmp_path):
    header = [EA_SHORT_NAMES.get(h, h) for h in EA_HEADER]
    path = write_csv(tmp_path / "ea-actual-short.csv", renamed(ea_actual(), EA_SHORT_NAMES), header)
    _load(con, "azure-actual", path)
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL, EA_ACTUAL_TOTAL - EA_PURCHASE)]
    assert con.execute("SELECT DISTINCT x_SourceVersion FROM focus.costs").fetchall() == [
        ("EA cost details (short names)",)
    ]


def test_headers_match_case_insensitively(con, tmp_path):
    header = [h.upper() for h in EA_HEADER]
    rows = [{k.upper(): v for k, v in row.items()} for row in ea_actual()]
    _load(con, "azure-actual", write_csv(tmp_path / "upper.csv", rows, header))
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL, EA_ACTUAL_TOTAL - EA_PURCHASE)]


def test_parquet_and_csv_gz_give_the_same_rows(con, tmp_path):
    actual, amortized = _ea_files(tmp_path, ".csv.gz")
    _load(con, "azure-cost-details", actual, amortized)
    from_csv = _totals(con)
    parquet_dir = tmp_path / "parquet"
    parquets = []
    for source in (actual, amortized):
        out = parquet_dir / source.parent.name / "part_0_0001.snappy.parquet"
        out.parent.mkdir(parents=True)
        # Parquet exports carry typed numbers and dates; the reader must take them as they are.
        con.execute(
            "COPY (SELECT * REPLACE (CAST(nullif(CostInBillingCurrency, '') AS DOUBLE) AS CostInBillingCurrency,"
            " CAST(nullif(Quantity, '') AS DOUBLE) AS Quantity, strptime(Date, ['%m/%d/%Y', '%Y-%m-%d',"
            " '%Y-%m-%d %H:%M:%S', '%Y-%m-%dT%H:%M:%S']) AS Date)"
            " FROM read_csv($src, all_varchar = true)) TO '" + str(out) + "' (FORMAT parquet)",
            {"src": str(source)},
        )
        parquets.append(out)
    _load(con, "azure-cost-details", *parquets)
    assert _totals(con) == from_csv == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL, EA_AMORTIZED_TOTAL)]


def test_output_passes_the_official_validator(con, tmp_path, validator_ready):
    _load(con, "azure-cost-details", *_ea_files(tmp_path))
    _load(con, "azure-cost-details", *_mca_files(tmp_path))
    # A marketplace subscription covers no future charge and keeps its EffectiveCost (docs/decisions/0006);
    # the vendored model checks commitment purchases only (tools/focus_validator_model/README.md).
    assert validate_warehouse(con, tmp_path) == []
    purchases = con.execute(
        "SELECT PublisherName, CommitmentDiscountId IS NULL FROM focus.costs"
        " WHERE ChargeCategory = 'Purchase' AND EffectiveCost <> 0"
    ).fetchall()
    assert purchases == [("NVIDIA", True)]


# --- quirks ------------------------------------------------------------------------------------------


def test_bom_first_header_and_tags_with_and_without_braces(con, tmp_path):
    rows = ea_actual()
    rows[1]["Tags"] = '{"team": "vision", "cost-center": "42/a:b"}'
    rows[2]["Tags"] = '"empty": ""'
    path = write_csv(tmp_path / "tags.csv", rows, EA_HEADER, bom=True)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    _load(con, "azure-actual", path)
    tags = [
        json.loads(t) if t else None
        for (t,) in con.execute(
            "SELECT Tags FROM focus.costs ORDER BY ChargePeriodStart, x_SourceLineItemId"
        ).fetchall()
    ]
    assert {"team": "llm", "env": "prod"} in tags
    assert {"team": "vision", "cost-center": "42/a:b"} in tags
    assert {"empty": ""} in tags
    assert None in tags


def test_dates_in_every_azure_format_give_daily_charge_periods(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    _load(con, "azure-actual", actual)
    periods = con.execute(
        "SELECT DISTINCT strftime(ChargePeriodStart, '%Y-%m-%dT%H:%M:%SZ'), epoch(ChargePeriodEnd - ChargePeriodStart),"
        " strftime(BillingPeriodStart, '%Y-%m-%d'), strftime(BillingPeriodEnd, '%Y-%m-%d') FROM focus.costs ORDER BY 1"
    ).fetchall()
    # MM/dd/yyyy, M/d/yyyy, yyyy-MM-dd, yyyy-MM-dd HH:mm:ss, ISO with T: one day each, end exclusive
    assert periods == [
        (f"2026-01-{day:02d}T00:00:00Z", 86400, "2026-01-01", "2026-02-01") for day in (1, 5, 6, 7, 8, 9)
    ]


def test_resource_ids_are_lower_cased_consistently(con, tmp_path):
    actual, amortized = _ea_files(tmp_path)
    _load(con, "azure-cost-details", actual, amortized)
    ids = con.execute(
        "SELECT DISTINCT ResourceId FROM focus.costs WHERE ServiceName = 'Storage' OR x_InstanceType IS NOT NULL"
    ).fetchall()
    assert all(row[0] == row[0].lower() for row in ids)
    storage = con.execute("SELECT count(DISTINCT ResourceId) FROM focus.costs WHERE ServiceName = 'Storage'").fetchone()
    assert storage == (1,)


def test_gpu_vm_size_spot_marketplace_and_units(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    _load(con, "azure-actual", actual)
    rows = {
        row[0]: row[1:]
        for row in con.execute(
            "SELECT coalesce(x_UsageType, PublisherName), x_InstanceType, PricingCategory, PublisherName, ListCost,"
            " ContractedCost, PricingQuantity, PricingUnit, ConsumedQuantity, ConsumedUnit, ServiceCategory"
            " FROM focus.costs WHERE CommitmentDiscountId IS NULL"
            " AND (x_UsageType IS NOT NULL OR PublisherName <> 'Microsoft')"
        ).fetchall()
    }
    h100 = rows["ND96isr H100 v5"]
    assert h100[:3] == ("Standard_ND96isr_H100_v5", "Standard", "Microsoft")
    assert h100[5:] == (Decimal(24), "Hours", Decimal(24), "Hours", "Compute")
    spot = rows["NC24ads A100 v4 Spot"]
    # no AdditionalInfo: the VM size comes from the meter name; ListCost from the PayG price
    assert spot[:5] == ("Standard_NC24ads_A100_v4", "Dynamic", "Microsoft", Decimal("36.7"), Decimal(12))
    transactions = rows["Hot LRS Write Operations"]
    assert transactions[5:9] == (Decimal("3.5"), "10000 Units", Decimal(35000), "Units")
    # no PayG price: ListCost = ContractedCost
    assert transactions[3] == transactions[4] == Decimal("0.014")
    assert rows["Hot LRS Data Stored"][6] == "GB-Months"
    assert rows["NVIDIA"][1:3] == ("Standard", "NVIDIA")
    assert rows["NVIDIA"][9] == "Other"


@pytest.mark.parametrize(
    ("unit", "pricing_unit", "consumed_quantity", "consumed_unit"),
    [
        ("1 Hour", "Hours", Decimal(24), "Hours"),
        ("100 Hours", "100 Hours", Decimal(2400), "Hours"),
        ("5 Widgets", "5 Widgets", Decimal(120), "Widgets"),
        ("1 /Month", "Units/Month", Decimal(24), "Units/Month"),
        ("1000", "1000 Units", Decimal(24000), "Units"),
    ],
)
def test_units_missing_from_the_table_keep_their_block(
    con, tmp_path, unit, pricing_unit, consumed_quantity, consumed_unit
):
    rows = ea_actual()[:1]
    rows[0]["UnitOfMeasure"] = unit
    _load(con, "azure-actual", write_csv(tmp_path / "units.csv", rows, EA_HEADER))
    row = con.execute("SELECT PricingQuantity, PricingUnit, ConsumedQuantity, ConsumedUnit FROM focus.costs").fetchone()
    assert row == (Decimal(24), pricing_unit, consumed_quantity, consumed_unit)


def test_x_source_line_item_ids_are_unique_even_for_identical_rows(con, tmp_path):
    rows = ea_actual()
    path = write_csv(tmp_path / "dupes.csv", [*rows, rows[0], rows[0]], EA_HEADER)
    _load(con, "azure-actual", path)
    ids = [r[0] for r in con.execute("SELECT x_SourceLineItemId FROM focus.costs").fetchall()]
    assert len(ids) == len(set(ids)) == len(rows) + 2
    billed = con.execute("SELECT sum(BilledCost) FROM focus.costs").fetchone()
    assert billed == (EA_ACTUAL_TOTAL + 2 * Decimal("2359.68"),)


# --- re-imports and bad input ------------------------------------------------------------------------


def test_reimport_is_a_no_op_and_a_newer_run_replaces_the_slice(con, tmp_path):
    actual, amortized = _ea_files(tmp_path)
    first = _load(con, "azure-cost-details", actual, amortized)
    before = focus_snapshot(con)
    again = _load(con, "azure-cost-details", actual, amortized)
    assert again.unchanged and focus_snapshot(con) == before
    rows = ea_actual()
    rows[0]["CostInBillingCurrency"] = "2000"
    newer_actual = write_csv(tmp_path / "run2" / "ea-actual" / "part_0_0001.csv", rows, EA_HEADER)
    amortized_rows = ea_amortized()
    amortized_rows[0]["CostInBillingCurrency"] = "2000"
    newer_amortized = write_csv(tmp_path / "run2" / "ea-amortized" / "part_0_0001.csv", amortized_rows, EA_HEADER)
    newer = _load(con, "azure-cost-details", newer_actual, newer_amortized)
    assert newer.delivery_id != first.delivery_id
    delta = Decimal("2359.68") - 2000
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL - delta, EA_AMORTIZED_TOTAL - delta)]


def test_actual_and_amortized_that_disagree_do_not_reconcile(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    rows = ea_amortized()
    rows[0]["CostInBillingCurrency"] = "2000"
    later = write_csv(tmp_path / "later" / "ea-amortized" / "part_0.csv", rows, EA_HEADER)
    with pytest.raises(ReconciliationError, match="does not reconcile"):
        _load(con, "azure-cost-details", actual, later)
    assert focus_snapshot(con).num_rows == 0


def test_combined_needs_both_datasets(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    other = write_csv(tmp_path / "more-actual" / "part_1.csv", ea_actual()[1:], EA_HEADER)
    with pytest.raises(InputError, match="needs an actual and an amortized export"):
        _load(con, "azure-cost-details", actual, other)


def test_undecidable_dataset_is_refused(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    unnamed = write_csv(tmp_path / "exports" / "part_0.csv", ea_amortized(), EA_HEADER)
    with pytest.raises(InputError, match="actual or amortized") as caught:
        _load(con, "azure-cost-details", actual, unnamed)
    assert caught.value.file == str(unnamed)


def test_legacy_and_cost_details_formats_refuse_each_other(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    legacy = write_csv(tmp_path / "legacy.csv", legacy_rows(), LEGACY_HEADER)
    with pytest.raises(InputError, match="pass --format azure-legacy"):
        _load(con, "azure-actual", legacy)
    with pytest.raises(InputError, match="pass --format azure-actual"):
        _load(con, "azure-legacy", actual)


@pytest.mark.parametrize(
    ("column", "value", "row", "message"),
    [
        ("ChargeType", "MysteryFee", 3, "unknown value 'MysteryFee'"),
        ("PricingModel", "Committed", 2, "unknown value 'Committed'"),
        ("Date", "2026-13-45", 4, "'2026-13-45' is not a date"),
        ("Date", "31/01/2026", 1, "'31/01/2026' is not a date"),
        ("CostInBillingCurrency", "12,50", 5, "'12,50' is not a valid DECIMAL"),
    ],
)
def test_bad_values_name_file_row_and_column_and_change_nothing(con, tmp_path, column, value, row, message):
    actual, _ = _ea_files(tmp_path)
    _load(con, "azure-actual", actual)
    before = focus_snapshot(con)
    rows = ea_actual()
    rows[row - 1][column] = value
    bad = write_csv(tmp_path / "bad" / "part_0.csv.gz", rows, EA_HEADER)
    with pytest.raises(InputError) as caught:
        _load(con, "azure-actual", bad)
    error = caught.value
    assert (error.file, error.row, error.column) == (str(bad), row, column)
    assert message in str(error)
    assert focus_snapshot(con) == before


@pytest.mark.parametrize("cell", ['"team": "ml", broken', '""', "untagged", '"team": {"a": 1}', '{"team": ["a"]}'])
def test_a_tags_cell_that_is_no_object_is_read_as_no_tags_and_flagged(con, tmp_path, cell):
    rows = ea_actual()
    rows[1]["Tags"] = cell
    delivery = write_csv(tmp_path / "part_0.csv", rows, EA_HEADER)
    result = _load(con, "azure-actual", delivery)
    assert result.repairs == (("InvalidTags", 1),)
    flagged = con.execute(
        "SELECT Tags, x_SourceChanges, x_SourceValues FROM focus.costs WHERE x_SourceChanges IS NOT NULL"
    ).fetchall()
    assert flagged == [(None, "InvalidTags", json.dumps({"Tags": cell}, separators=(",", ":")))]
    totals = con.execute("SELECT sum(BilledCost) FROM focus.costs").fetchone()
    assert totals == (sum(Decimal(r["CostInBillingCurrency"]) for r in rows),)


def test_mca_camel_case_unknown_charge_type_is_named(con, tmp_path):
    rows = mca_actual()
    rows[1]["chargeType"] = "Adjustment"
    bad = write_csv(tmp_path / "mca.csv", rows, MCA_HEADER)
    with pytest.raises(InputError) as caught:
        _load(con, "azure-actual", bad)
    assert (caught.value.row, caught.value.column) == (2, "chargeType")


def test_a_second_header_with_a_bom_in_the_middle_of_the_file(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    _load(con, "azure-actual", actual)
    before = focus_snapshot(con)
    part = write_csv(tmp_path / "part.csv", ea_actual(), EA_HEADER)
    glued = tmp_path / "glued.csv"
    glued.write_bytes(part.read_bytes() + part.read_bytes())
    with pytest.raises(InputError) as caught:
        _load(con, "azure-actual", glued)
    # row 8 of the data is the second file's header line, BOM first
    assert (caught.value.file, caught.value.row) == (str(glued), len(ea_actual()) + 1)
    assert focus_snapshot(con) == before


def test_a_bom_inside_a_value(con, tmp_path):
    rows = ea_actual()
    rows[2]["InvoiceSectionName"] = "\ufeffResearch"
    bad = write_csv(tmp_path / "bom.csv", rows, EA_HEADER)
    with pytest.raises(InputError, match="byte order mark") as caught:
        _load(con, "azure-actual", bad)
    assert (caught.value.row, caught.value.column) == (3, "InvoiceSectionName")


def test_semicolon_delimited_file_is_refused(con, tmp_path):
    _load(con, "azure-actual", _ea_files(tmp_path)[0])
    before = focus_snapshot(con)
    path = tmp_path / "excel.csv"
    with path.open("w", encoding="utf-8-sig") as handle:
        handle.write(";".join(EA_HEADER) + "\n")
        for row in ea_actual():
            handle.write(";".join(row[h].replace(".", ",") for h in EA_HEADER) + "\n")
    with pytest.raises(InputError, match="delimited by ';'") as caught:
        _load(con, "azure-actual", path)
    assert caught.value.file == str(path)
    assert focus_snapshot(con) == before


def test_gzip_semicolon_file_is_refused_too(con, tmp_path):
    path = tmp_path / "excel.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\t".join(EA_HEADER) + "\n")
    with pytest.raises(InputError, match="delimited by tabs"):
        _load(con, "azure-actual", path)


def test_files_of_one_delivery_may_order_their_columns_differently(con, tmp_path):
    # DuckDB matched several CSV files' columns by position: a reordered header swapped Date and costs
    actual, _ = _ea_files(tmp_path)
    reordered = [*reversed(EA_HEADER)]
    amortized = write_csv(tmp_path / "ea-amortized" / "part_9.csv", ea_amortized(), reordered)
    _load(con, "azure-cost-details", actual, amortized)
    assert _totals(con) == [(ENROLLMENT, JANUARY, "USD", EA_ACTUAL_TOTAL, EA_AMORTIZED_TOTAL)]


def test_a_bad_value_in_a_reordered_file_is_named_by_its_own_row_and_column(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    rows = ea_amortized()
    rows[1]["CostInBillingCurrency"] = "12,5"
    amortized = write_csv(tmp_path / "ea-amortized" / "part_9.csv", rows, [*reversed(EA_HEADER)])
    with pytest.raises(InputError, match="'12,5' is not a valid") as caught:
        _load(con, "azure-cost-details", actual, amortized)
    assert (caught.value.file, caught.value.row, caught.value.column) == (str(amortized), 2, "CostInBillingCurrency")


def test_a_file_lacking_a_column_of_the_delivery_is_named(con, tmp_path):
    actual, _ = _ea_files(tmp_path)
    header = [h for h in EA_HEADER if h != "CostInBillingCurrency"]
    amortized = write_csv(tmp_path / "ea-amortized" / "part_9.csv", ea_amortized(), header)
    with pytest.raises(InputError, match="column missing") as caught:
        _load(con, "azure-cost-details", actual, amortized)
    assert (caught.value.file, caught.value.column) == (str(amortized), "CostInBillingCurrency")
    assert _totals(con) == []


@pytest.mark.parametrize("missing", ["CostInBillingCurrency", "ChargeType", "BillingPeriodStartDate", "Date"])
def test_missing_required_column_is_named(con, tmp_path, missing):
    header = [h for h in EA_HEADER if h != missing]
    bad = write_csv(tmp_path / "bad.csv", ea_actual(), header)
    with pytest.raises(InputError, match="required column is missing") as caught:
        _load(con, "azure-actual", bad)
    assert (caught.value.file, caught.value.column) == (str(bad), missing)


@pytest.mark.parametrize(
    ("term", "end"),
    [("12", dt.datetime(2027, 1, 1, tzinfo=UTC)), ("P3Y", dt.datetime(2029, 1, 1, tzinfo=UTC)), ("", None)],
)
def test_a_reservation_purchase_states_its_term_from_its_date(con, tmp_path, term, end):
    rows = ea_actual()
    rows[-1]["Term"] = term
    _load(con, "azure-actual", write_csv(tmp_path / "part_0.csv", rows, [*EA_HEADER, "Term"]))
    terms = con.execute(
        "SELECT ChargeCategory, x_CommitmentTermStart, x_CommitmentTermEnd FROM focus.costs"
        " WHERE x_CommitmentTermStart IS NOT NULL OR x_CommitmentTermEnd IS NOT NULL"
    ).fetchall()
    assert terms == ([("Purchase", dt.datetime(2026, 1, 1, tzinfo=UTC), end)] if end else [])


def test_a_term_that_is_no_duration_is_read_as_unknown_and_flagged(con, tmp_path):
    rows = ea_actual()
    rows[-1]["Term"] = "one year"
    result = _load(con, "azure-actual", write_csv(tmp_path / "part_0.csv", rows, [*EA_HEADER, "Term"]))
    assert result.repairs == (("InvalidCommitmentTerm", 1),)
    flagged = con.execute(
        "SELECT x_CommitmentTermStart, x_CommitmentTermEnd, x_SourceChanges, x_SourceValues FROM focus.costs"
        " WHERE x_SourceChanges IS NOT NULL"
    ).fetchall()
    assert flagged == [(None, None, "InvalidCommitmentTerm", '{"Term":"one year"}')]
    assert con.execute("SELECT sum(BilledCost) FROM focus.costs").fetchone() == (EA_ACTUAL_TOTAL,)


def test_a_negative_quantity_of_a_positive_cost_is_flagged_and_its_money_kept(con, tmp_path):
    rows = ea_actual()
    rows[0]["Quantity"] = "-24"  # 2359.68 charged for -24 hours
    rows[1] |= {"Quantity": "-10", "CostInBillingCurrency": "-12"}  # a return of usage: both negative, consistent
    result = _load(con, "azure-actual", write_csv(tmp_path / "part_0.csv", rows, EA_HEADER))
    assert result.repairs == (("NegativeQuantity", 1),)
    flagged = con.execute(
        "SELECT BilledCost, EffectiveCost, ConsumedQuantity, PricingQuantity, x_SourceValues FROM focus.costs"
        " WHERE x_SourceChanges = 'NegativeQuantity'"
    ).fetchall()
    assert flagged == [(Decimal("2359.68"), Decimal("2359.68"), Decimal(-24), Decimal(-24), None)]
    assert _totals(con)[0][3] == sum(Decimal(r["CostInBillingCurrency"]) for r in rows)


@pytest.mark.parametrize("nul", ["\x00", "\\u0000"], ids=["a NUL byte", "an escaped NUL"])
def test_a_nul_character_in_a_tag_value_is_removed_and_flagged(con, tmp_path, nul):
    rows = ea_actual()
    rows[1]["Tags"] = f'"team": "m{nul}l", "env": "prod"'
    result = _load(con, "azure-actual", write_csv(tmp_path / "part_0.csv", rows, EA_HEADER))
    assert result.repairs == (("NulInTags", 1),)
    flagged = con.execute("SELECT Tags, x_SourceChanges FROM focus.costs WHERE x_SourceChanges IS NOT NULL").fetchall()
    assert flagged == [('{"team":"ml","env":"prod"}', "NulInTags")]
    assert _totals(con)[0][3] == EA_ACTUAL_TOTAL
