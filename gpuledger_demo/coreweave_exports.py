"""A specialist GPU cloud's FOCUS 1.2 export for the demo: Helios Labs' reserved CoreWeave H100 nodes.

:func:`write_coreweave_demo_exports` writes one CSV per billing month (``<root>/coreweave/<YYYY-MM>/``, the
``month-folders`` layout of the generic ``focus`` format): every hour of two reserved 8 x H100 nodes
(``gd-8xh100ib-i128``, a contracted rate below the on-demand list price) and the month's line of the AI Object
Storage bucket that holds the RL checkpoints. The GPU rows carry the FOCUS ``SkuPriceDetails`` keys
``InstanceType`` and ``GpuCount``, which is all gpuledger needs to split them into run and idle like a
hyperscaler's instances. Rates are example figures, not a quote.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from gpuledger_demo.common import Period, seeded_code
from models.focus import FOCUS_COLUMNS
from models.gpu_catalog import COREWEAVE as PROVIDER

SOURCE_NAME = "helios-coreweave-focus"
CHECKPOINT_BUCKET = "helios-ckpt-cw"
NODES = ("helios-rl-h100-01", "helios-rl-h100-02")
"""The reserved nodes: CKS node names, which are also their FOCUS ResourceIds."""
INSTANCE_TYPE = "gd-8xh100ib-i128"
MONTHS = ("2026-10", "2026-11")

_ACCOUNT = "helios-labs"
_REGION = ("US-EAST-04", "US-EAST-04A")
_TAGS = {"team": "research", "cks-cluster": "helios-rl"}
_CONTRACTED_HOURLY = Decimal("35.50")  # 1-year reserved capacity
_LIST_HOURLY = Decimal("49.24")  # on-demand
_STORAGE_GB = Decimal("42000")  # checkpoints kept in the bucket
_STORAGE_GB_MONTH = Decimal("0.06")


@dataclass(frozen=True)
class _Line:
    service: str
    subcategory: str
    resource: str
    resource_type: str
    sku: str
    description: str
    unit: str
    quantity: Decimal
    pricing_unit: str
    pricing_quantity: Decimal
    contracted_unit: Decimal
    list_unit: Decimal
    details: dict[str, object]
    price_plan: str


def _row(seed: int, period: Period, start_hours: int, hours: int, line: _Line) -> dict[str, str | None]:
    start = period.start + timedelta(hours=start_hours)
    contracted = (line.pricing_quantity * line.contracted_unit).quantize(Decimal("0.0000000001"))
    listed = (line.pricing_quantity * line.list_unit).quantize(Decimal("0.0000000001"))
    values: dict[str, object] = {
        "AvailabilityZone": _REGION[1],
        "BilledCost": contracted,
        "BillingAccountId": _ACCOUNT,
        "BillingAccountName": "Helios Labs",
        "BillingAccountType": "Organization",
        "BillingCurrency": "USD",
        "BillingPeriodEnd": period.end,
        "BillingPeriodStart": period.start,
        "ChargeCategory": "Usage",
        "ChargeDescription": line.description,
        "ChargeFrequency": "Usage-Based",
        "ChargePeriodEnd": start + timedelta(hours=hours),
        "ChargePeriodStart": start,
        "ConsumedQuantity": line.quantity,
        "ConsumedUnit": line.unit,
        "ContractedCost": contracted,
        "ContractedUnitPrice": line.contracted_unit,
        "EffectiveCost": contracted,
        "InvoiceId": f"CW-{period.label.replace('-', '')}-{seeded_code(seed, 'cw-invoice', period.label, length=8)}",
        "InvoiceIssuerName": PROVIDER,
        "ListCost": listed,
        "ListUnitPrice": line.list_unit,
        "PricingCategory": "Standard",
        "PricingQuantity": line.pricing_quantity,
        "PricingUnit": line.pricing_unit,
        "ProviderName": PROVIDER,
        "PublisherName": PROVIDER,
        "RegionId": _REGION[0],
        "RegionName": _REGION[0],
        "ResourceId": line.resource,
        "ResourceName": line.resource,
        "ResourceType": line.resource_type,
        "ServiceCategory": line.service,
        "ServiceName": "CoreWeave Kubernetes Service" if line.service == "Compute" else "CoreWeave AI Object Storage",
        "ServiceSubcategory": line.subcategory,
        "SkuId": line.sku,
        "SkuMeter": line.unit,
        "SkuPriceDetails": json.dumps(line.details, separators=(",", ":")),
        "SkuPriceId": f"{line.sku}:{line.price_plan}",
        "Tags": json.dumps(_TAGS, separators=(",", ":"), sort_keys=True),
    }
    return {column.name: _text(values.get(column.name)) for column in FOCUS_COLUMNS}


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _rows(seed: int, period: Period) -> list[dict[str, str | None]]:
    hour = Decimal(1)
    rows = [
        _row(
            seed,
            period,
            h,
            1,
            _Line(
                "Compute",
                "Other (Compute)",
                node,
                "GPU Instance",
                INSTANCE_TYPE,
                f"NVIDIA HGX H100 ({INSTANCE_TYPE}), reserved capacity",
                "Hours",
                hour,
                "Hours",
                hour,
                _CONTRACTED_HOURLY,
                _LIST_HOURLY,
                {"CoreCount": 128, "GpuCount": 8, "InstanceType": INSTANCE_TYPE},
                "reserved-1y",
            ),
        )
        for node in NODES
        for h in range(period.hours)
    ]
    rows.append(
        _row(
            seed,
            period,
            0,
            period.hours,
            _Line(
                "Storage",
                "Object Storage",
                CHECKPOINT_BUCKET,
                "Bucket",
                "ai-object-storage-hot",
                "AI Object Storage, hot tier",
                "GB-Months",
                _STORAGE_GB,
                "GB-Months",
                _STORAGE_GB,
                _STORAGE_GB_MONTH,
                _STORAGE_GB_MONTH,
                {"StorageClass": "Hot"},
                "standard",
            ),
        )
    )
    return rows


def write_coreweave_demo_exports(root: Path, seed: int = 2026, months: Sequence[str] = MONTHS) -> Path:
    """Write the CoreWeave FOCUS export of ``months`` (the demo's 2026-10 and 2026-11) under ``root``; returns the
    source folder."""
    folder = root / "coreweave"
    for label in months:
        period = Period(label)
        target = folder / label / f"coreweave-focus-{label}.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow([column.name for column in FOCUS_COLUMNS])
            for row in _rows(seed, period):
                writer.writerow(["" if value is None else value for value in row.values()])
    return folder
