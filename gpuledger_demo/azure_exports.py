"""Seeded Azure cost details exports of the fictional Helios Labs, laid out like the storage container.

:func:`write_azure_demo_exports` writes an MCA billing profile billed in EUR (priced in USD) for 2026-10 and
2026-11 as two Cost Management exports, ActualCost and AmortizedCost (cost details 2023-12-01-preview,
CSV gzip, partitioned, CreateNewReport): each run is a ``<directory>/<export>/<YYYYMMDD-YYYYMMDD>/<run id>/``
folder of part files plus ``manifest.json``. November runs twice: once before the month closed (usage
through the 29th, no invoice) and again on demand after it (the whole month, invoiced).

Usage slots (resource template x day) and their quantities come from one SQL query over a catalogue of
resource templates, as in the AWS demo; Python prices them in exact decimals, derives the reservation
purchase, its amortization and unused hours and the marketplace charge, and sums the expected totals.
"""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path
from typing import Literal

import duckdb

from gpuledger_demo.common import Period, connect, digest, insert, seeded_code, seeded_number, seeded_uuid

Dataset = Literal["ActualCost", "AmortizedCost"]
AzureFormat = Literal["azure-actual", "azure-amortized"]


@dataclass(frozen=True, kw_only=True)
class AzureExpectedTotal:
    """Σ costInBillingCurrency of one billing period's newest run, summed in Decimal from the written rows."""

    billing_account_id: str
    billing_profile_id: str
    """MCA billing profile: Microsoft's FOCUS mapping makes it the BillingAccountId."""
    billing_period: str
    """``YYYY-MM``."""
    currency: str
    cost: Decimal
    rows: int
    run_id: str


@dataclass(frozen=True, kw_only=True)
class AzureDemoSource:
    """One Cost Management export (one dataset) of the demo, with what config wiring and reader tests need."""

    name: str
    """The export name."""
    provider: str = "azure"
    format: AzureFormat
    dataset: Dataset
    path: Path
    """The export folder (``<container>/<directory>/<export name>``); one folder per billing period under it."""
    container: Path
    """The container folder: manifest ``blobName``s are relative to it."""
    billing_account_id: str
    billing_profile_id: str
    vm_resource_ids: Mapping[str, str]
    """VM name -> ARM ResourceId, for mapping telemetry nodes."""
    checkpoint_resource_ids: tuple[str, ...]
    """Storage account holding checkpoints (its egress rows spell the id in lower case)."""
    expected_totals: tuple[AzureExpectedTotal, ...]


COLUMNS = (
    "invoiceId",
    "previousInvoiceId",
    "billingAccountId",
    "billingAccountName",
    "billingProfileId",
    "billingProfileName",
    "invoiceSectionId",
    "invoiceSectionName",
    "resellerName",
    "resellerMpnId",
    "costCenter",
    "billingPeriodEndDate",
    "billingPeriodStartDate",
    "servicePeriodEndDate",
    "servicePeriodStartDate",
    "date",
    "serviceFamily",
    "productOrderId",
    "productOrderName",
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
    "publisherId",
    "publisherName",
    "resourceGroupName",
    "ResourceId",
    "resourceLocation",
    "location",
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
    "paygCostInUsd",
    "exchangeRatePricingToBilling",
    "exchangeRateDate",
    "isAzureCreditEligible",
    "serviceInfo1",
    "serviceInfo2",
    "additionalInfo",
    "tags",
    "PayGPrice",
    "frequency",
    "term",
    "reservationId",
    "reservationName",
    "pricingModel",
    "unitPrice",
    "costAllocationRuleName",
    "benefitId",
    "benefitName",
    "provider",
)
"""MCA cost details columns (dataset version 2023-12-01-preview), in file order."""

