"""Generic FOCUS import (``--format focus``): FOCUS 1.0 / 1.1 / 1.2 files of any provider -> FOCUS 1.2 rows."""

from __future__ import annotations

import datetime as dt
import logging
import re
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.gates.checks import run_checks
from gpuledger.gates.load import accept_delivery, load_delivery
from gpuledger.normalize.detect import detect_format
from gpuledger.warehouse.home import connect_warehouse
from models.config import IngestConfig
from models.delivery import Delivery
from models.errors import InputError
from pipelines.cli import main
from pipelines.deliveries import deliveries_for, load_month
from tests.conftest import focus_snapshot, validate_warehouse
from tests.fixtures.focus_cases import Row, as_version, total, write_csv, write_parquet

PERIOD = {
    "BillingPeriodStart": "2026-10-01T00:00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00:00Z",
    "ChargePeriodStart": "2026-10-03T00:00:00Z",
    "ChargePeriodEnd": "2026-10-04T00:00:00Z",
    "BillingCurrency": "USD",
    "ChargeClass": None,
}

# A specialist GPU cloud: one account, an 8x H100 node, object storage, a credit and a tax.
COREWEAVE = {
    **PERIOD,
    "ProviderName": "CoreWeave",
    "PublisherName": "CoreWeave",
    "InvoiceIssuerName": "CoreWeave",
    "BillingAccountId": "cw-org-4411",
    "BillingAccountName": "Helios Research",
    "RegionId": "US-EAST-04",
    "RegionName": "US East 04",
}
GPU_NODE = {
    **COREWEAVE,
    "ChargeCategory": "Usage",
    "ChargeDescription": "gd-8xh100ib-i128 instance hours",
    "ChargeFrequency": "Usage-Based",
    "ServiceCategory": "Compute",
    "ServiceName": "Virtual Machines",
    "ServiceSubcategory": "Virtual Machines",
    "ResourceId": "node-h100-a",
    "ResourceName": "h100-a",
    "ResourceType": "Node",
    "SkuId": "gd-8xh100ib-i128",
    "SkuPriceId": "gd-8xh100ib-i128:on-demand",
    "SkuMeter": "Instance Hours",
    "SkuPriceDetails": '{"GpuCount": 8, "InstanceType": "gd-8xh100ib-i128"}',
    "PricingCategory": "Standard",
    "PricingQuantity": "24",
    "PricingUnit": "Hours",
    "ConsumedQuantity": "24",
    "ConsumedUnit": "Hours",
    "ListUnitPrice": "49.24",
    "ContractedUnitPrice": "49.24",
    "ListCost": "1181.76",
    "ContractedCost": "1181.76",
    "BilledCost": "1181.76",
    "EffectiveCost": "1181.76",
    "Tags": '{"team": "llm", "job": "pretrain-7"}',
}
OBJECT_STORAGE = {
    **GPU_NODE,
    "ChargeDescription": "Object storage, standard",
    "ServiceCategory": "Storage",
    "ServiceName": "Object Storage",
    "ServiceSubcategory": "Object Storage",
    "ResourceId": "bucket-checkpoints",
    "ResourceName": "checkpoints",
    "ResourceType": "Bucket",
    "SkuId": "object-storage-standard",
    "SkuPriceId": "object-storage-standard:on-demand",
    "SkuMeter": "Storage",
    "SkuPriceDetails": None,
    "PricingQuantity": "1024.5",
    "PricingUnit": "GB-Months",
    "ConsumedQuantity": "1024.5",
    "ConsumedUnit": "GB-Months",
    "ListUnitPrice": "0.0011",
    "ContractedUnitPrice": "0.0011",
    "ListCost": "1.12695",
    "ContractedCost": "1.12695",
    "BilledCost": "1.12695",
    "EffectiveCost": "1.12695",
    "Tags": None,
}
_NO_PRICE = dict.fromkeys(
    (
        "ResourceId",
        "ResourceName",
        "ResourceType",
        "SkuId",
        "SkuPriceId",
        "SkuMeter",
        "SkuPriceDetails",
        "PricingCategory",
        "PricingQuantity",
        "PricingUnit",
        "ConsumedQuantity",
        "ConsumedUnit",
        "ListUnitPrice",
        "ContractedUnitPrice",
        "Tags",
    )
)
CREDIT = {
    **GPU_NODE,
    **_NO_PRICE,
    "ChargeCategory": "Credit",
    "ChargeDescription": "Startup credit",
    "ChargeFrequency": "One-Time",
    "ListCost": "-100",
    "ContractedCost": "-100",
    "BilledCost": "-100",
    "EffectiveCost": "-100",
}
TAX = {**CREDIT, "ChargeCategory": "Tax", "ChargeDescription": "Sales tax", "ChargeFrequency": "Recurring"}
TAX |= {"ListCost": "86.03", "ContractedCost": "86.03", "BilledCost": "86.03", "EffectiveCost": "86.03"}

