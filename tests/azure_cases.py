"""Hand-built Azure cost details (EA, MCA) and usage details rows, with their hand-computed FOCUS totals.

EA (enrollment 12345678, USD, January 2026): an on-demand H100 VM, a VM covered by a 1-year upfront
reservation (purchased this month for 18000.00, amortized 960.00 used + 540.00 unused), a Spot VM, storage
in GB-months and 10K transactions, and a marketplace purchase. MCA (billing profile BP-1, EUR billing, USD
pricing at 0.92): a savings plan purchase and its use, tax, a credit, a rounding adjustment and a refunded
reservation.
"""

from __future__ import annotations

import csv
import gzip
from decimal import Decimal
from pathlib import Path

ENROLLMENT = "12345678"
SUBSCRIPTION = "0a1b2c3d-0000-4000-8000-000000000001"
RESERVATION = "/providers/Microsoft.Capacity/reservationOrders/ORD-1/reservations/RES-1"
SAVINGS_PLAN = "/providers/Microsoft.BillingBenefits/savingsPlanOrders/SPO-1/savingsPlans/SP-1"
VM_ID = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/RG-ML/providers/Microsoft.Compute/virtualMachines/GPU-01"
VM2_ID = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/RG-ML/providers/Microsoft.Compute/virtualMachines/gpu-02"
STORAGE_ID = f"/subscriptions/{SUBSCRIPTION}/resourceGroups/rg-data/providers/Microsoft.Storage/storageAccounts/ckpt"

EA_HEADER = [
    "InvoiceSectionName",
    "AccountName",
    "SubscriptionId",
    "SubscriptionName",
    "ResourceGroup",
    "ResourceLocation",
    "Date",
    "ProductName",
    "MeterCategory",
    "MeterSubCategory",
    "MeterId",
    "MeterName",
    "MeterRegion",
    "UnitOfMeasure",
    "Quantity",
    "EffectivePrice",
    "CostInBillingCurrency",
    "ConsumedService",
    "ResourceId",
    "Tags",
    "AdditionalInfo",
    "ResourceName",
    "ReservationId",
    "ReservationName",
    "UnitPrice",
    "PublisherType",
    "PublisherName",
    "ChargeType",
    "Frequency",
    "PricingModel",
    "BillingAccountId",
    "BillingAccountName",
    "BillingCurrencyCode",
    "BillingPeriodStartDate",
    "BillingPeriodEndDate",
    "BillingProfileId",
    "PartNumber",
    "PayGPrice",
    "benefitId",
    "benefitName",
]

# The older EA spelling of a few columns (provider-exports.md 3.3).
EA_SHORT_NAMES = {
    "CostInBillingCurrency": "Cost",
    "ProductName": "Product",
    "BillingCurrencyCode": "BillingCurrency",
    "InvoiceSectionName": "InvoiceSection",
}

MCA_HEADER = [
    "invoiceId",
    "previousInvoiceId",
    "billingAccountId",
    "billingAccountName",
    "billingProfileId",
    "billingProfileName",
    "invoiceSectionName",
    "billingPeriodStartDate",
    "billingPeriodEndDate",
    "date",
    "serviceFamily",
    "consumedService",
    "meterId",
    "meterName",
    "meterCategory",
    "meterSubCategory",
    "meterRegion",
    "ProductId",
    "ProductName",
    "SubscriptionId",
    "subscriptionName",
    "publisherType",
    "publisherName",
    "resourceGroupName",
    "ResourceId",
    "resourceLocation",
    "effectivePrice",
    "quantity",
    "unitOfMeasure",
    "chargeType",
    "billingCurrency",
    "pricingCurrency",
    "costInBillingCurrency",
    "costInPricingCurrency",
    "costInUsd",
    "paygCostInBillingCurrency",
    "exchangeRatePricingToBilling",
    "additionalInfo",
    "tags",
    "PayGPrice",
    "frequency",
    "reservationId",
    "reservationName",
    "pricingModel",
    "unitPrice",
    "benefitId",
    "benefitName",
]