_DATA_VERSION = "2023-12-01-preview"
_STORAGE_ACCOUNT, _CONTAINER, _DIRECTORY = "heliosfinops", "cost-exports", "helios-mca"
_EXPORTS: dict[Dataset, tuple[str, AzureFormat, str]] = {
    # export name, source format, line ending: both occur in real exports
    "ActualCost": ("helios-actual-cost", "azure-actual", "\r\n"),
    "AmortizedCost": ("helios-amortized-cost", "azure-amortized", "\n"),
}
_ACCOUNT_NAME, _PROFILE_NAME = "Helios Labs B.V.", "Helios Labs EU"
_EUR_PER_USD = {"2026-10": Decimal("0.9215"), "2026-11": Decimal("0.9342")}
_REGIONS = {"swedencentral": "SE Central", "westeurope": "EU West"}
_VM_DISCOUNT = Decimal("0.95")  # the negotiated price of on-demand VMs; spot and storage are list price
_BOM = b"\xef\xbb\xbf"

# period, submittedTime, days of usage delivered, invoiced, executionType, part files
_RUNS = (
    ("2026-10", "2026-11-05T06:12:43.2817305Z", 31, True, "Scheduled", 2),
    ("2026-11", "2026-12-02T06:09:51.7730418Z", 29, False, "Scheduled", 1),
    ("2026-11", "2026-12-07T14:31:08.0459622Z", 30, True, "Manual", 1),
)


@dataclass(frozen=True)
class _Subscription:
    name: str
    section: str
    """Invoice section."""
    cost_center: str


_SUBSCRIPTIONS = {
    "llm-pretrain": _Subscription("helios-llm-pretrain", "ML Training", "CC-1100"),
    "research": _Subscription("helios-research", "ML Training", "CC-1200"),
    "vision": _Subscription("helios-vision", "Products", "CC-2100"),
    "speech": _Subscription("helios-speech", "Products", "CC-2200"),
    "platform": _Subscription("helios-platform", "Platform", ""),
}


@dataclass(frozen=True, kw_only=True)
class _Meter:
    name: str
    category: str
    sub_category: str
    product: str
    family: str
    region: str
    """meterRegion."""
    unit: str
    payg: Decimal
    """PayGPrice (USD per unit)."""
    price: Decimal
    """unitPrice: the negotiated price."""


# VM size -> (meter series, vCPUs, region, pay-as-you-go USD an hour, spot USD an hour)
_VM_SIZES = {
    "Standard_ND96isr_H100_v5": ("NDsrH100v5", 96, "swedencentral", "98.32", None),
    "Standard_NC24ads_A100_v4": ("NCadsA100v4", 24, "westeurope", "3.673", "1.102"),
    "Standard_NC96ads_A100_v4": ("NCadsA100v4", 96, "westeurope", "14.692", None),
}


def _vm_meter(size: str, *, spot: bool = False) -> _Meter:
    series, _, region, payg, spot_price = _VM_SIZES[size]
    name = size.removeprefix("Standard_").replace("_", " ") + (" Spot" if spot else "")
    price = Decimal(spot_price if spot and spot_price else payg)
    return _Meter(
        name=name,
        category="Virtual Machines",
        sub_category=f"{series} Series",
        product=f"Virtual Machines {series} Series - {name} - {_REGIONS[region]}",
        family="Compute",
        region=_REGIONS[region],
        unit="1 Hour",
        payg=price,
        price=price if spot else price * _VM_DISCOUNT,
    )


def _list_meter(name: str, category: str, sub_category: str, region: str, unit: str, price: str) -> _Meter:
    return _Meter(
        name=name,
        category=category,
        sub_category=sub_category,
        product=f"{sub_category or category} - {name} - {region}",
        family="Networking" if category == "Bandwidth" else "Storage",
        region=region,
        unit=unit,
        payg=Decimal(price),
        price=Decimal(price),
    )


@dataclass(frozen=True, kw_only=True)
class _Resource:
    """A billed resource (or its data transfer out) that becomes one daily usage row, or two."""

    name: str
    team: str
    group: str
    region: str
    kind: Literal["vm", "disk", "blob", "egress"]
    provider: str
    """ARM resource type, e.g. ``Microsoft.Compute/virtualMachines``."""
    meter: _Meter
    size: float = 1.0
    """GB stored (blob) or GB a day (egress)."""
    duty: float = 1.0
    """Mean share of the day a VM runs."""
    pricing: Literal["OnDemand", "Spot"] = "OnDemand"
    reserved: bool = False
    """Covered by the reservation from its purchase."""
    vm_size: str | None = None
    vcpus: int = 0
    split: bool = False
    """Billed in two rows a day, as Azure does for some meters."""
    lower_id: bool = False
    """The resource provider reports the ResourceId in lower case."""
    tags: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


