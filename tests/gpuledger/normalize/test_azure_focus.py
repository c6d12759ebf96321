"""Azure FocusCost exports (1.0, 1.0r2, 1.2-preview, 1.2) -> FOCUS 1.2: passthrough plus Microsoft's x_ columns."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from gpuledger.gates.checks import run_checks
from gpuledger.gates.load import load_delivery
from gpuledger.normalize.detect import detect_format
from models.delivery import Delivery
from models.errors import InputError
from pipelines.deliveries import deliveries_for, load_month
from tests.conftest import focus_snapshot, validate_warehouse
from tests.fixtures.focus_cases import Row, total, write_csv, write_parquet

MCA_PROFILE = "/providers/Microsoft.Billing/billingAccounts/7c4f2e:0a1b_2019-05-31/billingProfiles/HX5Y-ABCD-BG7-PGB"
EA_ENROLLMENT = "/providers/Microsoft.Billing/billingAccounts/8611537"
SUBSCRIPTION = "/subscriptions/5f1c9a7e-0000-4000-8000-00000000a001"
RESERVATION = "/providers/Microsoft.Capacity/reservationOrders/7d1e/reservations/c3a9"
VM = f"{SUBSCRIPTION}/resourceGroups/rg-gpu/providers/Microsoft.Compute/virtualMachines"
H100_DETAILS = '{"UsageType":"ComputeHR","ImageType":"Canonical","ServiceType":"Standard_ND96isr_H100_v5","VCPUs":96}'

COMMON: Row = {
    "BillingAccountId": MCA_PROFILE,
    "BillingAccountName": "Helios Research",
    "BillingCurrency": "USD",
    "BillingPeriodStart": "2026-10-01T00:00Z",
    "BillingPeriodEnd": "2026-11-01T00:00Z",
    "ChargePeriodStart": "2026-10-03T00:00Z",
    "ChargePeriodEnd": "2026-10-04T00:00Z",
    "ChargeClass": None,
    "InvoiceIssuerName": "Microsoft",
    "ProviderName": "Microsoft",
    "PublisherName": "Microsoft",
    "SubAccountId": SUBSCRIPTION,
    "SubAccountName": "ml-training",
    "RegionId": "eastus",
    "RegionName": "East US",
    "ServiceCategory": "Compute",
    "ServiceName": "Virtual Machines",
    "ChargeFrequency": "Usage-Based",
    "PricingUnit": "Hours",
    "SkuId": "DZH318Z08M22",
    "SkuPriceId": "DZH318Z08M22/00K5",
    "CommitmentDiscountId": None,
    "CommitmentDiscountCategory": None,
    "CommitmentDiscountName": None,
    "CommitmentDiscountType": None,
    "CommitmentDiscountStatus": None,
    "ConsumedQuantity": None,
    "ConsumedUnit": None,
    "Tags": None,
    "x_BillingAccountId": "7c4f2e:0a1b_2019-05-31",
    "x_BillingProfileId": "HX5Y-ABCD-BG7-PGB",
    "x_InvoiceId": "G117845219",
    "x_PricingCurrency": "USD",
    "x_BillingExchangeRate": "1",
    "x_ResourceGroupName": "rg-gpu",
    "x_SkuMeterCategory": "Virtual Machines",
    "x_SkuMeterSubcategory": "NDisrH100v5 Series",
    "x_SkuMeterName": "ND96isr H100 v5",
    "x_SkuDetails": H100_DETAILS,
    "x_ResourceType": "microsoft.compute/virtualmachines",
}


def _priced(quantity: str, unit_price: str, cost: str) -> Row:
    return {
        "PricingQuantity": quantity,
        "ListUnitPrice": unit_price,
        "ContractedUnitPrice": unit_price,
        "ListCost": cost,
        "ContractedCost": cost,
    }


ON_DEMAND = (
    COMMON
    | _priced("24", "98.32", "2359.68")
    | {
        "ChargeCategory": "Usage",
        "ChargeDescription": "ND96isr H100 v5 - East US",
        "PricingCategory": "Standard",
        "ConsumedQuantity": "24",
        "ConsumedUnit": "Hours",
        "BilledCost": "2359.68",
        "EffectiveCost": "2359.68",
        "ResourceId": f"{VM}/gpu-a",
        "ResourceName": "gpu-a",
        "ResourceType": "Virtual machine",
        "Tags": '{"team":"llm","job":"pretrain-7"}',
    }
)
COMMITMENT: Row = {
    "CommitmentDiscountId": RESERVATION,
    "CommitmentDiscountCategory": "Usage",
    "CommitmentDiscountName": "nd-h100-1y",
    "CommitmentDiscountType": "Reservation",
}
PURCHASE = (
    COMMON
    | COMMITMENT
    | _priced("1", "1000", "1000")
    | {
        "ChargeCategory": "Purchase",
        "ChargeDescription": "Reserved VM Instance, ND96isr H100 v5, 1 Year",
        "ChargeFrequency": "One-Time",
        "PricingCategory": "Standard",
        "PricingUnit": "Units",
        "BilledCost": "1000",
        "EffectiveCost": "0",
        "ResourceId": RESERVATION,
        "ResourceName": "nd-h100-1y",
        "ResourceType": "Reservation",
        "x_SkuDetails": None,
    }
)
COVERED = (
    ON_DEMAND
    | COMMITMENT
    | {
        "CommitmentDiscountStatus": "Used",
        "PricingCategory": "Committed",
        "BilledCost": "0",
        "EffectiveCost": "600",
        "ResourceId": f"{VM}/gpu-b",
        "ResourceName": "gpu-b",
    }
)
UNUSED = (
    COMMON
    | COMMITMENT
    | _priced("8", "98.32", "786.56")
    | {
        "ChargeCategory": "Usage",
        "ChargeDescription": "Unused reservation hours",
        "CommitmentDiscountStatus": "Unused",
        "PricingCategory": "Committed",
        "BilledCost": "0",
        "EffectiveCost": "400",
        "ResourceId": RESERVATION,
        "ResourceName": "nd-h100-1y",
        "ResourceType": "Reservation",
    }
)
EGRESS = (
    COMMON
    | _priced("150", "0.087", "13.05")
    | {
        "ChargeCategory": "Usage",
        "ChargeDescription": "Standard Data Transfer Out",
        "ServiceCategory": "Networking",
        "ServiceName": "Bandwidth",
        "PricingCategory": "Standard",
        "PricingUnit": "GB",
        "ConsumedQuantity": "150",
        "ConsumedUnit": "GB",
        "SkuId": "DZH318Z0BP04",
        "SkuPriceId": "DZH318Z0BP04/0012",
        "BilledCost": "13.05",
        "EffectiveCost": "13.05",
        "ResourceId": f"{VM}/gpu-a",
        "ResourceName": "gpu-a",
        "ResourceType": "Virtual machine",
        "x_SkuMeterCategory": "Bandwidth",
        "x_SkuMeterSubcategory": "Inter-Region",
        "x_SkuMeterName": "Standard Data Transfer Out",
        "x_SkuDetails": None,
    }
)
FOCUS_COST_1_0 = [ON_DEMAND, PURCHASE, COVERED, UNUSED, EGRESS]


def focus_cost_1_2(*, preview: bool = False) -> list[Row]:
    """The same charges as FocusCost 1.2 writes them (1.2-preview lacks account types and pricing-currency prices)."""
    rows = []
    for row in FOCUS_COST_1_0:
        new = {k: v for k, v in row.items() if k not in ("x_InvoiceId", "x_PricingCurrency")} | {
            "InvoiceId": "G117845219",
            "PricingCurrency": "USD",
            "ServiceSubcategory": "Network Connectivity" if row is EGRESS else "Virtual Machines",
            "SkuMeter": row["x_SkuMeterName"],
            "SkuPriceDetails": None
            if row is EGRESS
            else '{"CoreCount": 96, "InstanceType": "Standard_ND96isr_H100_v5"}',
            "CapacityReservationId": None,
            "CapacityReservationStatus": None,
            "CommitmentDiscountQuantity": row["PricingQuantity"] if row["CommitmentDiscountId"] else None,
            "CommitmentDiscountUnit": row["PricingUnit"] if row["CommitmentDiscountId"] else None,
            "x_AmortizationClass": "Principal" if row is PURCHASE else None,
        }
        if not preview:
            new |= {
                "BillingAccountType": "Billing Profile",
                "SubAccountType": "Subscription",
                "PricingCurrencyEffectiveCost": row["EffectiveCost"],
                "PricingCurrencyListUnitPrice": row["ListUnitPrice"],
                "PricingCurrencyContractedUnitPrice": row["ContractedUnitPrice"],
            }
        rows.append(new)
    return rows


def _with_seconds(rows: list[Row]) -> list[Row]:
    """FocusCost 1.0r2: timestamps with seconds."""
    times = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")
    return [row | {t: str(row[t]).replace(":00Z", ":00:00Z") for t in times} for row in rows]


def _totals(con) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT ProviderName, BillingAccountId, BillingCurrency, sum(BilledCost), sum(EffectiveCost), count(*)"
        " FROM focus.costs GROUP BY ALL"
    ).fetchall()


def _assert_conformant(con) -> None:
    assert [f"{r.check}: {r.sample}" for r in run_checks(con) if not r.passed] == []


@pytest.mark.parametrize(("dataset", "rows"), [("1.0", FOCUS_COST_1_0), ("1.0r2", _with_seconds(FOCUS_COST_1_0))])
def test_focus_cost_1_0_is_upgraded_with_microsofts_columns(con, tmp_path, dataset, rows):
    file = write_csv(tmp_path / f"part_0_0001-{dataset}.csv", rows, bom=True)
    load_delivery(con, Delivery("azure-focus", (file,)))

    _assert_conformant(con)
    assert _totals(con) == [
        ("Microsoft", MCA_PROFILE, "USD", total(rows, "BilledCost"), total(rows, "EffectiveCost"), 5)
    ]
    assert total(rows, "BilledCost") == Decimal("3372.73")
    vm = con.execute(
        "SELECT BillingPeriodStart, BillingAccountType, SubAccountType, InvoiceId, SkuMeter, SkuPriceDetails,"
        " ServiceSubcategory, x_ServiceCode, x_UsageType, x_InstanceType, x_SourceVersion, x_SourceFormat"
        " FROM focus.costs WHERE ResourceName = 'gpu-a' AND ServiceName = 'Virtual Machines'"
    ).fetchone()
    assert vm[1:] == (
        "Billing Profile",
        "Subscription",
        "G117845219",
        "ND96isr H100 v5",
        '{"x_ImageType":"Canonical","x_ServiceType":"Standard_ND96isr_H100_v5","x_UsageType":"ComputeHR","x_VCPUs":96}',
        "Virtual Machines",
        "Virtual Machines",
        "ND96isr H100 v5",
        "Standard_ND96isr_H100_v5",
        "1.0",
        "azure-focus-1.0",
    )
    assert str(vm[0]) == "2026-10-01 00:00:00+00:00"
    # The VM size is the GPU catalog's key: Azure's H100 node is known as 8 GPUs.
    gpus = con.execute(
        "SELECT g.gpu_model, g.gpu_count FROM focus.costs AS c JOIN ref.gpu_instances AS g"
        " ON g.provider = c.ProviderName AND g.instance_type = c.x_InstanceType WHERE c.ResourceName = 'gpu-a'"
    ).fetchall()
    assert gpus == [("H100", 8)]
    commitment = con.execute(
        "SELECT ChargeCategory, CommitmentDiscountQuantity, CommitmentDiscountUnit FROM focus.costs"
        " WHERE CommitmentDiscountId IS NOT NULL ORDER BY ALL"
    ).fetchall()
    assert commitment == [
        ("Purchase", Decimal(1), "Units"),
        ("Usage", Decimal(8), "Hours"),
        ("Usage", Decimal(24), "Hours"),
    ]


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_focus_cost_1_2_passes_through(con, tmp_path, suffix):
    rows = focus_cost_1_2()
    path = tmp_path / f"focuscost-1.2{suffix}"
    file = write_parquet(path, _with_seconds(rows)) if suffix == ".parquet" else write_csv(path, rows, bom=True)
    load_delivery(con, Delivery("azure-focus", (file,)))

    _assert_conformant(con)
    assert _totals(con) == [("Microsoft", MCA_PROFILE, "USD", Decimal("3372.73"), Decimal("3372.73"), 5)]
    purchase = con.execute(
        "SELECT SkuPriceDetails, x_AmortizationClass, x_InstanceType, x_SourceVersion, ServiceSubcategory"
        " FROM focus.costs WHERE ChargeCategory = 'Purchase'"
    ).fetchone()
    assert purchase == (
        '{"CoreCount":96,"InstanceType":"Standard_ND96isr_H100_v5"}',
        "Principal",
        "Standard_ND96isr_H100_v5",
        "1.2",
        "Virtual Machines",
    )


def test_focus_cost_1_2_preview_gets_the_1_2_columns_it_lacks(con, tmp_path):
    file = write_csv(tmp_path / "focuscost-1.2-preview.csv", focus_cost_1_2(preview=True), bom=True)
    load_delivery(con, Delivery("azure-focus", (file,)))

    _assert_conformant(con)
    derived = con.execute(
        "SELECT DISTINCT BillingAccountType, SubAccountType, PricingCurrency, x_SourceVersion FROM focus.costs"
    ).fetchall()
    assert derived == [("Billing Profile", "Subscription", "USD", "1.2")]


def test_pricing_currency_prices_come_from_azures_exchange_rate(con, tmp_path):
    """EA billed in EUR, priced in USD: 1 USD = 0.92 EUR, so a 92 EUR unit price is 100 USD."""
    euro = {"BillingAccountId": EA_ENROLLMENT, "BillingCurrency": "EUR", "x_BillingExchangeRate": "0.92"}
    rows = [row | euro for row in FOCUS_COST_1_0]
    rows[0] |= _priced("24", "92", "2208") | {"BilledCost": "2208", "EffectiveCost": "2208"}
    load_delivery(con, Delivery("azure-focus", (write_csv(tmp_path / "eur.csv", rows, bom=True),)))

    _assert_conformant(con)
    priced = con.execute(
        "SELECT BillingAccountType, PricingCurrency, PricingCurrencyListUnitPrice, PricingCurrencyEffectiveCost"
        " FROM focus.costs WHERE ResourceName = 'gpu-a' AND ServiceName = 'Virtual Machines'"
    ).fetchone()
    assert priced == ("Billing Account", "USD", Decimal(100), Decimal(2400))
    assert _totals(con)[0][2:5] == ("EUR", total(rows, "BilledCost"), total(rows, "EffectiveCost"))


def test_bad_cost_names_file_row_and_column(con, tmp_path):
    rows = [dict(row) for row in FOCUS_COST_1_0]
    rows[3]["EffectiveCost"] = "4OO"
    file = write_csv(tmp_path / "bad.csv", rows, bom=True)
    with pytest.raises(InputError, match="'4OO' is not a decimal number") as error:
        load_delivery(con, Delivery("azure-focus", (file,)))
    assert (error.value.file, error.value.row, error.value.column) == (str(file), 4, "EffectiveCost")
    assert focus_snapshot(con).num_rows == 0


def test_detects_focus_cost_exports(con, tmp_path):
    assert detect_format(con, write_csv(tmp_path / "a.csv", FOCUS_COST_1_0, bom=True)) == "azure-focus"
    assert detect_format(con, write_parquet(tmp_path / "b.parquet", _with_seconds(focus_cost_1_2()))) == "azure-focus"


def test_upgraded_focus_cost_1_0_passes_the_official_validator(con, tmp_path, validator_ready):
    load_delivery(con, Delivery("azure-focus", (write_csv(tmp_path / "focuscost.csv", FOCUS_COST_1_0, bom=True),)))
    assert validate_warehouse(con, tmp_path) == []


# --- a configured azure-focus source: FocusCost export runs, or a folder of files -------------------------------


def _focus_cost_run(root: Path, run_id: str, submitted: str, rows: list[Row]) -> Path:
    """One FocusCost export run as the storage container holds it: data parts, then manifest.json."""
    run = root / "focus-mca" / "20261001-20261031" / "202611010600" / run_id
    data = write_csv(run / "part_0_0001.csv", rows, bom=True)
    manifest = {
        "exportConfig": {"exportName": "focus-mca", "type": "FocusCost", "dataVersion": "1.0"},
        "runInfo": {"submittedTime": submitted, "runId": run_id},
        "blobs": [{"blobName": f"exports/focus-mca/20261001-20261031/202611010600/{run_id}/{data.name}"}],
    }
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return data


def _configure(home: Path, folder: str) -> None:
    text = f'[[sources]]\nname = "azure"\nformat = "azure-focus"\npath = "{folder}"\n'
    (home / "gpuledger.toml").write_text(text, encoding="utf-8")


def test_a_configured_focus_cost_export_loads_its_newest_complete_run(con, home):
    root = home / "exports"
    _focus_cost_run(root, "run-1", "2026-11-01T06:00:00Z", FOCUS_COST_1_0[:2])
    newest = _focus_cost_run(root, "run-2", "2026-11-02T06:00:00Z", FOCUS_COST_1_0)
    (root / "focus-mca" / "20261001-20261031" / "202611030600" / "run-3").mkdir(parents=True)  # still writing
    for folder in ("exports", "exports/focus-mca"):  # a folder of exports, or the export itself
        _configure(home, folder)
        (delivery,) = deliveries_for(home, "azure")
        assert (delivery.source_format, delivery.files, delivery.billing_period, delivery.version) == (
            "azure-focus",
            (newest,),
            "2026-10",
            "run-2",
        )
    (result,) = load_month(con, home, "azure", "2026-10")
    assert [(s.provider_name, s.rows, s.billed_cost) for s in result.slices] == [
        ("Microsoft", 5, total(FOCUS_COST_1_0, "BilledCost"))
    ]


def test_a_configured_azure_focus_folder_of_month_files(con, home):
    file = write_csv(home / "downloads" / "focuscost-2026-10.csv", FOCUS_COST_1_0, bom=True)
    _configure(home, "downloads")
    (delivery,) = deliveries_for(home, "azure", "2026-10")
    assert (delivery.files, delivery.billing_period) == ((file,), "2026-10")
    (result,) = load_month(con, home, "azure", "2026-10")
    assert [s.rows for s in result.slices] == [5]