LEGACY_HEADER = [
    "DepartmentName",
    "AccountName",
    "AccountOwnerId",
    "SubscriptionGuid",
    "SubscriptionName",
    "ResourceGroup",
    "ResourceLocation",
    "UsageDateTime",
    "ProductName",
    "MeterCategory",
    "MeterSubcategory",
    "MeterId",
    "MeterName",
    "MeterRegion",
    "UnitOfMeasure",
    "UsageQuantity",
    "ResourceRate",
    "PreTaxCost",
    "CostCenter",
    "ConsumedService",
    "ResourceType",
    "InstanceId",
    "Tags",
    "OfferId",
    "AdditionalInfo",
    "ServiceInfo1",
    "ServiceInfo2",
    "Currency",
]

H100 = {
    "ProductName": "Virtual Machines NDv5 Series - ND96isr H100 v5 - US East",
    "MeterCategory": "Virtual Machines",
    "MeterSubCategory": "NDv5 Series",
    "MeterId": "11111111-aaaa-4000-8000-000000000001",
    "MeterName": "ND96isr H100 v5",
    "MeterRegion": "US East",
    "UnitOfMeasure": "1 Hour",
    "ConsumedService": "Microsoft.Compute",
    "AdditionalInfo": '{"ServiceType": "Standard_ND96isr_H100_v5", "VCPUs": 96}',
    "PartNumber": "AAH-00001",
}


def _ea_row(cost: str, **fields: str) -> dict[str, str]:
    row = dict.fromkeys(EA_HEADER, "")
    row.update(
        {
            "InvoiceSectionName": "Research",
            "AccountName": "ml-platform",
            "SubscriptionId": SUBSCRIPTION,
            "SubscriptionName": "ml-prod",
            "ResourceLocation": "EastUS",
            "Date": "01/05/2026",
            "CostInBillingCurrency": cost,
            "ChargeType": "Usage",
            "Frequency": "UsageBased",
            "PricingModel": "OnDemand",
            "PublisherType": "Azure",
            "PublisherName": "Microsoft",
            "BillingAccountId": ENROLLMENT,
            "BillingAccountName": "Contoso Enrollment",
            "BillingCurrencyCode": "USD",
            "BillingPeriodStartDate": "01/01/2026",
            "BillingPeriodEndDate": "01/31/2026",
            "BillingProfileId": ENROLLMENT,
        }
    )
    row.update(fields)
    return row


def _ea_common() -> list[dict[str, str]]:
    """Rows identical in the actual and the amortized dataset."""
    return [
        _ea_row(
            "2359.68",
            **H100,
            ResourceGroup="RG-ML",
            ResourceId=VM_ID,
            ResourceName="GPU-01",
            Quantity="24",
            EffectivePrice="98.32",
            UnitPrice="98.32",
            PayGPrice="98.32",
            Tags='"team": "llm","env": "prod"',
        ),
        _ea_row(
            "12",
            ProductName="Virtual Machines NC A100 v4 Series - NC24ads A100 v4 - Spot",
            MeterCategory="Virtual Machines",
            MeterSubCategory="NC A100 v4 Series",
            MeterId="11111111-aaaa-4000-8000-000000000002",
            MeterName="NC24ads A100 v4 Spot",
            UnitOfMeasure="1 Hour",
            ConsumedService="Microsoft.Compute",
            ResourceGroup="RG-ML",
            ResourceId=VM_ID.replace("GPU-01", "spot-01"),
            Quantity="10",
            EffectivePrice="1.2",
            UnitPrice="1.2",
            PayGPrice="3.67",
            PricingModel="Spot",
            Date="1/7/2026",
        ),
        _ea_row(
            "2.01",
            ProductName="Premium SSD v2 - LRS",
            MeterCategory="Storage",
            MeterSubCategory="Blob Storage",
            MeterId="22222222-aaaa-4000-8000-000000000001",
            MeterName="Hot LRS Data Stored",
            UnitOfMeasure="1 GB/Month",
            ConsumedService="Microsoft.Storage",
            ResourceGroup="rg-data",
            ResourceId=STORAGE_ID,
            Quantity="100.5",
            EffectivePrice="0.02",
            UnitPrice="0.02",
            PayGPrice="0.0208",
            Tags='"purpose": "checkpoints"',
            Date="2026-01-08",
        ),
        _ea_row(
            "0.014",
            ProductName="Blob Storage - Hot LRS - Write Operations",
            MeterCategory="Storage",
            MeterSubCategory="Blob Storage",
            MeterId="22222222-aaaa-4000-8000-000000000002",
            MeterName="Hot LRS Write Operations",
            UnitOfMeasure="10K",
            ConsumedService="Microsoft.Storage",
            ResourceGroup="rg-data",
            ResourceId=STORAGE_ID.upper(),
            Quantity="3.5",
            EffectivePrice="0.004",
            UnitPrice="0.004",
            Date="2026-01-09 00:00:00",
        ),
        _ea_row(
            "50",
            ProductName="NVIDIA AI Enterprise - Monthly",
            MeterCategory="",
            MeterId="",
            UnitOfMeasure="1/Month",
            Quantity="1",
            EffectivePrice="50",
            UnitPrice="50",
            PublisherType="Marketplace",
            PublisherName="NVIDIA",
            ChargeType="Purchase",
            Frequency="Recurring",
            PricingModel="",
            ResourceLocation="",
            Date="2026-01-01T00:00:00",
        ),
    ]