_RI_HOURLY = Decimal("62")  # USD per instance-hour of the 1-year ND96isr H100 v5 reservation
_RI_START = date(2026, 10, 5)
_RI_TERM_HOURS = 8760
_RI_SIZE, _RI_REGION = "Standard_ND96isr_H100_v5", "swedencentral"
_MARKETPLACE_MONTHLY = Decimal("4500")


def _vm(
    name: str,
    team: str,
    size: str,
    duty: float,
    tags: tuple[tuple[str, str], ...],
    *,
    spot: bool = False,
    reserved: bool = False,
    split: bool = False,
) -> _Resource:
    _, vcpus, region, _, _ = _VM_SIZES[size]
    return _Resource(
        name=name,
        team=team,
        group=f"rg-{team.split('-')[0]}-gpu",
        region=region,
        kind="vm",
        provider="Microsoft.Compute/virtualMachines",
        meter=_vm_meter(size, spot=spot),
        vm_size=size,
        vcpus=vcpus,
        duty=duty,
        pricing="Spot" if spot else "OnDemand",
        reserved=reserved,
        split=split,
        tags=tags,
    )


def _disk(name: str, team: str, region: str, tier: str, price: str, tags: tuple[tuple[str, str], ...]) -> _Resource:
    return _Resource(
        name=name,
        team=team,
        group=f"rg-{team.split('-')[0]}-gpu",
        region=region,
        kind="disk",
        provider="Microsoft.Compute/disks",
        meter=_list_meter(
            f"{tier} LRS Disk", "Storage", "Premium SSD Managed Disks", _REGIONS[region], "1/Month", price
        ),
        tags=tags,
    )


def _egress(source: _Resource, gb_per_day: float, *, lower_id: bool = False) -> _Resource:
    meter = _list_meter("Standard Data Transfer Out", "Bandwidth", "", "Zone 1", "1 GB", "0.087")
    return replace(source, kind="egress", meter=meter, size=gb_per_day, split=False, lower_id=lower_id)


def _catalogue() -> tuple[_Resource, ...]:
    h100, nc24, nc96 = _VM_SIZES
    llm = (("team", "llm-pretrain"), ("project", "helios-70b"))
    vision = (("team", "vision"), ("project", "detector-v9"))
    llm_b = _vm("llm-h100-02", "llm-pretrain", h100, 0.85, llm, split=True)
    checkpoints = _Resource(
        name="heliosckptazure",
        team="llm-pretrain",
        group="rg-llm-data",
        region="swedencentral",
        kind="blob",
        provider="Microsoft.Storage/storageAccounts",
        meter=_list_meter("Hot LRS Data Stored", "Storage", "Tiered Block Blob", "SE Central", "1 GB/Month", "0.0208"),
        size=150_000,
        # storage account names cannot hold hyphens: the container name rides along as a tag
        tags=(("team", "llm-pretrain"), ("purpose", "checkpoints"), ("container", "helios-ckpt-azure")),
    )
    return (
        _vm("llm-h100-01", "llm-pretrain", h100, 0.92, llm, reserved=True),
        llm_b,
        _vm("res-a100-01", "research", nc24, 0.6, (("team", "research"), ("project", "helios-7b-sft"))),
        _vm("vis-a100-01", "vision", nc96, 0.8, vision),
        _vm(
            "vis-a100-spot-01",
            "vision",
            nc24,
            0.5,
            (("team", "vision"), ("project", "auto-label"), ("aks-managed-poolName", "spota100")),
            spot=True,
        ),
        # no team tag, only an empty value: the speech subscription is the one owner signal
        _vm("speech-a100-01", "speech", nc24, 0.7, (("owner", ""),)),
        _disk("llm-h100-01-data", "llm-pretrain", "swedencentral", "P60", "917.5", llm),
        _disk("vis-a100-01-data", "vision", "westeurope", "P40", "259.05", vision),
        checkpoints,
        _egress(llm_b, 600),
        # Bandwidth reports the storage account's id in lower case: ARM ids vary in case
        _egress(checkpoints, 250, lower_id=True),
    )