# A hyperscaler's FOCUS export (OCI-like): a compartment per team, compute covered by a spend commitment.
ORACLE = {
    **PERIOD,
    "ProviderName": "Oracle",
    "PublisherName": "Oracle",
    "InvoiceIssuerName": "Oracle",
    "BillingAccountId": "ocid1.tenancy.oc1..aaaahelios",
    "BillingAccountName": "helios",
    "SubAccountId": "ocid1.compartment.oc1..aaaallm",
    "SubAccountName": "llm",
    "RegionId": "us-ashburn-1",
    "RegionName": "US East (Ashburn)",
    "AvailabilityZone": "AD-1",
}
OCI_GPU = {
    **ORACLE,
    "ChargeCategory": "Usage",
    "ChargeDescription": "BM.GPU.H100.8 hours",
    "ChargeFrequency": "Usage-Based",
    "ServiceCategory": "Compute",
    "ServiceName": "Compute",
    "ResourceId": "ocid1.instance.oc1.iad.gpu1",
    "ResourceName": "gpu1",
    "ResourceType": "Instance",
    "SkuId": "B98415",
    "SkuPriceId": "B98415",
    "SkuMeter": "GPU Hours",
    "SkuPriceDetails": '{"InstanceType": "BM.GPU.H100.8", "GpuCount": 8}',
    "PricingCategory": "Committed",
    "PricingQuantity": "192",
    "PricingUnit": "GPU Hours",
    "ConsumedQuantity": "192",
    "ConsumedUnit": "GPU Hours",
    "ListUnitPrice": "10",
    "ContractedUnitPrice": "9.5",
    "ListCost": "1920",
    "ContractedCost": "1824",
    "BilledCost": "1824",
    "EffectiveCost": "1824",
    "CommitmentDiscountId": "ocid1.commitment.oc1..uc2026",
    "CommitmentDiscountCategory": "Spend",
    "CommitmentDiscountName": "Universal Credits 2026",
    "CommitmentDiscountType": "Universal Credits",
    "CommitmentDiscountStatus": "Used",
    "Tags": '{"Oracle-Tags.CreatedBy": "ops", "team": "llm"}',
}
OCI_EGRESS = {
    **OCI_GPU,
    "ChargeDescription": "Outbound data transfer",
    "ServiceCategory": "Networking",
    "ServiceName": "Networking",
    "ResourceId": "ocid1.vcn.oc1.iad.main",
    "ResourceName": "main",
    "ResourceType": "Vcn",
    "SkuId": "B88327",
    "SkuPriceId": "B88327",
    "SkuMeter": "Outbound Data Transfer",
    "SkuPriceDetails": None,
    "PricingCategory": "Standard",
    "PricingQuantity": "12.5",
    "PricingUnit": "GB",
    "ConsumedQuantity": "12.5",
    "ConsumedUnit": "GB",
    "ListUnitPrice": "0.0085",
    "ContractedUnitPrice": "0.0085",
    "ListCost": "0.10625",
    "ContractedCost": "0.10625",
    "BilledCost": "0.10625",
    "EffectiveCost": "0.10625",
    "CommitmentDiscountId": None,
    "CommitmentDiscountCategory": None,
    "CommitmentDiscountName": None,
    "CommitmentDiscountType": None,
    "CommitmentDiscountStatus": None,
    "Tags": None,
}