def _covered(cost: str, effective_price: str) -> dict[str, str]:
    return _ea_row(
        cost,
        **H100,
        ResourceGroup="rg-ml",
        ResourceId=VM2_ID.lower(),
        Quantity="24",
        EffectivePrice=effective_price,
        UnitPrice="98.32",
        PricingModel="Reservation",
        ReservationId="res-1",
        ReservationName="h100-1y",
        benefitId=RESERVATION,
        benefitName="h100-1y",
        Date="01/06/2026",
    )


def ea_actual() -> list[dict[str, str]]:
    """Actual cost: the reservation purchase is billed whole; the usage it covers costs 0."""
    purchase = _ea_row(
        "18000",
        ProductName="Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
        ConsumedService="Microsoft.Capacity",
        UnitOfMeasure="1 Hour",
        Quantity="1",
        EffectivePrice="18000",
        UnitPrice="18000",
        ChargeType="Purchase",
        Frequency="OneTime",
        PricingModel="Reservation",
        ReservationId="res-1",
        ReservationName="h100-1y",
        benefitId=RESERVATION,
        benefitName="h100-1y",
        SubscriptionId="",
        SubscriptionName="",
        ResourceLocation="",
        Date="01/01/2026",
    )
    return [*_ea_common(), _covered("0", "0"), purchase]


def ea_amortized() -> list[dict[str, str]]:
    """Amortized cost: no purchase row; the covered usage carries 960.00, the unused part 540.00."""
    unused = _ea_row(
        "540",
        ProductName="Reserved VM Instance, Standard_ND96isr_H100_v5, US East, 1 Year",
        ConsumedService="Microsoft.Capacity",
        UnitOfMeasure="1 Hour",
        Quantity="13.5",
        EffectivePrice="40",
        UnitPrice="40",
        ChargeType="UnusedReservation",
        Frequency="UsageBased",
        PricingModel="Reservation",
        ReservationId="res-1",
        ReservationName="h100-1y",
        benefitId=RESERVATION.upper(),
        benefitName="h100-1y",
        SubscriptionId="",
        SubscriptionName="",
        Date="01/31/2026",
    )
    return [*_ea_common(), _covered("960", "40"), unused]


EA_ACTUAL_TOTAL = Decimal("20423.704")
EA_AMORTIZED_TOTAL = Decimal("3923.704")
EA_PURCHASE = Decimal("18000")
EA_AMORTIZED_CHARGES = Decimal("1500")  # 960 covered + 540 unused


MCA_PROFILE = "AAAA-BBBB-CCC-DDD"
MCA_ACCOUNT = "e9a1b2c3-0000-4000-8000-000000000009:e9a1b2c3-0000-4000-8000-000000000010_2019-05-31"