# ---------------------------------------------------------------------------------------------
# Ids, numbers and cells as Azure writes them
# ---------------------------------------------------------------------------------------------


@cache
def _account_id(seed: int) -> str:
    return f"{seeded_uuid(seed, 'mca-account')}:{seeded_uuid(seed, 'mca-tenant')}_2019-05-31"


@cache
def _mca_id(seed: int, *parts: object) -> str:
    """Billing profile / invoice section id shape, ``XXXX-XXXX-XXX-XXX``."""
    code = base64.b32encode(digest(seed, "mca", *parts)).decode()
    return f"{code[:4]}-{code[4:8]}-{code[8:11]}-{code[11:14]}"


@cache
def _resource_id(seed: int, res: _Resource) -> str:
    subscription = seeded_uuid(seed, "subscription", res.team)
    rid = f"/subscriptions/{subscription}/resourceGroups/{res.group}/providers/{res.provider}"
    rid = f"{rid}/{res.name}"
    return rid.lower() if res.lower_id else rid


def vm_resource_ids(seed: int) -> dict[str, str]:
    """VM name -> ARM ResourceId (as the export writes it), for mapping telemetry nodes."""
    return {r.name: _resource_id(seed, r) for r in _catalogue() if r.kind == "vm"}


def subscription_teams(seed: int) -> dict[str, str]:
    """Subscription id (FOCUS SubAccountId) -> team, for the teams' own subscriptions."""
    return {seeded_uuid(seed, "subscription", team): team for team in _SUBSCRIPTIONS if team != "platform"}


def _reservation_ids(seed: int) -> tuple[str, str, str]:
    """(reservation order id, reservation id, reservation name)."""
    order, reservation = seeded_uuid(seed, "reservation-order"), seeded_uuid(seed, "reservation")
    return order, reservation, f"RI_{_RI_SIZE.removeprefix('Standard_')}_{_REGIONS[_RI_REGION].replace(' ', '_')}"


def _num(value: Decimal) -> str:
    """Plain decimal text without trailing zeros ("0", "93.404"), never an exponent."""
    return format(value.normalize(), "f")


def _round(value: Decimal) -> Decimal:
    return value.quantize(Decimal("1e-10"), ROUND_HALF_UP)


def _day(value: date) -> str:
    return f"{value:%m/%d/%Y}"


def _tags(tags: tuple[tuple[str, str], ...]) -> str:
    """Cost details tags: JSON members without the outer braces."""
    return ",".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in tags)


@dataclass(frozen=True)
class _Context:
    seed: int
    dataset: Dataset
    period: Period
    invoice_id: str


@cache
def _hierarchy(seed: int, period: str, team: str) -> dict[str, str]:
    """The columns every row of a subscription's month shares (cached: ids are hashes of the seed)."""
    sub = _SUBSCRIPTIONS[team]
    start = Period(period).start.date()
    last = Period(period).end.date() - timedelta(days=1)
    row = dict.fromkeys(COLUMNS, "")
    return row | {
        "billingAccountId": _account_id(seed),
        "billingAccountName": _ACCOUNT_NAME,
        "billingProfileId": _mca_id(seed, "profile"),
        "billingProfileName": _PROFILE_NAME,
        "invoiceSectionId": _mca_id(seed, "section", sub.section),
        "invoiceSectionName": sub.section,
        "costCenter": sub.cost_center,
        "billingPeriodEndDate": _day(last),
        "billingPeriodStartDate": _day(start),
        "servicePeriodEndDate": _day(last),
        "servicePeriodStartDate": _day(start),
        "productOrderId": seeded_uuid(seed, "azure-plan", team),
        "productOrderName": "Azure plan",
        "SubscriptionId": seeded_uuid(seed, "subscription", team),
        "subscriptionName": sub.name,
        "publisherType": "Microsoft",
        "publisherName": "Microsoft",
        "billingCurrency": "EUR",
        "pricingCurrency": "USD",
        "exchangeRatePricingToBilling": _num(_EUR_PER_USD[period]),
        "exchangeRateDate": _day(start),
        "isAzureCreditEligible": "True",
        "provider": "Azure",
    }