# What a FOCUS 1.2 export adds to each row (a 1.0 export lacks these; the model derives them).
FOCUS_1_2_COLUMNS = {
    "CapacityReservationId": None,
    "CapacityReservationStatus": None,
    "CommitmentDiscountQuantity": None,
    "CommitmentDiscountUnit": None,
    "InvoiceId": "INV-2026-10",
    "BillingAccountType": "Organization",
    "SubAccountType": None,
    "PricingCurrency": "USD",
}


def coreweave_rows() -> list[Row]:
    rows = [GPU_NODE, OBJECT_STORAGE, CREDIT, TAX]
    return [FOCUS_1_2_COLUMNS | _pricing_currency(row) for row in rows]


def oracle_rows() -> list[Row]:
    rows = [FOCUS_1_2_COLUMNS | _pricing_currency(row) for row in (OCI_GPU, OCI_EGRESS)]
    rows[0] |= {"ServiceSubcategory": "Virtual Machines", "SubAccountType": "Compartment"}
    rows[0] |= {"CommitmentDiscountQuantity": "1824", "CommitmentDiscountUnit": "USD", "BillingAccountType": "Tenancy"}
    rows[1] |= {"ServiceSubcategory": "Network Connectivity", "SubAccountType": "Compartment"}
    rows[1] |= {"BillingAccountType": "Tenancy"}
    return rows


def _pricing_currency(row: Row) -> Row:
    return row | {
        "PricingCurrencyEffectiveCost": row["EffectiveCost"],
        "PricingCurrencyListUnitPrice": row.get("ListUnitPrice"),
        "PricingCurrencyContractedUnitPrice": row.get("ContractedUnitPrice"),
    }


def _write(path: Path, rows: list[Row]) -> Path:
    return write_parquet(path, rows) if path.suffix == ".parquet" else write_csv(path, rows)


def _slices(con) -> list[tuple[str, str, Decimal, Decimal]]:
    return con.execute(
        "SELECT ProviderName, BillingAccountId, sum(BilledCost), sum(EffectiveCost) FROM focus.costs"
        " GROUP BY ALL ORDER BY ALL"
    ).fetchall()


def _failed_checks(con) -> list[str]:
    return [f"{r.check}: {r.sample}" for r in run_checks(con) if not r.passed]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2"])