def _mca_row(cost_eur: str, cost_usd: str, **fields: str) -> dict[str, str]:
    row = dict.fromkeys(MCA_HEADER, "")
    row.update(
        {
            "invoiceId": "G012345678",
            "billingAccountId": MCA_ACCOUNT,
            "billingAccountName": "Contoso Ltd",
            "billingProfileId": MCA_PROFILE,
            "billingProfileName": "Contoso Europe",
            "invoiceSectionName": "Research",
            "billingPeriodStartDate": "2026-01-01",
            "billingPeriodEndDate": "2026-01-31",
            "date": "2026-01-10",
            "SubscriptionId": SUBSCRIPTION,
            "subscriptionName": "ml-prod",
            "publisherType": "Microsoft",
            "publisherName": "Microsoft Corporation",
            "resourceLocation": "westeurope",
            "chargeType": "Usage",
            "billingCurrency": "EUR",
            "pricingCurrency": "USD",
            "costInBillingCurrency": cost_eur,
            "costInPricingCurrency": cost_usd,
            "costInUsd": cost_usd,
            "exchangeRatePricingToBilling": "0.92",
            "frequency": "UsageBased",
            "pricingModel": "OnDemand",
        }
    )
    row.update(fields)
    return row


_A100 = {
    "serviceFamily": "Compute",
    "consumedService": "Microsoft.Compute",
    "meterId": "33333333-aaaa-4000-8000-000000000001",
    "meterName": "NC24ads A100 v4",
    "meterCategory": "Virtual Machines",
    "meterSubCategory": "NC A100 v4 Series",
    "ProductId": "DZH318Z0BPVW",
    "ProductName": "Virtual Machines NC A100 v4 Series",
    "unitOfMeasure": "1 Hour",
    "resourceGroupName": "rg-ml",
    "additionalInfo": '{"ServiceType": "Standard_NC24ads_A100_v4"}',
}


def _mca_common() -> list[dict[str, str]]:
    return [
        _mca_row(
            "33.764",
            "36.7",
            **_A100,
            ResourceId=VM_ID.replace("GPU-01", "a100-01"),
            effectivePrice="3.67",
            unitPrice="3.67",
            PayGPrice="3.67",
            quantity="10",
            paygCostInBillingCurrency="33.764",
            tags='"team": "vision"',
        ),
        _mca_row("10", "10.87", chargeType="Tax", frequency="Recurring", pricingModel="", resourceLocation=""),
        _mca_row("-5", "-5.43", chargeType="Credit", frequency="OneTime", pricingModel="", resourceLocation=""),
        _mca_row("0.01", "0.01", chargeType="RoundingAdjustment", frequency="OneTime", pricingModel=""),
    ]


def _mca_covered(cost_eur: str, cost_usd: str, price: str) -> dict[str, str]:
    return _mca_row(
        cost_eur,
        cost_usd,
        **_A100,
        ResourceId=VM_ID.replace("GPU-01", "a100-02"),
        effectivePrice=price,
        unitPrice="3.67",
        quantity="20",
        pricingModel="SavingsPlan",
        benefitId=SAVINGS_PLAN,
        benefitName="compute-sp",
    )


def mca_actual() -> list[dict[str, str]]:
    purchase = _mca_row(
        "920",
        "1000",
        consumedService="Microsoft.BillingBenefits",
        ProductName="Azure Savings Plan for Compute",
        unitOfMeasure="1 Hour",
        quantity="1",
        effectivePrice="1000",
        unitPrice="1000",
        chargeType="Purchase",
        frequency="Recurring",
        pricingModel="SavingsPlan",
        benefitId=SAVINGS_PLAN,
        benefitName="compute-sp",
        SubscriptionId="",
        subscriptionName="",
        resourceLocation="",
        date="2026-01-01",
    )
    refund = _mca_row(
        "-100",
        "-108.7",
        consumedService="Microsoft.Capacity",
        ProductName="Reserved VM Instance, Standard_NC24ads_A100_v4, West Europe, 1 Year",
        unitOfMeasure="1 Hour",
        quantity="1",
        effectivePrice="-108.7",
        unitPrice="108.7",
        chargeType="Refund",
        frequency="OneTime",
        pricingModel="Reservation",
        reservationId="res-9",
        reservationName="old-a100",
        benefitId=RESERVATION.replace("RES-1", "RES-9"),
        benefitName="old-a100",
        previousInvoiceId="G000000001",
        resourceLocation="",
        date="2026-01-15",
    )
    return [*_mca_common(), _mca_covered("0", "0", "0"), purchase, refund]