def _line(
    ctx: _Context,
    day: date,
    team: str,
    *,
    quantity: Decimal,
    price: Decimal,
    payg: Decimal | None,
    charge_type: str,
    pricing_model: str,
    frequency: str = "UsageBased",
    **fields: str,
) -> dict[str, str]:
    """One cost details row: the billing hierarchy, amounts priced from ``quantity x price``, then ``fields``."""
    rate = _EUR_PER_USD[ctx.period.label]
    cost = quantity * price
    row = _hierarchy(ctx.seed, ctx.period.label, team) | {
        "invoiceId": ctx.invoice_id,
        "date": _day(day),
        "effectivePrice": _num(price),
        "quantity": _num(quantity),
        "chargeType": charge_type,
        "costInBillingCurrency": _num(_round(cost * rate)),
        "costInPricingCurrency": _num(_round(cost)),
        "costInUsd": _num(_round(cost)),
        "frequency": frequency,
        "pricingModel": pricing_model,
        "unitPrice": _num(price),
    }
    if payg is not None:
        row.update(
            PayGPrice=_num(payg),
            paygCostInBillingCurrency=_num(_round(quantity * payg * rate)),
            paygCostInUsd=_num(_round(quantity * payg)),
        )
    row.update(fields)
    return row


@cache
def _meter_fields(seed: int, meter: _Meter) -> dict[str, str]:
    return {
        "serviceFamily": meter.family,
        "meterId": seeded_uuid(seed, "meter", meter.product),
        "meterName": meter.name,
        "meterCategory": meter.category,
        "meterSubCategory": meter.sub_category,
        "meterRegion": meter.region,
        "ProductId": seeded_code(seed, "product", meter.product),
        "ProductName": meter.product,
        "unitOfMeasure": meter.unit,
    }


@cache
def _reservation_fields(seed: int) -> dict[str, str]:
    order, reservation, name = _reservation_ids(seed)
    benefit = f"/providers/Microsoft.Capacity/reservationOrders/{order}/reservations/{reservation}"
    return {"reservationId": reservation, "reservationName": name, "benefitId": benefit, "benefitName": name}


# ---------------------------------------------------------------------------------------------
# Usage slots: one SQL query over the catalogue, as the AWS demo generates its line items
# ---------------------------------------------------------------------------------------------

# mix32 is the AWS demo's 0x45d9f3b xorshift-multiply hash: draws that are fixed across DuckDB versions
_SLOTS_SQL = """
CREATE OR REPLACE TEMP MACRO mix_step(x) AS (xor(x, x >> 16) * 73244475) % 4294967296;
CREATE OR REPLACE TEMP MACRO mix32(x) AS xor(mix_step(mix_step(x)), mix_step(mix_step(x)) >> 16);
CREATE OR REPLACE TEMP TABLE slots AS
WITH drawn AS (
    SELECT t.*, d.day, (mix32((t.key_hash + d.day * 2654435761) % 4294967296) // 1024 % 1000000) / 1e6 AS u
    FROM tpl AS t CROSS JOIN range({days}) AS d(day)
)
SELECT tpl_id, day,
    -- quantities in 1e-10 units, rounded half up: VMs run whole quarter hours, duty is their mean share;
    -- disks bill a day's share of a month; stored GB grow 25% over the month; egress GB vary by day
    CASE kind
        WHEN 'vm' THEN greatest(0, 96 - CAST(floor(u * 192 * (1 - duty)) AS BIGINT)) * 2500000000
        WHEN 'disk' THEN (10000000000 + {days} // 2) // {days}
        WHEN 'blob' THEN (CAST(round(size * (1 + 0.25 * day / {days})) AS BIGINT) * 10000000000 + {days} // 2) // {days}
        ELSE CAST(round(size * (0.4 + 1.2 * u) * 1000) AS BIGINT) * 10000000
    END AS amount_e10
FROM drawn
"""


_Slot = tuple[int, int, int]
"""(template index, day of the period, quantity in 1e-10 units)."""