def test_every_focus_version_becomes_focus_1_2_with_exact_sums(con, tmp_path, version, suffix):
    rows = as_version(coreweave_rows() + oracle_rows(), version)
    file = _write(tmp_path / f"focus-{version}{suffix}", rows)
    result = load_delivery(con, Delivery("focus", (file,)))

    assert _failed_checks(con) == []
    cw, oci = rows[:4], rows[4:]
    assert _slices(con) == [
        ("CoreWeave", "cw-org-4411", total(cw, "BilledCost"), total(cw, "EffectiveCost")),
        ("Oracle", "ocid1.tenancy.oc1..aaaahelios", total(oci, "BilledCost"), total(oci, "EffectiveCost")),
    ]
    assert [(s.provider_name, s.rows) for s in result.slices] == [("CoreWeave", 4), ("Oracle", 2)]
    assert con.execute("SELECT DISTINCT x_SourceVersion, x_SourceFormat FROM focus.costs").fetchall() == [
        (version, f"focus-{version}")
    ]
    derived = con.execute(
        "SELECT ServiceName, ServiceSubcategory, BillingAccountType, SubAccountType, CommitmentDiscountQuantity,"
        " CommitmentDiscountUnit, PricingCurrency, PricingCurrencyEffectiveCost, x_InstanceType"
        " FROM focus.costs WHERE ProviderName = 'Oracle' ORDER BY ServiceName"
    ).fetchall()
    if version == "1.0":
        # The 1.1 and 1.2 columns derived: spend commitments count money; names that are subcategories stay so.
        assert derived == [
            ("Compute", "Other (Compute)", "Billing Account", "Sub Account", Decimal(1824), "USD", "USD",
             Decimal(1824), None),
            ("Networking", "Other (Networking)", "Billing Account", "Sub Account", None, None, "USD",
             Decimal("0.10625"), None),
        ]  # fmt: skip
    elif version == "1.2":
        # Values the source has pass through.
        assert derived == [
            ("Compute", "Virtual Machines", "Tenancy", "Compartment", Decimal(1824), "USD", "USD", Decimal(1824),
             "BM.GPU.H100.8"),
            ("Networking", "Network Connectivity", "Tenancy", "Compartment", None, None, "USD", Decimal("0.10625"),
             None),
        ]  # fmt: skip
    gpu = con.execute(
        "SELECT ServiceSubcategory, x_InstanceType, Tags, SkuPriceDetails FROM focus.costs"
        " WHERE ResourceId = 'node-h100-a'"
    ).fetchone()
    assert gpu == (
        "Virtual Machines",
        None if version == "1.0" else "gd-8xh100ib-i128",
        '{"job":"pretrain-7","team":"llm"}',
        None if version == "1.0" else '{"GpuCount":8,"InstanceType":"gd-8xh100ib-i128"}',
    )


def test_two_providers_in_one_file_are_separate_slices(con, tmp_path):
    both = write_csv(tmp_path / "october.csv", coreweave_rows() + oracle_rows())
    load_delivery(con, Delivery("focus", (both,)))
    oracle_before = con.execute("SELECT * FROM focus.costs WHERE ProviderName = 'Oracle' ORDER BY ALL").fetchall()

    # CoreWeave restates its month alone (the credit withdrawn): its slice is replaced, Oracle's stays as it was.
    restated = [row for row in coreweave_rows() if row["ChargeCategory"] != "Credit"]
    load_delivery(con, Delivery("focus", (write_csv(tmp_path / "coreweave-restated.csv", restated),)))

    owners = con.execute("SELECT provider_name, delivery_id FROM meta.slices ORDER BY ALL").fetchall()
    assert [p for p, _ in owners] == ["CoreWeave", "Oracle"]
    assert owners[0][1] != owners[1][1]
    cw = total(coreweave_rows(), "BilledCost") + 100
    assert _slices(con)[0][2] == cw
    assert con.execute("SELECT * FROM focus.costs WHERE ProviderName = 'Oracle' ORDER BY ALL").fetchall() == (
        oracle_before
    )


def test_a_provider_less_manifest_replaces_only_the_slices_of_its_rows(con, tmp_path):
    load_delivery(con, Delivery("focus", (write_csv(tmp_path / "a.csv", coreweave_rows()),)))
    before = focus_snapshot(con)
    header_only = tmp_path / "empty.csv"
    header_only.write_text(",".join(coreweave_rows()[0]) + "\n")
    # The generic format cannot tell which provider an empty restatement is for: nothing is replaced.
    result = load_delivery(con, Delivery("focus", (header_only,), billing_period="2026-10", billing_account_id="x"))
    assert result.slices == ()
    assert focus_snapshot(con) == before