def mca_amortized() -> list[dict[str, str]]:
    unused = _mca_row(
        "900",
        "978.26",
        consumedService="Microsoft.BillingBenefits",
        ProductName="Azure Savings Plan for Compute",
        unitOfMeasure="1 Hour",
        quantity="720",
        effectivePrice="1.358695",
        unitPrice="1.358695",
        chargeType="UnusedSavingsPlan",
        frequency="UsageBased",
        pricingModel="SavingsPlan",
        benefitId=SAVINGS_PLAN,
        benefitName="compute-sp",
        SubscriptionId="",
        subscriptionName="",
        resourceLocation="",
        date="2026-01-31",
    )
    return [*_mca_common(), _mca_covered("20", "21.74", "1.087"), unused]


MCA_ACTUAL_TOTAL = Decimal("33.764") + 10 - 5 + Decimal("0.01") + 0 + 920 - 100  # 858.774
MCA_AMORTIZED_TOTAL = Decimal("33.764") + 10 - 5 + Decimal("0.01") + 20 + 900  # 958.774


def legacy_rows() -> list[dict[str, str]]:
    """2019-10-01 usage details: PreTaxCost, UsageDateTime, InstanceId, Tags with braces; no billing account."""

    def row(cost: str, **fields: str) -> dict[str, str]:
        base = dict.fromkeys(LEGACY_HEADER, "")
        base.update(
            {
                "DepartmentName": "Research",
                "AccountName": "ml-platform",
                "AccountOwnerId": "owner@contoso.com",
                "SubscriptionGuid": SUBSCRIPTION,
                "SubscriptionName": "ml-prod",
                "ResourceGroup": "RG-ML",
                "ResourceLocation": "eastus",
                "UsageDateTime": "2026-01-05",
                "PreTaxCost": cost,
                "Currency": "USD",
            }
        )
        base.update(fields)
        return base

    return [
        row(
            "196.64",
            ProductName="Virtual Machines NDv5 Series - ND96isr H100 v5 - US East",
            MeterCategory="Virtual Machines",
            MeterSubcategory="NDv5 Series",
            MeterId=H100["MeterId"],
            MeterName="ND96isr H100 v5",
            UnitOfMeasure="1 Hour",
            UsageQuantity="2",
            ResourceRate="98.32",
            ConsumedService="Microsoft.Compute",
            ResourceType="Microsoft.Compute/virtualMachines",
            InstanceId=VM_ID,
            Tags='{"team": "llm"}',
            AdditionalInfo=H100["AdditionalInfo"],
        ),
        row(
            "0.5",
            ProductName="Bandwidth - Data Transfer Out",
            MeterCategory="Bandwidth",
            MeterName="Standard Data Transfer Out",
            UnitOfMeasure="1 GB",
            UsageQuantity="5.75",
            ResourceRate="0.0869565217",
            ConsumedService="Microsoft.Compute",
            InstanceId=VM_ID,
            UsageDateTime="2026-01-06T00:00:00.0000000Z",
        ),
    ]


LEGACY_TOTAL = Decimal("196.64") + Decimal("0.5")


def write_csv(path: Path, rows: list[dict[str, str]], header: list[str] | None = None, *, bom: bool = True) -> Path:
    """Rows as an Azure CSV: UTF-8 BOM, CRLF, every field quoted like Cost Management writes them."""
    columns = header or list(rows[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, columns, quoting=csv.QUOTE_ALL, lineterminator="\r\n", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def renamed(rows: list[dict[str, str]], names: dict[str, str]) -> list[dict[str, str]]:
    return [{names.get(k, k): v for k, v in row.items()} for row in rows]
