"""Hand-built AWS CUR line items covering every line item type, with their hand-computed FOCUS totals."""

from __future__ import annotations

import csv
import gzip
from decimal import Decimal
from pathlib import Path

PAYER = "012345678901"
LINKED = "000987654321"
PERIOD_START = "2026-11-01T00:00:00.000Z"
PERIOD_END = "2026-12-01T00:00:00.000Z"
RI_ARN = "arn:aws:ec2:us-east-1:000987654321:reserved-instances/ri-0001"
SP_ARN = "arn:aws:savingsplans::000987654321:savingsplan/sp-0001"

CUR1_HEADER = [
    "identity/LineItemId",
    "identity/TimeInterval",
    "bill/InvoiceId",
    "bill/BillingEntity",
    "bill/BillType",
    "bill/PayerAccountId",
    "bill/BillingPeriodStartDate",
    "bill/BillingPeriodEndDate",
    "lineItem/UsageAccountId",
    "lineItem/LineItemType",
    "lineItem/UsageStartDate",
    "lineItem/UsageEndDate",
    "lineItem/ProductCode",
    "lineItem/UsageType",
    "lineItem/Operation",
    "lineItem/AvailabilityZone",
    "lineItem/ResourceId",
    "lineItem/UsageAmount",
    "lineItem/CurrencyCode",
    "lineItem/UnblendedRate",
    "lineItem/UnblendedCost",
    "lineItem/LineItemDescription",
    "product/ProductName",
    "product/sku",
    "product/regionCode",
    "product/instanceType",
    "pricing/unit",
    "pricing/RateCode",
    "pricing/publicOnDemandRate",
    "pricing/publicOnDemandCost",
    "pricing/term",
    "reservation/ReservationARN",
    "reservation/EffectiveCost",
    "reservation/UnusedAmortizedUpfrontFeeForBillingPeriod",
    "reservation/UnusedRecurringFee",
    "reservation/UnusedQuantity",
    "savingsPlan/SavingsPlanARN",
    "savingsPlan/SavingsPlanEffectiveCost",
    "savingsPlan/TotalCommitmentToDate",
    "savingsPlan/UsedCommitment",
    "resourceTags/user:team",
    "resourceTags/aws:createdBy",
    "costCategory/Business Unit",
]


def _row(line_item_id: str, item_type: str, cost: str, **fields: str) -> dict[str, str]:
    row = dict.fromkeys(CUR1_HEADER, "")
    row.update(
        {
            "identity/LineItemId": line_item_id,
            "identity/TimeInterval": "2026-11-03T00:00:00Z/2026-11-03T01:00:00Z",
            "bill/BillingEntity": "AWS",
            "bill/BillType": "Anniversary",
            "bill/PayerAccountId": PAYER,
            "bill/BillingPeriodStartDate": PERIOD_START,
            "bill/BillingPeriodEndDate": PERIOD_END,
            "lineItem/UsageAccountId": LINKED,
            "lineItem/LineItemType": item_type,
            "lineItem/UsageStartDate": "2026-11-03T00:00:00Z",
            "lineItem/UsageEndDate": "2026-11-03T01:00:00Z",
            "lineItem/ProductCode": "AmazonEC2",
            "lineItem/CurrencyCode": "USD",
            "lineItem/UnblendedCost": cost,
            "lineItem/LineItemDescription": f"{item_type} line",
            "product/ProductName": "Amazon Elastic Compute Cloud",
            "product/regionCode": "us-east-1",
        }
    )
    for key, value in fields.items():
        row[key.replace("__", "/")] = value
    return row


def _usage(line_item_id: str, item_type: str, rate: str, amount: str, cost: str, **fields: str) -> dict[str, str]:
    base = {
        "lineItem__UsageType": "BoxUsage:p5.48xlarge",
        "lineItem__Operation": "RunInstances",
        "lineItem__AvailabilityZone": "us-east-1a",
        "lineItem__ResourceId": "i-0abc",
        "lineItem__UsageAmount": amount,
        "lineItem__UnblendedRate": rate,
        "product__sku": "SKU123",
        "product__instanceType": "p5.48xlarge",
        "pricing__unit": "Hrs",
        "pricing__RateCode": "SKU123.JRTCKXETXF.6YS6EN2CT7",
        "pricing__publicOnDemandRate": "98.32",
        "pricing__publicOnDemandCost": str(Decimal("98.32") * Decimal(amount)),
        "pricing__term": "OnDemand",
    }
    base.update(fields)
    return _row(line_item_id, item_type, cost, **base)