def test_literal_null_and_naive_timestamps_are_read_and_logged_once(con, tmp_path, caplog):
    rows = [row | {"ChargePeriodStart": "2026-10-03 00:00:00", "ChargePeriodEnd": "2026-10-04T00:00"}
            for row in coreweave_rows()]  # fmt: skip
    file = write_csv(tmp_path / "sloppy.csv", rows, null="NULL")
    with caplog.at_level(logging.WARNING, logger="gpuledger"):
        load_delivery(con, Delivery("focus", (file,)))

    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert all(str(file) in m for m in warned)
    (literal,) = [m for m in warned if "the literal NULL" in m]  # one line for the file, naming every column
    assert "'CapacityReservationId' 4" in literal
    (naive,) = [m for m in warned if "without a time zone" in m]
    assert _quoted(naive) == ["ChargePeriodEnd", "ChargePeriodStart"]
    assert _failed_checks(con) == []
    row = con.execute(
        "SELECT ChargePeriodStart, ChargePeriodEnd, ChargeClass, CapacityReservationId FROM focus.costs LIMIT 1"
    ).fetchone()
    assert [str(v) for v in row] == ["2026-10-03 00:00:00+00:00", "2026-10-04 00:00:00+00:00", "None", "None"]
    assert _slices(con)[0][2] == total(rows, "BilledCost")


def _quoted(message: str) -> list[str]:
    """The column names a warning quotes ('name'), sorted; examples in parentheses aside."""
    return sorted(re.findall(r"'(\w+)'(?! \d)", re.sub(r"\(e\.g\. '[^']*'\)", "", message)))


def test_identical_rows_are_held_and_once_accepted_both_count_with_their_own_line_item_ids(con, tmp_path):
    rows = coreweave_rows()
    file = write_csv(tmp_path / "dup.csv", [*rows, rows[0]])
    held = load_delivery(con, Delivery("focus", (file,)))
    assert [(hold.reason, hold.detail.split(" (")[0]) for hold in held.holds] == [
        ("twin_rows", "1 row(s) repeat another row of the delivery in every column")
    ]
    accept_delivery(con, held.delivery_id)
    load_delivery(con, Delivery("focus", (file,)))
    ids = [r[0] for r in con.execute("SELECT x_SourceLineItemId FROM focus.costs").fetchall()]
    assert len(ids) == len(set(ids)) == 5
    assert _slices(con)[0][2] == total([*rows, rows[0]], "BilledCost")


def test_parquet_without_time_zone_is_read_as_utc(con, tmp_path, caplog):
    file = write_parquet(tmp_path / "naive.parquet", oracle_rows(), naive=True)
    with caplog.at_level(logging.WARNING, logger="gpuledger"):
        load_delivery(con, Delivery("focus", (file,)))
    (naive,) = [r.getMessage() for r in caplog.records if "without a time zone" in r.getMessage()]
    assert _quoted(naive) == ["BillingPeriodEnd", "BillingPeriodStart", "ChargePeriodEnd", "ChargePeriodStart"]
    start = con.execute("SELECT DISTINCT BillingPeriodStart FROM focus.costs").fetchall()
    assert start == [(dt.datetime(2026, 10, 1, tzinfo=dt.UTC),)]


@pytest.mark.parametrize(
    ("change", "row", "column", "reason"),
    [
        ({"BilledCost": "12,50"}, 3, "BilledCost", "'12,50' is not a decimal number"),
        # DuckDB's cast read the one as 1329.216 and rounded the other to 10 decimal places
        ({"BilledCost": "1_329.216"}, 3, "BilledCost", "'1_329.216' is not a decimal number"),
        ({"ListUnitPrice": "0.12345678901"}, 2, "ListUnitPrice", "'0.12345678901' is not a decimal number exact to 10"),
        ({"ChargeCategory": "Fee"}, 2, "ChargeCategory", "'Fee' is not an allowed value"),
        ({"CommitmentDiscountStatus": "Partial"}, 5, "CommitmentDiscountStatus", "'Partial' is not an allowed"),
        ({"ChargePeriodStart": "03/10/2026"}, 4, "ChargePeriodStart", "'03/10/2026' is not a timestamp"),
        ({"BillingAccountId": ""}, 6, "BillingAccountId", "must not be null"),
        # a ListCost that cannot be derived either (no ListUnitPrice) is money missing
        ({"ListCost": "", "ListUnitPrice": ""}, 5, "ListCost", "must not be null"),
    ],
)
def test_bad_values_name_file_row_and_column_and_publish_nothing(con, tmp_path, change, row, column, reason):
    load_delivery(con, Delivery("focus", (write_csv(tmp_path / "good.csv", oracle_rows()),)))
    before = focus_snapshot(con)
    rows = coreweave_rows() + oracle_rows()
    fine = write_csv(tmp_path / "fine.csv", rows)
    rows[row - 1] = rows[row - 1] | change
    bad = write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(InputError) as error:
        load_delivery(con, Delivery("focus", (fine, bad)))
    assert (error.value.file, error.value.row, error.value.column) == (str(bad), row, column)
    assert reason in error.value.reason
    assert focus_snapshot(con) == before