def _slots(con: duckdb.DuckDBPyConnection, catalogue: tuple[_Resource, ...], period: Period, seed: int) -> list[_Slot]:
    con.execute(
        "CREATE OR REPLACE TEMP TABLE tpl (tpl_id INTEGER, key_hash BIGINT, kind VARCHAR, size DOUBLE, duty DOUBLE)"
    )
    rows = [
        (i, int.from_bytes(digest(seed, "azure-template", r.key)[:4], "big"), r.kind, r.size, r.duty)
        for i, r in enumerate(catalogue)
    ]
    insert(con, "tpl", rows)
    con.execute(_SLOTS_SQL.format(days=(period.end - period.start).days))
    return con.execute("SELECT tpl_id, day, amount_e10 FROM slots WHERE amount_e10 > 0 ORDER BY day, tpl_id").fetchall()


# ---------------------------------------------------------------------------------------------
# A run's rows: priced usage, then the derived reservation and marketplace charges
# ---------------------------------------------------------------------------------------------


def _usage_rows(ctx: _Context, catalogue: tuple[_Resource, ...], slots: list[_Slot], days: int) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    covered: dict[date, Decimal] = defaultdict(Decimal)
    amortized, start = ctx.dataset == "AmortizedCost", ctx.period.start.date()
    for tpl_id, day_index, amount_e10 in slots:
        if day_index >= days:
            continue
        res, day = catalogue[tpl_id], start + timedelta(days=day_index)
        quantity = Decimal(amount_e10).scaleb(-10)
        reserved = res.reserved and day >= _RI_START
        fields = {
            **_meter_fields(ctx.seed, res.meter),
            "consumedService": res.provider.split("/")[0],
            "resourceGroupName": res.group,
            "ResourceId": _resource_id(ctx.seed, res),
            "resourceLocation": res.region,
            "location": _REGIONS[res.region],
            "tags": _tags(res.tags),
            "unitPrice": _num(res.meter.price),
        }
        if res.kind == "vm":
            info: dict[str, object] = {"UsageType": "ComputeHR", "ImageType": "Canonical", "ServiceType": res.vm_size}
            info |= {"VMName": None, "VCPUs": res.vcpus}
            if reserved:
                info |= {"ConsumptionMeter": fields["meterId"], "RINormalizationRatio": 1}
            fields["additionalInfo"] = json.dumps(info, separators=(",", ":"))
        if reserved:
            covered[day] += quantity
            fields |= _reservation_fields(ctx.seed)
        # covered usage costs nothing in ActualCost and the reservation's hourly rate in AmortizedCost
        price = (_RI_HOURLY if amortized else Decimal(0)) if reserved else res.meter.price
        first = Decimal(amount_e10 // 5_000_000_000 * 2_500_000_000).scaleb(-10)
        for part in (first, quantity - first) if res.split and first else (quantity,):
            rows.append(
                _line(
                    ctx,
                    day,
                    res.team,
                    quantity=part,
                    price=price,
                    payg=res.meter.payg,
                    charge_type="Usage",
                    pricing_model="Reservation" if reserved else res.pricing,
                    **fields,
                )
            )
    if amortized:
        rows += _unused_reservation_rows(ctx, catalogue, covered)
    return rows


def _unused_reservation_rows(
    ctx: _Context, catalogue: tuple[_Resource, ...], covered: dict[date, Decimal]
) -> list[dict[str, str]]:
    """AmortizedCost only: the reservation's hours no VM used, a row per day at the reservation rate."""
    meter = next(r.meter for r in catalogue if r.reserved)
    info = json.dumps({"ServiceType": _RI_SIZE, "RINormalizationRatio": 1}, separators=(",", ":"))
    rows = []
    for day, hours in sorted(covered.items()):
        if hours < 24:
            rows.append(
                _line(
                    ctx,
                    day,
                    "llm-pretrain",
                    quantity=24 - hours,
                    price=_RI_HOURLY,
                    payg=None,
                    charge_type="UnusedReservation",
                    pricing_model="Reservation",
                    **_meter_fields(ctx.seed, meter),
                    consumedService="Microsoft.Compute",
                    resourceLocation=_RI_REGION,
                    location=_REGIONS[_RI_REGION],
                    additionalInfo=info,
                    **_reservation_fields(ctx.seed),
                )
            )
    return rows


def _purchase_rows(ctx: _Context) -> list[dict[str, str]]:
    """The month's purchases: the reservation (ActualCost, once, upfront) and the marketplace SaaS plan."""
    start = ctx.period.start.date()
    rows = []
    if ctx.dataset == "ActualCost" and start <= _RI_START < ctx.period.end.date():
        order = _reservation_ids(ctx.seed)[0]
        product = f"Reserved VM Instance, {_RI_SIZE}, {_REGIONS[_RI_REGION]}, 1 Year"
        rows.append(
            _line(
                ctx,
                _RI_START,
                "llm-pretrain",
                quantity=Decimal(1),
                price=_RI_HOURLY * _RI_TERM_HOURS,
                payg=None,
                charge_type="Purchase",
                pricing_model="Reservation",
                frequency="OneTime",
                serviceFamily="Compute",
                productOrderId=order,
                productOrderName=product,
                consumedService="Microsoft.Capacity",
                ProductId=seeded_code(ctx.seed, "product", product),
                ProductName=product,
                unitOfMeasure="1/Year",
                servicePeriodStartDate=_day(_RI_START),
                servicePeriodEndDate=_day(_RI_START.replace(year=_RI_START.year + 1) - timedelta(days=1)),
                term="12",
                **_reservation_fields(ctx.seed),
            )
        )
    plan = "W&B Dedicated Cloud - Enterprise"
    rows.append(
        _line(
            ctx,
            start,
            "platform",
            quantity=Decimal(1),
            price=_MARKETPLACE_MONTHLY,
            payg=None,
            charge_type="Purchase",
            pricing_model="OnDemand",
            frequency="Recurring",
            serviceFamily="Developer Tools",
            productOrderId=seeded_uuid(ctx.seed, "saas-order"),
            productOrderName="W&B Dedicated Cloud",
            consumedService="Microsoft.SaaS",
            meterId=seeded_uuid(ctx.seed, "meter", plan),
            meterName="Enterprise",
            meterCategory="SaaS",
            meterSubCategory="W&B Dedicated Cloud",
            ProductId=seeded_code(ctx.seed, "product", plan),
            ProductName=plan,
            publisherType="Marketplace",
            publisherName="Weights & Biases, Inc.",
            resourceGroupName="rg-platform",
            ResourceId=f"/subscriptions/{seeded_uuid(ctx.seed, 'subscription', 'platform')}/resourceGroups/rg-platform"
            "/providers/Microsoft.SaaS/resources/wandb-helios",
            unitOfMeasure="1/Month",
            isAzureCreditEligible="False",
            tags=_tags((("team", "platform"),)),
        )
    )
    return rows


# ---------------------------------------------------------------------------------------------
# Writers: part files and manifest.json per run
# ---------------------------------------------------------------------------------------------


def _csv_gz(rows: list[dict[str, str]], newline: str) -> bytes:
    """A part file: BOM, header, rows; gzip without a timestamp so the bytes depend on the seed only."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=newline)
    writer.writerow(COLUMNS)
    writer.writerows([row[c] for c in COLUMNS] for row in rows)
    return gzip.compress(_BOM + buffer.getvalue().encode("utf-8"), mtime=0)


def _write_run(
    container: Path,
    export: str,
    ctx: _Context,
    run_id: str,
    rows: list[dict[str, str]],
    run: tuple[str, str, int, bool, str, int],
) -> None:
    _, submitted, _, _, execution, parts = run
    period = ctx.period
    last = period.end.date() - timedelta(days=1)
    folder = f"{_DIRECTORY}/{export}/{period.start:%Y%m%d}-{last:%Y%m%d}/{run_id}"
    per_part = -(-len(rows) // parts)
    blobs = []
    for n in range(parts):
        chunk = rows[n * per_part : (n + 1) * per_part]
        data = _csv_gz(chunk, _EXPORTS[ctx.dataset][2])
        name = f"{folder}/part_0_{n + 1:04d}.csv.gz"
        (container / name).parent.mkdir(parents=True, exist_ok=True)
        (container / name).write_bytes(data)
        blobs.append({"blobName": name, "byteCount": len(data), "dataRowCount": len(chunk)})
    scope = f"/providers/Microsoft.Billing/billingAccounts/{_account_id(ctx.seed)}/billingProfiles/"
    scope += _mca_id(ctx.seed, "profile")
    platform = seeded_uuid(ctx.seed, "subscription", "platform")
    manifest = {
        "manifestVersion": "2024-04-01",
        "byteCount": sum(b["byteCount"] for b in blobs),
        "blobCount": len(blobs),
        "dataRowCount": len(rows),
        "exportConfig": {
            "exportName": export,
            "resourceId": f"{scope}/providers/Microsoft.CostManagement/exports/{export}",
            "dataVersion": _DATA_VERSION,
            "apiVersion": "2025-03-01",
            "type": ctx.dataset,
            "timeFrame": "TheLastMonth",
            "granularity": "Daily",
        },
        "deliveryConfig": {
            "partitionData": True,
            "dataOverwriteBehavior": "CreateNewReport",
            "fileFormat": "Csv",
            "compressionMode": "Gzip",
            "containerUri": f"/subscriptions/{platform}/resourceGroups/rg-finops/providers/Microsoft.Storage"
            f"/storageAccounts/{_STORAGE_ACCOUNT}/blobServices/default/containers/{_CONTAINER}",
            "rootFolderPath": _DIRECTORY,
        },
        "runInfo": {
            "executionType": execution,
            "submittedTime": submitted,
            "runId": run_id,
            "startDate": f"{period.start:%Y-%m-%dT%H:%M:%S}",
            "endDate": f"{last:%Y-%m-%dT00:00:00}",
        },
        "blobs": blobs,
    }
    (container / folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def write_azure_demo_exports(root: Path, seed: int = 2026) -> list[AzureDemoSource]:
    """Write Helios Labs' Azure exports for 2026-10 and 2026-11 under ``root/<storage account>/<container>``.

    The same seed gives byte-identical files. Both November runs stay on disk, as CreateNewReport leaves
    them; a reader takes the newest ``manifest.json`` per period (``runInfo.submittedTime``, not the
    folder name). The expected totals also go to ``root/_expected_totals_azure.json``.
    """
    catalogue = _catalogue()
    container = root / _STORAGE_ACCOUNT / _CONTAINER
    con = connect()
    try:
        slots = {label: _slots(con, catalogue, Period(label), seed) for label in _EUR_PER_USD}
    finally:
        con.close()
    account, profile = _account_id(seed), _mca_id(seed, "profile")
    totals: dict[Dataset, dict[str, AzureExpectedTotal]] = {dataset: {} for dataset in _EXPORTS}
    for dataset, (export, _, _) in _EXPORTS.items():
        for number, run in enumerate(_RUNS):
            label, _, days, invoiced, _, _ = run
            invoice = f"G{seeded_number(seed, 'invoice', label, digits=9)}" if invoiced else ""
            ctx = _Context(seed, dataset, Period(label), invoice)
            rows = _usage_rows(ctx, catalogue, slots[label], days) + _purchase_rows(ctx)
            rows.sort(key=lambda row: row["date"])  # one year: MM/dd/yyyy sorts by day; stable within a day
            run_id = seeded_uuid(seed, "azure-run", export, number)
            _write_run(container, export, ctx, run_id, rows, run)
            # runs are listed oldest first, so the newest run of a period is the one kept
            totals[dataset][label] = AzureExpectedTotal(
                billing_account_id=account,
                billing_profile_id=profile,
                billing_period=label,
                currency="EUR",
                cost=sum((Decimal(row["costInBillingCurrency"]) for row in rows), Decimal(0)),
                rows=len(rows),
                run_id=run_id,
            )
    vms = vm_resource_ids(seed)
    checkpoints = tuple(_resource_id(seed, r) for r in catalogue if r.kind == "blob")
    sources = [
        AzureDemoSource(
            name=export,
            format=fmt,
            dataset=dataset,
            path=container / _DIRECTORY / export,
            container=container,
            billing_account_id=account,
            billing_profile_id=profile,
            vm_resource_ids=vms,
            checkpoint_resource_ids=checkpoints,
            expected_totals=tuple(totals[dataset].values()),
        )
        for dataset, (export, fmt, _) in _EXPORTS.items()
    ]
    sidecar = [
        {
            "dataset": source.dataset,
            "export": source.name,
            **{k: str(v) if isinstance(v, Decimal) else v for k, v in vars(total).items()},
        }
        for source in sources
        for total in source.expected_totals
    ]
    (root / "_expected_totals_azure.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    return sources