def every_line_item_type() -> list[dict[str, str]]:
    """One or more rows of every line item type; amounts chosen so totals are easy to verify by hand."""
    return [
        _usage(
            "u1",
            "Usage",
            "98.32",
            "2",
            "196.64",
            **{"resourceTags/user:team": "llm", "resourceTags/aws:createdBy": "x"},
        ),
        _usage(
            "u2",
            "Usage",
            "30.00",
            "1",
            "30.00",
            pricing__term="Spot",
            lineItem__UsageType="SpotUsage:p5.48xlarge",
        ),
        _usage(
            "ri1",
            "DiscountedUsage",
            "0",
            "3",
            "0",
            reservation__ReservationARN=RI_ARN,
            reservation__EffectiveCost="150.00",
        ),
        _usage(
            "sp1",
            "SavingsPlanCoveredUsage",
            "98.32",
            "1",
            "98.32",
            savingsPlan__SavingsPlanARN=SP_ARN,
            savingsPlan__SavingsPlanEffectiveCost="60.00",
        ),
        _usage(
            "sp2",
            "SavingsPlanNegation",
            "-98.32",
            "1",
            "-98.32",
            savingsPlan__SavingsPlanARN=SP_ARN,
            pricing__publicOnDemandCost="",
            pricing__publicOnDemandRate="",
        ),
        _usage(
            "sp3",
            "SavingsPlanUpfrontFee",
            "1000",
            "1",
            "1000",
            savingsPlan__SavingsPlanARN=SP_ARN,
            pricing__publicOnDemandRate="1000",
            pricing__publicOnDemandCost="1000",
            lineItem__ProductCode="ComputeSavingsPlans",
            lineItem__ResourceId="",
        ),
        _usage(
            "sp4",
            "SavingsPlanRecurringFee",
            "0.1",
            "720",
            "72",
            savingsPlan__SavingsPlanARN=SP_ARN,
            savingsPlan__TotalCommitmentToDate="72",
            savingsPlan__UsedCommitment="60",
            pricing__publicOnDemandRate="0.1",
            pricing__publicOnDemandCost="72",
            lineItem__ProductCode="ComputeSavingsPlans",
            lineItem__ResourceId="",
        ),
        _usage(
            "rif",
            "RIFee",
            "0.5",
            "720",
            "360",
            reservation__ReservationARN=RI_ARN,
            reservation__UnusedAmortizedUpfrontFeeForBillingPeriod="20",
            reservation__UnusedRecurringFee="5",
            reservation__UnusedQuantity="10",
            pricing__publicOnDemandRate="0.5",
            pricing__publicOnDemandCost="360",
            lineItem__ResourceId="",
        ),
        _usage(
            "fee1",
            "Fee",
            "5000",
            "1",
            "5000",
            reservation__ReservationARN=RI_ARN,
            pricing__publicOnDemandRate="5000",
            pricing__publicOnDemandCost="5000",
            lineItem__ResourceId="",
        ),
        _usage(
            "fee2",
            "Fee",
            "29",
            "1",
            "29",
            pricing__publicOnDemandRate="29",
            pricing__publicOnDemandCost="29",
            lineItem__ResourceId="",
            lineItem__ProductCode="AWSSupportBusiness",
            product__ProductName="AWS Support (Business)",
        ),
        _row("tax", "Tax", "123.45"),
        _row("cr", "Credit", "-50.00"),
        _row("rf", "Refund", "-10.00"),
        _row(
            "rf-sp",
            "Refund",
            "-100.00",
            savingsPlan__SavingsPlanARN=SP_ARN,
            product__sku="SKUSP",
            lineItem__UsageAmount="1",
            lineItem__UnblendedRate="-100",
            pricing__unit="Quantity",
            lineItem__ProductCode="ComputeSavingsPlans",
        ),
        _row("edp", "EdpDiscount", "-12.34"),
        _row("bd", "BundledDiscount", "-1.00"),
        _row("dd", "Discount", "-2.00"),
    ]


# Billed = sum of UnblendedCost of every row.
EXPECTED_BILLED = (
    Decimal("196.64")
    + 30
    + 0
    + Decimal("98.32")
    - Decimal("98.32")
    + 1000
    + 72
    + 360
    + 5000
    + 29
    + Decimal("123.45")
    - 50
    - 10
    - 100
    - Decimal("12.34")
    - 1
    - 2
)
# Amortized (CID): Usage as billed; RI-covered at EffectiveCost; SP-covered at SP EffectiveCost; negation and
# upfront fees 0; recurring fees only their unused part; RI upfront Fee 0, other Fee as billed; commitment refund 0.
EXPECTED_EFFECTIVE = (
    Decimal("196.64")
    + 30
    + 150
    + 60
    + 0
    + 0
    + (72 - 60)
    + (20 + 5)
    + 0
    + 29
    + Decimal("123.45")
    - 50
    - 10
    + 0
    - Decimal("12.34")
    - 1
    - 2
)


def write_cur1_csv(path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = header or CUR1_HEADER
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", newline="", encoding="utf-8") as handle:  # type: ignore[operator]
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path