def test_descriptive_values_are_repaired_and_flagged_with_exact_money(con, tmp_path):
    rows = coreweave_rows() + oracle_rows()
    rows[0] |= {"Tags": "team=llm"}  # no JSON object: read as no tags
    rows[4] |= {"ContractedCost": "", "ContractedUnitPrice": ""}  # as Oracle's own FOCUS 1.0 rows have them
    rows[5] |= {"ListCost": "", "PricingUnit": "GB Months", "ConsumedUnit": "GB Months"}
    result = load_delivery(con, Delivery("focus", (write_csv(tmp_path / "focus.csv", rows),)))
    assert result.repairs == (
        ("InvalidTags", 1),
        ("MissingContractedCost", 1),
        ("MissingContractedUnitPrice", 1),
        ("MissingListCost", 1),
    )
    assert _failed_checks(con) == []
    repaired = con.execute(
        "SELECT x_SourceChanges, x_SourceValues, Tags, ListCost, ContractedCost, ContractedUnitPrice, PricingUnit,"
        " x_PricingUnitDescription FROM focus.costs WHERE x_SourceChanges IS NOT NULL ORDER BY x_SourceChanges"
    ).fetchall()
    assert repaired == [
        ("InvalidTags", '{"Tags":"team=llm"}', None, *_prices(rows[0]), rows[0]["PricingUnit"], rows[0]["PricingUnit"]),
        # FOCUS: without a negotiated price ContractedCost is the ListCost, and the unit price follows
        ("MissingContractedCost,MissingContractedUnitPrice", None, '{"Oracle-Tags.CreatedBy":"ops","team":"llm"}',
         Decimal("1920"),
         Decimal("1920"), Decimal("10"), "GPU-Hours", "GPU Hours"),
        ("MissingListCost", None, None, Decimal("0.10625"), Decimal("0.10625"), Decimal("0.0085"), "GB-Months",
         "GB Months"),
    ]  # fmt: skip
    assert _slices(con) == [
        ("CoreWeave", "cw-org-4411", total(rows[:4], "BilledCost"), total(rows[:4], "EffectiveCost")),
        ("Oracle", "ocid1.tenancy.oc1..aaaahelios", total(rows[4:], "BilledCost"), total(rows[4:], "EffectiveCost")),
    ]


def _prices(row: Row) -> tuple[Decimal, Decimal, Decimal]:
    return Decimal(row["ListCost"]), Decimal(row["ContractedCost"]), Decimal(row["ContractedUnitPrice"])


def test_strict_rejects_a_delivery_with_repairs(con, tmp_path):
    rows = coreweave_rows()
    rows[2] |= {"Tags": "[1, 2]"}
    file = write_csv(tmp_path / "focus.csv", rows)
    with pytest.raises(InputError, match="InvalidTags") as error:
        load_delivery(con, Delivery("focus", (file,)), IngestConfig(strict=True))
    assert (error.value.file, error.value.column) == (str(file), "Tags")
    assert focus_snapshot(con).num_rows == 0


def test_missing_required_column_is_refused(con, tmp_path):
    rows = [{k: v for k, v in row.items() if k != "ServiceName"} for row in coreweave_rows()]
    file = write_csv(tmp_path / "no-service.csv", rows)
    with pytest.raises(InputError, match="required FOCUS column is missing") as error:
        load_delivery(con, Delivery("focus", (file,)))
    assert (error.value.file, error.value.column) == (str(file), "ServiceName")
    assert focus_snapshot(con).num_rows == 0


@pytest.mark.parametrize("version", ["1.2", "1.0"])
def test_output_passes_the_official_validator(con, tmp_path, validator_ready, version):
    file = write_csv(tmp_path / "focus.csv", as_version(coreweave_rows() + oracle_rows(), version))
    load_delivery(con, Delivery("focus", (file,)))
    # a 1.0 export names no meter: the charge's description stands for it (SHOULD rule SkuMeter-C-005-C)
    assert validate_warehouse(con, tmp_path) == []


@pytest.mark.parametrize(
    ("providers", "extras", "expected"),
    [
        (["CoreWeave", "Oracle"], {}, "focus"),
        (["Oracle"], {}, "focus"),
        (["AWS"], {"x_UsageType": "BoxUsage:p5.48xlarge"}, "aws-focus"),
        (["Amazon Web Services"], {}, "aws-focus"),
        (["Microsoft"], {"x_SkuMeterCategory": "Virtual Machines"}, "azure-focus"),
        (["AWS", "Microsoft"], {}, "focus"),
        (["CoreWeave"], {"x_UsageType": "BoxUsage:p5.48xlarge"}, "focus"),
    ],
)
def test_detect_tells_focus_exports_apart(con, tmp_path, providers, extras, expected):
    rows = [coreweave_rows()[0] | {"ProviderName": p} | extras for p in providers]
    assert detect_format(con, write_csv(tmp_path / "f.csv", rows)) == expected


# --- a configured [[sources]] folder of FOCUS files -------------------------------------------------------------


def _configure(home: Path, fmt: str, folder: str) -> None:
    text = f'[[sources]]\nname = "neo"\nformat = "{fmt}"\npath = "{folder}"\n'
    (home / "gpuledger.toml").write_text(text, encoding="utf-8")


def test_a_configured_focus_folder_gives_one_delivery_per_month_folder(con, home):
    root = home / "exports" / "neo"
    october = write_csv(root / "2026-10" / "part-1.csv", coreweave_rows()[:2])
    second = write_csv(root / "2026-10" / "part-2.csv", coreweave_rows()[2:])
    named = write_csv(root / "restated" / "coreweave-2026-09.csv", [])
    (root / "2026-10" / "notes.txt").write_text("not data")
    _configure(home, "focus", "exports/neo")
    deliveries = deliveries_for(home)
    assert [(d.source_format, d.billing_period, d.files, d.source_name) for d in deliveries] == [
        ("focus", "2026-09", (named,), "neo"),
        ("focus", "2026-10", (october, second), "neo"),
    ]
    (result,) = load_month(con, home, "focus", "2026-10")
    assert [(s.provider_name, s.rows, s.billed_cost) for s in result.slices] == [
        ("CoreWeave", 4, total(coreweave_rows(), "BilledCost"))
    ]
    assert load_month(con, home, "focus", "2026-10")[0].unchanged


def test_a_configured_focus_file_without_a_month_is_named(home):
    loose = write_csv(home / "exports" / "neo" / "costs.csv", coreweave_rows())
    _configure(home, "focus", "exports/neo")
    with pytest.raises(InputError, match="no billing month") as error:
        deliveries_for(home)
    assert error.value.file == str(loose)


def test_a_month_folders_rows_must_belong_to_its_month(con, home):
    write_csv(home / "exports" / "neo" / "BILLING_PERIOD=2026-11" / "part-1.csv", coreweave_rows())
    _configure(home, "focus", "exports/neo")
    with pytest.raises(InputError, match="period 2026-10"):
        load_month(con, home, "focus", "2026-11")
    assert focus_snapshot(con).num_rows == 0


def test_an_export_below_a_plain_focus_folder_is_not_read_file_by_file(home):
    # Its folders hold superseded runs too: reading every file would count them twice.
    data = home / "exports" / "all" / "focus-export" / "data" / "BILLING_PERIOD=2026-10"
    write_csv(data / "exec-1" / "part-1.csv", coreweave_rows())
    write_csv(data / "exec-2" / "part-1.csv", coreweave_rows())
    manifest = home / "exports" / "all" / "focus-export" / "metadata" / "BILLING_PERIOD=2026-10"
    manifest.mkdir(parents=True)
    (manifest / "focus-export-Manifest.json").write_text("{}", encoding="utf-8")
    _configure(home, "focus", "exports/all")
    with pytest.raises(InputError, match="point the source's path at the export's own folder") as error:
        deliveries_for(home)
    assert error.value.file == str(manifest / "focus-export-Manifest.json")


@pytest.mark.slow
def test_the_nightly_run_ingests_a_configured_focus_source(home):
    write_csv(home / "exports" / "neo" / "2026-10" / "part-1.csv", coreweave_rows())
    _configure(home, "focus", "exports/neo")
    assert main(["run", "--home", str(home)]) == 0
    with closing(connect_warehouse(home, read_only=True)) as con:
        rows = con.execute("SELECT ProviderName, count(*), sum(BilledCost) FROM focus.costs GROUP BY ALL").fetchall()
        split = con.execute("SELECT sum(BilledCost) FROM allocation.cost_split").fetchone()
    assert rows == [("CoreWeave", 4, total(coreweave_rows(), "BilledCost"))]
    assert split == (total(coreweave_rows(), "BilledCost"),)


# A provider billing in UTC+9: its November starts at 2026-10-31T15:00Z.
TOKYO_NOVEMBER = {
    "BillingPeriodStart": "2026-10-31T15:00:00Z",
    "BillingPeriodEnd": "2026-11-30T15:00:00Z",
    "ChargePeriodStart": "2026-11-02T15:00:00Z",
    "ChargePeriodEnd": "2026-11-03T15:00:00Z",
}


@pytest.mark.slow
def test_a_provider_billed_east_of_utc_is_in_its_local_month_for_run_export_and_status(home, tmp_path, capsys):
    rows = [row | TOKYO_NOVEMBER for row in coreweave_rows()]
    write_csv(home / "exports" / "neo" / "2026-11" / "part-1.csv", rows)
    _configure(home, "focus", "exports/neo")
    assert main(["run", "--home", str(home)]) == 0
    summary = capsys.readouterr().out
    slice_line = next(line for line in summary.splitlines() if "cw-org-4411" in line)
    assert "2026-11" in slice_line and "2026-10" not in slice_line
    assert any(line.split()[:2] == ["2026-11", "unallocated"] for line in summary.splitlines())

    exported = tmp_path / "november.parquet"
    assert main(["export-focus", "--home", str(home), "--month", "2026-11", "--out", str(exported)]) == 0
    assert duckdb.sql(f"SELECT count(*), sum(BilledCost) FROM '{exported}'").fetchone() == (
        4,
        total(rows, "BilledCost"),
    )
    october = tmp_path / "october.parquet"
    assert main(["export-focus", "--home", str(home), "--month", "2026-10", "--out", str(october)]) == 0
    assert duckdb.sql(f"SELECT count(*) FROM '{october}'").fetchone() == (0,)

    capsys.readouterr()
    main(["status", "--home", str(home)])
    status = capsys.readouterr().out
    months = status.split("Billing months (as last published):", 1)[1]
    assert "2026-11" in months and "2026-10" not in months
    assert "2026-11" in next(line for line in status.splitlines() if line.startswith("neo"))
