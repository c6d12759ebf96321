"""Seeded AWS billing exports of a fictional ML org ("Helios Labs"), laid out like the S3 buckets.

:func:`write_demo_exports` writes two billing months for two payers: a CUR 2.0 Data Export
(Parquet; overwrite mode, then create-new-version with a restatement, plus an unmanifested future
period) and a legacy CUR 1 report (CSV gzip, CREATE_NEW_REPORT, multi-part and restated).
:func:`write_scaled_cur_export` writes one month of exactly N line items for benchmarks.

Both draw their usage rows from one SQL generator over a catalogue of resource templates: an
``events`` view says which template, replica and time slot each line item is (enumerated for the
demo, hash-sampled from ``range(N)`` for the benchmark) and ``_LINE_ITEMS_SQL`` prices them.
Commitment fees, tax, credits, refunds and discounts are then derived from aggregates of those
rows, so fees and usage agree (Savings Plan used commitment, RI unused hours, tax base).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from dataclasses import dataclass, replace
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Literal

import duckdb

from gpuledger_demo.common import Period, connect, digest, insert, quote, seeded_code, seeded_number, seeded_uuid
from models.aws import AWS_REGION_NAMES
from models.aws_cur import COST, CUR_COLUMNS, TIMESTAMP, cur1_to_snake

SourceFormat = Literal["aws-cur1", "aws-cur2"]
ScaledFormat = Literal["cur2-parquet", "cur1-csv", "cur1-parquet"]
_Mode = Literal["OnDemand", "Spot", "SavingsPlan", "Reserved"]


@dataclass(frozen=True, kw_only=True)
class DemoSource:
    """One configured billing source of the demo: a CUR 2.0 export or a CUR 1 report folder."""

    name: str
    provider: str = "aws"
    format: SourceFormat
    path: Path
    """The export/report folder (``<bucket>/<prefix>/<name>``)."""


_TERM_HOURS = 8760  # 1-year commitments amortize their upfront over 365 days
_TAX_RATE = Decimal("0.0725")
_ENTITY = "Amazon Web Services, Inc."
_ON_DEMAND_TERM = "JRTCKXETXF"  # AWS's offer term code for on-demand prices

# region -> (usage-type prefix, pricing location, inter-region usage-type code); us-east-1 is unprefixed
# region -> (usage-type prefix, transfer code); display names come from models.aws.AWS_REGION_NAMES
_REGIONS: dict[str, tuple[str, str]] = {
    "us-east-1": ("", "USE1"),
    "us-west-2": ("USW2-", "USW2"),
}
_PRODUCTS: dict[str, str] = {
    "AmazonEC2": "Amazon Elastic Compute Cloud",
    "AmazonS3": "Amazon Simple Storage Service",
    "AWSDataTransfer": "AWS Data Transfer",
    "ComputeSavingsPlans": "Savings Plans for AWS Compute usage",
}
# account id -> (account name, "Business Unit" cost category, which is defined per account)
_ACCOUNTS: dict[str, tuple[str, str]] = {
    "012345678901": ("helios-labs-payer", "Platform"),
    "000123456789": ("helios-ml-training", "Research"),
    "210987654321": ("helios-ml-research", "Research"),
    "004455667788": ("helios-vision-payer", "Platform"),
    "003344556677": ("helios-vision-prod", "Product"),
    "098765432109": ("helios-speech", "Product"),
}
_ON_DEMAND: dict[str, Decimal] = {
    "p5.48xlarge": Decimal("55.04"),
    "p5e.48xlarge": Decimal("63.296"),
    "p4d.24xlarge": Decimal("21.9576"),
    "g6e.12xlarge": Decimal("10.4926"),
}
_SPOT: dict[str, Decimal] = {"p5.48xlarge": Decimal("24.768"), "g6e.12xlarge": Decimal("4.197")}
_SAVINGS_PLAN_RATE: dict[str, Decimal] = {"p5.48xlarge": Decimal("39.6288")}  # Compute SP, 28% off
# p4d.24xlarge 1-year partial upfront RI per instance-hour: half recurring, half amortized upfront
_RI_RECURRING = Decimal("6.88")
_RI_UPFRONT_HOURLY = Decimal("6.88")


@dataclass(frozen=True)
class _Tags:
    team: str
    project: str
    created_by: str | None = None


_KARPENTER = "AssumedRole:AROAEXAMPLEKARPENTER1:karpenter"
_ALICE = "IAMUser:AIDAEXAMPLEALICE00001:alice"


@dataclass(frozen=True, kw_only=True)
class _Template:
    """A billed resource (or a usage stream of one) that the generator turns into line items."""

    key: str
    account: str
    kind: Literal["instance", "storage", "transfer"]
    product_code: str
    product_family: str
    usage_type: str
    operation: str
    region: str
    unit: str
    od_rate: Decimal
    description: str
    id_kind: Literal["instance", "volume", "snapshot", "bucket"]
    id_key: str
    size: float = 1.0
    """GB stored (storage) or GB per day (transfer)."""
    hourly: bool = False
    duty: float = 1.0
    """Share of hours an instance runs."""
    mode: _Mode = "OnDemand"
    az: str | None = None
    instance_type: str | None = None
    bucket: str | None = None
    from_location: str | None = None
    to_location: str | None = None
    transfer_type: str | None = None
    storage_class: str | None = None
    tags: _Tags | None = None
    weight: int = 2
    """Relative frequency in the benchmark export."""

    @property
    def billed_rate(self) -> Decimal:
        return _SPOT[self.instance_type or ""] if self.mode == "Spot" else self.od_rate

    @property
    def commit_rate(self) -> Decimal | None:
        if self.mode == "SavingsPlan":
            return _SAVINGS_PLAN_RATE[self.instance_type or ""]
        if self.mode == "Reserved":
            return _RI_RECURRING + _RI_UPFRONT_HOURLY
        return None


def _gpu(
    key: str,
    account: str,
    az: str,
    instance_type: str,
    *,
    tags: _Tags | None,
    duty: float,
    mode: _Mode = "OnDemand",
    hourly: bool = False,
) -> _Template:
    region = az[:-1]
    prefix = _REGIONS[region][0]
    od_rate = _ON_DEMAND[instance_type]
    if mode == "Spot":
        usage_type = f"{prefix}SpotUsage:{instance_type}"
        description = f"${_SPOT[instance_type]} per Linux/UNIX (Amazon VPC), {instance_type} Spot Instance-hour"
    elif mode == "Reserved":
        usage_type = f"{prefix}BoxUsage:{instance_type}"
        description = f"USD 0.0 per Linux/UNIX (Amazon VPC), {instance_type} reserved instance applied"
    else:
        usage_type = f"{prefix}BoxUsage:{instance_type}"
        description = f"${od_rate} per On Demand Linux {instance_type} Instance Hour"
    return _Template(
        key=key,
        account=account,
        kind="instance",
        product_code="AmazonEC2",
        product_family="Compute Instance",
        usage_type=usage_type,
        operation="RunInstances",
        region=region,
        unit="Hrs",
        od_rate=od_rate,
        description=description,
        id_kind="instance",
        id_key=key,
        hourly=hourly,
        duty=duty,
        mode=mode,
        az=az,
        instance_type=instance_type,
        tags=tags,
        weight=10 if hourly else 4,
    )


def _ebs(key: str, account: str, az: str, size_gb: float, tags: _Tags | None) -> _Template:
    region = az[:-1]
    prefix, location = _REGIONS[region][0], AWS_REGION_NAMES[region]
    return _Template(
        key=key,
        account=account,
        kind="storage",
        product_code="AmazonEC2",
        product_family="Storage",
        usage_type=f"{prefix}EBS:VolumeUsage.gp3",
        operation="CreateVolume-Gp3",
        region=region,
        unit="GB-Mo",
        od_rate=Decimal("0.08"),
        id_kind="volume",
        id_key=key,
        size=size_gb,
        az=az,
        tags=tags,
        description=f"$0.08 per GB-month of General Purpose (gp3) provisioned storage - {location}",
    )


def _snapshot(key: str, account: str, region: str, size_gb: float, tags: _Tags | None) -> _Template:
    prefix, location = _REGIONS[region][0], AWS_REGION_NAMES[region]
    return _Template(
        key=key,
        account=account,
        kind="storage",
        product_code="AmazonEC2",
        product_family="Storage Snapshot",
        usage_type=f"{prefix}EBS:SnapshotUsage",
        operation="CreateSnapshot",
        region=region,
        unit="GB-Mo",
        od_rate=Decimal("0.05"),
        id_kind="snapshot",
        id_key=key,
        size=size_gb,
        tags=tags,
        description=f"$0.05 per GB-Month of snapshot data stored - {location}",
    )


def _s3(bucket: str, account: str, region: str, size_gb: float, tags: _Tags | None) -> _Template:
    return _Template(
        key=bucket,
        account=account,
        kind="storage",
        product_code="AmazonS3",
        product_family="Storage",
        usage_type=f"{_REGIONS[region][0]}TimedStorage-ByteHrs",
        operation="StandardStorage",
        region=region,
        unit="GB-Mo",
        od_rate=Decimal("0.023"),
        id_kind="bucket",
        id_key=bucket,
        bucket=bucket,
        size=size_gb,
        storage_class="General Purpose",
        tags=tags,
        description="$0.023 per GB - first 50 TB / month of storage used",
    )


def _egress(
    key: str, source: _Template, product_code: str, operation: str, gb_per_day: float, tags: _Tags | None
) -> _Template:
    prefix, location = _REGIONS[source.region][0], AWS_REGION_NAMES[source.region]
    return _Template(
        key=key,
        account=source.account,
        kind="transfer",
        product_code=product_code,
        product_family="Data Transfer",
        usage_type=f"{prefix}DataTransfer-Out-Bytes",
        operation=operation,
        region=source.region,
        unit="GB",
        od_rate=Decimal("0.09"),
        id_kind=source.id_kind,
        id_key=source.id_key,
        bucket=source.bucket,
        size=gb_per_day,
        from_location=location,
        to_location="External",
        transfer_type="AWS Outbound",
        tags=tags,
        description="$0.09 per GB - first 10 TB / month data transfer out beyond the global free tier",
        weight=3,
    )


def _inter_region(
    key: str, source: _Template, destination: str, product_code: str, gb_per_day: float, tags: _Tags | None
) -> _Template:
    src_location, src_code = AWS_REGION_NAMES[source.region], _REGIONS[source.region][1]
    dst_location, dst_code = AWS_REGION_NAMES[destination], _REGIONS[destination][1]
    return _Template(
        key=key,
        account=source.account,
        kind="transfer",
        product_code=product_code,
        product_family="Data Transfer",
        usage_type=f"{src_code}-{dst_code}-AWS-Out-Bytes",
        operation="PutObjectForRepl",
        region=source.region,
        unit="GB",
        od_rate=Decimal("0.02"),
        id_kind=source.id_kind,
        id_key=source.id_key,
        bucket=source.bucket,
        size=gb_per_day,
        from_location=src_location,
        to_location=dst_location,
        transfer_type="InterRegion Outbound",
        tags=tags,
        description=f"$0.02 per GB - {src_location} data transfer to {dst_location}",
        weight=3,
    )


@dataclass(frozen=True)
class _SavingsPlan:
    account: str
    purchase_period: str
    hourly_commitment: Decimal
    upfront_share: Decimal = Decimal("0.5")


@dataclass(frozen=True)
class _Reservation:
    account: str
    region: str
    instance_type: str
    quantity: int
    purchase_period: str


@dataclass(frozen=True)
class _Adjustment:
    """A credit, refund or discount: ``share`` (negative) of the matching accounts' Usage cost."""

    line_item_type: str
    product_code: str
    share: Decimal
    description: str
    account: str | None = None
    period: str | None = None
    final_only: bool = False


@dataclass(frozen=True)
class _Payer:
    account: str
    templates: tuple[_Template, ...]
    savings_plan: _SavingsPlan | None = None
    reservation: _Reservation | None = None
    adjustments: tuple[_Adjustment, ...] = ()


def _helios_main() -> _Payer:
    """Payer 012345678901: the LLM org, on CUR 2.0 with a Compute Savings Plan and an EDP."""
    training, research, payer = "000123456789", "210987654321", "012345678901"
    pretrain = _Tags("llm-pretrain", "helios-70b", _KARPENTER)
    p5e_a = _gpu("llm-p5e-a", training, "us-west-2b", "p5e.48xlarge", tags=pretrain, duty=0.9, hourly=True)
    p5_spot = _gpu(
        "res-p5-spot",
        research,
        "us-east-1c",
        "p5.48xlarge",
        tags=_Tags("research", "helios-7b-sft", _ALICE),
        duty=0.5,
        mode="Spot",
    )
    ckpt = _s3("helios-ckpt-llm", training, "us-east-1", 180_000, _Tags("llm-pretrain", "helios-70b"))
    datasets = _s3("helios-datasets", research, "us-west-2", 420_000, _Tags("platform", "data-pipeline"))
    templates = (
        _gpu("llm-p5-sp-a", training, "us-east-1a", "p5.48xlarge", tags=pretrain, duty=0.85, mode="SavingsPlan"),
        _gpu("llm-p5-sp-b", training, "us-east-1a", "p5.48xlarge", tags=pretrain, duty=0.85, mode="SavingsPlan"),
        p5e_a,
        _gpu("llm-p5e-b", training, "us-west-2b", "p5e.48xlarge", tags=pretrain, duty=0.8, hourly=True),
        p5_spot,
        _gpu("res-g6e-spot", research, "us-west-2a", "g6e.12xlarge", tags=None, duty=0.6, mode="Spot"),
        _gpu(
            "eval-p4d",
            research,
            "us-west-2c",
            "p4d.24xlarge",
            tags=_Tags("platform", "eval-harness"),
            duty=0.7,
        ),
        _ebs("vol-llm-a", training, "us-west-2b", 4000, pretrain),
        _ebs("vol-llm-b", training, "us-east-1a", 2000, pretrain),
        _ebs("vol-research", research, "us-east-1c", 1000, None),
        _snapshot("snap-llm", training, "us-west-2", 6000, pretrain),
        _snapshot("snap-research", research, "us-east-1", 1500, None),
        ckpt,
        datasets,
        _s3("helios-org-cloudtrail", payer, "us-east-1", 1200, _Tags("platform", "governance")),
        _egress("egress-p5e", p5e_a, "AmazonEC2", "RunInstances", 900, pretrain),
        _egress(
            "egress-datasets",
            datasets,
            "AWSDataTransfer",
            "GetObject",
            2500,
            _Tags("platform", "data-pipeline"),
        ),
        _egress("egress-research", p5_spot, "AmazonEC2", "RunInstances", 150, _Tags("research", "helios-7b-sft")),
        _inter_region("repl-ckpt", ckpt, "us-west-2", "AmazonS3", 5000, _Tags("llm-pretrain", "helios-70b")),
    )
    return _Payer(
        account=payer,
        templates=templates,
        savings_plan=_SavingsPlan(training, "2026-10", Decimal("80")),
        adjustments=(
            _Adjustment("EdpDiscount", "AmazonEC2", Decimal("-0.04"), "Enterprise Discount Program discount"),
            _Adjustment(
                "Credit",
                "AmazonEC2",
                Decimal("-0.03"),
                "AWS Promotional Credit - GPU capacity launch",
                account=training,
                period="2026-11",
                final_only=True,
            ),
        ),
    )


def _helios_vision() -> _Payer:
    """Payer 004455667788: the acquired vision/speech org, still on a legacy CUR 1 with a p4d RI."""
    vision, speech, payer = "003344556677", "098765432109", "004455667788"
    detector = _Tags("vision", "detector-v9", _KARPENTER)
    asr = _Tags("speech", "asr-v3", _ALICE)
    g6e = _gpu("vis-g6e-od", vision, "us-east-1b", "g6e.12xlarge", tags=detector, duty=0.75, hourly=True)
    ckpt = _s3("helios-ckpt-vision", vision, "us-west-2", 90_000, _Tags("vision", "detector-v9"))
    corpus = _s3("helios-speech-corpus", speech, "us-east-1", 260_000, _Tags("speech", "asr-v3"))
    templates = (
        _gpu(
            "vis-p4d-ri-a",
            vision,
            "us-west-2a",
            "p4d.24xlarge",
            tags=detector,
            duty=0.9,
            mode="Reserved",
            hourly=True,
        ),
        _gpu("vis-p4d-ri-b", vision, "us-west-2a", "p4d.24xlarge", tags=detector, duty=0.8, mode="Reserved"),
        g6e,
        _gpu(
            "vis-g6e-spot",
            vision,
            "us-east-1d",
            "g6e.12xlarge",
            tags=_Tags("vision", "auto-label", _KARPENTER),
            duty=0.6,
            mode="Spot",
        ),
        _gpu("speech-p5", speech, "us-east-1a", "p5.48xlarge", tags=asr, duty=0.65),
        _gpu("speech-p5e", speech, "us-west-2b", "p5e.48xlarge", tags=None, duty=0.5),
        _ebs("vol-vision", vision, "us-west-2a", 3000, detector),
        _ebs("vol-speech", speech, "us-east-1a", 1500, asr),
        _snapshot("snap-vision", vision, "us-west-2", 4000, None),
        ckpt,
        corpus,
        _s3("helios-legacy-logs", payer, "us-east-1", 300, _Tags("platform", "governance")),
        _egress("egress-g6e", g6e, "AmazonEC2", "RunInstances", 300, detector),
        _egress("egress-corpus", corpus, "AmazonS3", "GetObject", 800, _Tags("speech", "asr-v3")),
        _inter_region("repl-vision", ckpt, "us-east-1", "AWSDataTransfer", 1200, _Tags("vision", "detector-v9")),
    )
    return _Payer(
        account=payer,
        templates=templates,
        reservation=_Reservation(vision, "us-west-2", "p4d.24xlarge", 2, "2026-10"),
        adjustments=(
            _Adjustment(
                "BundledDiscount",
                "AWSDataTransfer",
                Decimal("-0.1"),
                "Bundled discount: replication data transfer",
            ),
            _Adjustment("Discount", "AmazonS3", Decimal("-0.05"), "Private pricing: S3 storage volume discount"),
            _Adjustment(
                "Refund",
                "AmazonEC2",
                Decimal("-0.015"),
                "Refund: p5 capacity outage SLA credit",
                account=speech,
                period="2026-10",
                final_only=True,
            ),
        ),
    )


@dataclass(frozen=True)
class _Delivery:
    """One export version of a payer's month: a full cumulative copy, as AWS delivers it."""

    version_id: str
    """executionId / assemblyId; part of every line item id, which is not stable across versions."""
    period: Period
    usage_days: int | None
    """Usage metered so far (an in-month delivery); None for the whole month."""
    final: bool
    """Month closed: invoiced, late credits and refunds booked."""


def _sp_arn(seed: int, plan: _SavingsPlan) -> str:
    return f"arn:aws:savingsplans::{plan.account}:savingsplan/{seeded_uuid(seed, 'savings-plan', plan.account)}"


def _ri_arn(seed: int, ri: _Reservation) -> str:
    return f"arn:aws:ec2:{ri.region}:{ri.account}:reserved-instances/{seeded_uuid(seed, 'reservation', ri.account)}"


def _scaled(value: Decimal, places: int) -> int:
    """``value`` in units of 10**-places: the generator prices in exact integers, not slow DECIMALs."""
    units = value.scaleb(places)
    if units != units.to_integral_value():
        raise ValueError(f"{value} has more than {places} decimals")
    return int(units)


def _id_prefix(seed: int, delivery: _Delivery) -> str:
    """First 36 of a line item id's 52 characters: new for every delivery, as AWS's ids are."""
    return base64.b32encode(digest(seed, "line-items", delivery.version_id)).decode().lower()[:36]


# ---------------------------------------------------------------------------------------------
# CUR 2.0 maps, built from the canonical columns for generated and derived rows alike
# ---------------------------------------------------------------------------------------------

_PRODUCT_MAP = {
    "product_name": "product_product_name",
    "region": "product_region_code",
    "transfer_type": "product_transfer_type",
    "storage_class": "product_storage_class",
}
_TAG_MAP = {"user_team": "tag_team", "user_project": "tag_project", "aws_created_by": "tag_created_by"}
_COST_CATEGORY_MAP = {"Business Unit": "business_unit"}


def _map_sql(entries: dict[str, str]) -> str:
    """A MAP holding only the keys that have a value, as CUR 2.0 ships its sparse columns."""
    structs = ", ".join(f"{{'key': {quote(key)}, 'value': {column}}}" for key, column in entries.items())
    return f"map_from_entries(list_filter([{structs}], e -> e.value IS NOT NULL))"


_MAP_COLUMNS = {
    "product": _map_sql(_PRODUCT_MAP),
    "resource_tags": _map_sql(_TAG_MAP),
    "cost_category": _map_sql(_COST_CATEGORY_MAP),
}

# ---------------------------------------------------------------------------------------------
# The one row generator: events (template, replica, slot) -> canonical CUR line items
# ---------------------------------------------------------------------------------------------

_TEMPLATE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("tpl_id", "INTEGER"),
    ("key_hash", "BIGINT"),
    ("payer", "VARCHAR"),
    ("payer_name", "VARCHAR"),
    ("account", "VARCHAR"),
    ("account_name", "VARCHAR"),
    ("business_unit", "VARCHAR"),
    ("kind", "VARCHAR"),
    ("mode", "VARCHAR"),
    ("product_code", "VARCHAR"),
    ("product_product_name", "VARCHAR"),
    ("product_product_family", "VARCHAR"),
    ("usage_type", "VARCHAR"),
    ("operation", "VARCHAR"),
    ("product_region_code", "VARCHAR"),
    ("az", "VARCHAR"),
    ("product_instance_type", "VARCHAR"),
    ("unit", "VARCHAR"),
    ("od_rate_e4", "BIGINT"),
    ("billed_rate_e4", "BIGINT"),
    ("commit_rate_e4", "BIGINT"),
    ("size", "DOUBLE"),
    ("hourly", "BOOLEAN"),
    ("duty", "DOUBLE"),
    ("description", "VARCHAR"),
    ("sku", "VARCHAR"),
    ("rate_code", "VARCHAR"),
    ("rate_id", "VARCHAR"),
    ("id_kind", "VARCHAR"),
    ("id_key", "VARCHAR"),
    ("bucket", "VARCHAR"),
    ("product_from_location", "VARCHAR"),
    ("product_to_location", "VARCHAR"),
    ("product_transfer_type", "VARCHAR"),
    ("product_storage_class", "VARCHAR"),
    ("tag_team", "VARCHAR"),
    ("tag_project", "VARCHAR"),
    ("tag_created_by", "VARCHAR"),
    ("sp_arn", "VARCHAR"),
    ("ri_arn", "VARCHAR"),
    ("term_start", "VARCHAR"),
    ("term_end", "VARCHAR"),
)

_ISO = "%Y-%m-%dT%H:%M:%SZ"
_TS = f"'{_ISO}'"
_ISO_MS = "%Y-%m-%dT%H:%M:%S.000Z"


def _term(purchase_period: str) -> tuple[str, str]:
    """A commitment's term as CUR writes it: from the first hour its fees cover, _TERM_HOURS long (end exclusive)."""
    start = Period(purchase_period).start
    return f"{start:{_ISO_MS}}", f"{start + timedelta(hours=_TERM_HOURS):{_ISO_MS}}"


# mix32 is the 0x45d9f3b xorshift-multiply hash: fixed across DuckDB versions (unlike hash()) and
# cheap (unlike md5), so 10M rows draw their template, replica, slot and size in a few seconds.
_SETUP_SQL = f"""
CREATE OR REPLACE TEMP MACRO mix_step(x) AS (xor(x, x >> 16) * 73244475) % 4294967296;
CREATE OR REPLACE TEMP MACRO mix32(x) AS xor(mix_step(mix_step(x)), mix_step(mix_step(x)) >> 16);
-- one row per template and replica: the resource id and the CUR 2.0 maps, computed once
CREATE OR REPLACE TEMP TABLE catalog AS
SELECT *,
    CASE id_kind
        WHEN 'bucket' THEN bucket || CASE WHEN replica > 0 THEN '-' || replica ELSE '' END
        ELSE concat(
            CASE id_kind
                WHEN 'instance' THEN 'i-0'
                WHEN 'volume' THEN 'vol-0'
                ELSE concat('arn:aws:ec2:', product_region_code, ':', account, ':snapshot/snap-0')
            END,
            substr(md5(concat(seed, ':', id_key, ':', replica)), 1, 16))
    END AS resource_id,
    {", ".join(f"{sql} AS {name}" for name, sql in _MAP_COLUMNS.items())}
FROM (SELECT t.*, p.seed AS seed, unnest(range(p.replicas)) AS replica FROM tpl AS t CROSS JOIN params AS p);
"""  # noqa: S608  (the map columns are this module's _MAP_COLUMNS)

# Demo events: every slot of every template up to the delivery's cut-off, hourly instances only in
# the hours they ran.
_DEMO_EVENTS_SQL = """
CREATE OR REPLACE TEMP VIEW events AS
WITH slots AS (
    SELECT t.tpl_id, t.kind, t.hourly, t.duty, t.mode, t.key_hash,
        unnest(range(CASE WHEN t.hourly THEN p.usage_hours ELSE p.usage_hours // 24 END)) AS slot
    FROM tpl AS t CROSS JOIN params AS p
),
drawn AS (
    SELECT *, (mix32((key_hash + slot * 2654435761) % 4294967296) // 1024 % 1000000) / 1e6 AS u FROM slots
),
expanded AS (
    SELECT tpl_id, hourly, slot, u,
        -- a Savings-Plan-covered slot is billed as a covered row plus its negation
        unnest(CASE WHEN mode = 'SavingsPlan' THEN [false, true] ELSE [false] END) AS negation
    FROM drawn
    WHERE NOT (kind = 'instance' AND hourly AND u >= duty)
)
SELECT tpl_id, 0::BIGINT AS replica, hourly, slot, negation, true AS sp_ok, u,
    tpl_id * 2097152 + slot * 2 + negation::INTEGER AS id_num
FROM expanded
"""

# Benchmark events: row i of range(N). Pairs (2k, 2k+1) share a template so that Savings Plan rows
# come with their negation; the first pairs walk every template once, the rest follow the weights.
_SAMPLED_EVENTS_SQL = """
CREATE OR REPLACE TEMP VIEW events AS
WITH drawn AS (
    SELECT g.i, g.i // 2 AS pair,
        mix32((g.i // 2 * 2654435761 + p.seed * 40503 + 1) % 4294967296) AS hp,
        mix32((g.i // 2 * 2654435761 + p.seed * 40503 + 2) % 4294967296) AS hq,
        mix32((g.i * 2654435761 + p.seed * 40503 + 3) % 4294967296) AS hr
    FROM range({rows}) AS g(i) CROSS JOIN params AS p
),
placed AS (
    SELECT d.*, CAST(CASE WHEN d.pair < {templates} THEN d.pair ELSE w.tpl_id END AS INTEGER) AS tpl_id
    FROM drawn AS d JOIN weights AS w ON w.bucket = d.hp % 1000
),
paired AS (
    SELECT pl.*, p.replicas, t.hourly,
        t.mode = 'SavingsPlan' AND pl.pair * 2 + 1 < {rows} AS sp_ok,
        CASE WHEN t.hourly THEN p.month_hours ELSE p.month_hours // 24 END AS n_slots
    FROM placed AS pl JOIN tpl AS t USING (tpl_id) CROSS JOIN params AS p
)
SELECT tpl_id,
    hp // 1000 % replicas AS replica,
    hourly,
    CASE WHEN sp_ok THEN hq ELSE hr END % n_slots AS slot,
    sp_ok AND i % 2 = 1 AS negation,
    sp_ok,
    (CASE WHEN sp_ok THEN hq ELSE hr END // 1024 % 1000000) / 1e6 AS u,
    i AS id_num
FROM paired
"""


def _cost(rate_e4: str) -> str:
    """rate (1e-4 units) x amount (1e-10 units), rounded half away from zero to CUR's 10 decimals."""
    return f"(sign({rate_e4}) * ((abs({rate_e4}) * amount_e10 + 5000) // 10000) / 1e10)"


_LINE_ITEMS_SQL = f"""
CREATE OR REPLACE TEMP VIEW li AS
WITH joined AS (
    SELECT e.*, c.* EXCLUDE (tpl_id, replica, hourly, seed), p.*,
        CASE WHEN e.hourly THEN 1 ELSE 24 END AS slot_hours,
        -- an unpaired last benchmark row cannot carry a negation, so it is plain on-demand usage
        CASE WHEN c.mode = 'SavingsPlan' AND NOT e.sp_ok THEN 'OnDemand' ELSE c.mode END AS pay_mode
    -- the events' only join: with a second lookup table the optimizer crossed it with catalog and hashed the events
    FROM events AS e
    JOIN catalog AS c USING (tpl_id, replica)
    CROSS JOIN params AS p
),
measured AS (
    SELECT *,
        period_start_s + slot * slot_hours * 3600 AS start_s,
        period_start_s + (slot + 1) * slot_hours * 3600 AS end_s,
        CASE pay_mode
            WHEN 'SavingsPlan' THEN
                CASE WHEN negation THEN 'SavingsPlanNegation' ELSE 'SavingsPlanCoveredUsage' END
            WHEN 'Reserved' THEN 'DiscountedUsage'
            ELSE 'Usage'
        END AS item_type,
        CASE kind
            WHEN 'instance' THEN
                CAST(CASE WHEN hourly THEN 1 ELSE 24 - floor(u * 24 * (1 - duty)) END AS BIGINT) * 10000000000
            -- stored bytes grow 25% over the month; each slot bills its share of a GB-month
            WHEN 'storage' THEN
                (CAST(round(size * (1 + 0.25 * slot * slot_hours / month_hours)) AS BIGINT)
                    * slot_hours * 10000000000 + month_hours // 2) // month_hours
            ELSE CAST(round(size * (0.4 + 1.2 * u) * slot_hours / 24 * 1000) AS BIGINT) * 10000000
        END AS amount_e10
    FROM joined
),
rated AS (
    SELECT *,
        CASE item_type
            WHEN 'Usage' THEN billed_rate_e4
            WHEN 'DiscountedUsage' THEN 0
            WHEN 'SavingsPlanCoveredUsage' THEN od_rate_e4
            ELSE -od_rate_e4
        END AS rate_e4
    FROM measured
)
SELECT
    -- mix32 is a bijection on 32 bits, so the suffix stays unique per event and looks random
    id_prefix || lower(lpad(to_hex(mix32(xor(id_num % 4294967296, 2654435769))), 8, '0'))
        || lower(lpad(to_hex(mix32(xor(id_num % 4294967296, 2246822507))), 8, '0')) AS identity_line_item_id,
    -- naive timestamps format several times faster than TIMESTAMPTZ, which goes through ICU
    strftime(make_timestamp(start_s * 1000000), {_TS}) || '/' || strftime(make_timestamp(end_s * 1000000), {_TS})
        AS identity_time_interval,
    invoice_id AS bill_invoice_id,
    '{_ENTITY}' AS bill_invoicing_entity,
    'AWS' AS bill_billing_entity,
    'Anniversary' AS bill_bill_type,
    payer AS bill_payer_account_id,
    payer_name AS bill_payer_account_name,
    period_start AS bill_billing_period_start_date,
    period_end AS bill_billing_period_end_date,
    account AS line_item_usage_account_id,
    account_name AS line_item_usage_account_name,
    item_type AS line_item_line_item_type,
    to_timestamp(start_s) AS line_item_usage_start_date,
    to_timestamp(end_s) AS line_item_usage_end_date,
    product_code AS line_item_product_code,
    usage_type AS line_item_usage_type,
    operation AS line_item_operation,
    az AS line_item_availability_zone,
    resource_id AS line_item_resource_id,
    amount_e10 / 1e10 AS line_item_usage_amount,
    'USD' AS line_item_currency_code,
    rate_e4 / 1e4 AS line_item_unblended_rate,
    {_cost("rate_e4")} AS line_item_unblended_cost,
    CASE WHEN item_type = 'SavingsPlanNegation'
        THEN concat('SavingsPlanNegation used by AccountId : ', account, ' and UsageSku : ', sku)
        ELSE description
    END AS line_item_line_item_description,
    '{_ENTITY}' AS line_item_legal_entity,
    CAST(NULL AS VARCHAR) AS line_item_tax_type,
    sku AS product_sku,
    product_code AS product_servicecode,
    product_product_name,
    product_product_family,
    product_region_code,
    product_instance_type,
    product_from_location,
    product_to_location,
    product_transfer_type,
    product_storage_class,
    CASE
        WHEN item_type = 'DiscountedUsage' THEN 'Reserved'
        WHEN pay_mode = 'Spot' THEN 'Spot'
        ELSE 'OnDemand'
    END AS pricing_term,
    unit AS pricing_unit,
    rate_code AS pricing_rate_code,
    rate_id AS pricing_rate_id,
    -- a negation only moves the covered row's cost to the plan; it has no list price of its own
    CASE WHEN item_type <> 'SavingsPlanNegation' THEN od_rate_e4 / 1e4 END AS pricing_public_on_demand_rate,
    CASE WHEN item_type <> 'SavingsPlanNegation' THEN {_cost("od_rate_e4")} END
        AS pricing_public_on_demand_cost,
    CASE WHEN item_type = 'DiscountedUsage' THEN ri_arn END AS reservation_reservation_a_r_n,
    CASE WHEN item_type = 'DiscountedUsage' THEN {_cost("commit_rate_e4")} END
        AS reservation_effective_cost,
    CAST(NULL AS DOUBLE) AS reservation_unused_amortized_upfront_fee_for_billing_period,
    CAST(NULL AS DOUBLE) AS reservation_unused_recurring_fee,
    CAST(NULL AS DOUBLE) AS reservation_unused_quantity,
    CASE WHEN item_type = 'DiscountedUsage' THEN term_start END AS reservation_start_time,
    CASE WHEN item_type = 'DiscountedUsage' THEN term_end END AS reservation_end_time,
    CASE WHEN item_type LIKE 'SavingsPlan%' THEN sp_arn END AS savings_plan_savings_plan_a_r_n,
    CASE WHEN item_type = 'SavingsPlanCoveredUsage' THEN {_cost("commit_rate_e4")} END
        AS savings_plan_savings_plan_effective_cost,
    CAST(NULL AS DOUBLE) AS savings_plan_total_commitment_to_date,
    CAST(NULL AS DOUBLE) AS savings_plan_used_commitment,
    CAST(NULL AS VARCHAR) AS savings_plan_offering_type,
    CASE WHEN item_type LIKE 'SavingsPlan%' THEN term_start END AS savings_plan_start_time,
    CASE WHEN item_type LIKE 'SavingsPlan%' THEN term_end END AS savings_plan_end_time,
    product,
    resource_tags,
    cost_category,
    tag_team,
    tag_project,
    tag_created_by,
    business_unit
FROM rated
"""  # noqa: S608  (cost expressions and formats are this module's constants)

# sums as DECIMAL: the derived rows must match the generated ones to the last of 10 decimals
_AGGREGATE_SQL = f"""
SELECT
    line_item_usage_account_id,
    line_item_product_code,
    sum(CAST(line_item_unblended_cost AS {COST})),
    coalesce(sum(CAST(line_item_unblended_cost AS {COST}))
        FILTER (WHERE line_item_line_item_type = 'Usage'), 0),
    coalesce(sum(CAST(savings_plan_savings_plan_effective_cost AS {COST})), 0),
    coalesce(sum(CAST(line_item_usage_amount AS {COST}))
        FILTER (WHERE line_item_line_item_type = 'DiscountedUsage'), 0)
FROM li
GROUP BY ALL
ORDER BY ALL
"""  # noqa: S608  (the decimal type is this module's COST)


@dataclass(frozen=True)
class _Totals:
    """Generated usage of one (usage account, product code)."""

    account: str
    product_code: str
    billed: Decimal
    usage_cost: Decimal
    """Cost of plain ``Usage`` rows, the base of credits and discounts."""
    sp_used: Decimal
    ri_hours: Decimal


def _load_templates(con: duckdb.DuckDBPyConnection, payer: _Payer, seed: int) -> None:
    columns = ", ".join(f"{name} {sql_type}" for name, sql_type in _TEMPLATE_COLUMNS)
    con.execute(f"CREATE OR REPLACE TEMP TABLE tpl ({columns})")
    sp_arn = _sp_arn(seed, payer.savings_plan) if payer.savings_plan else None
    ri_arn = _ri_arn(seed, payer.reservation) if payer.reservation else None
    rows: list[tuple[object, ...]] = []
    for tpl_id, t in enumerate(payer.templates):
        sku = seeded_code(seed, "sku", t.usage_type, t.operation)
        term = {
            "Reserved": seeded_code(seed, "term", "reserved", length=10),
            "Spot": seeded_code(seed, "term", "spot", length=10),
        }
        tags = (t.tags.team, t.tags.project, t.tags.created_by) if t.tags else (None, None, None)
        commit_rate = t.commit_rate
        commitment = {"SavingsPlan": payer.savings_plan, "Reserved": payer.reservation}.get(t.mode)
        commitment_term = _term(commitment.purchase_period) if commitment else (None, None)
        rows.append(
            (
                tpl_id,
                int.from_bytes(digest(seed, "template", t.key)[:4], "big"),
                payer.account,
                _ACCOUNTS[payer.account][0],
                t.account,
                *_ACCOUNTS[t.account],
                t.kind,
                t.mode,
                t.product_code,
                _PRODUCTS[t.product_code],
                t.product_family,
                t.usage_type,
                t.operation,
                t.region,
                t.az,
                t.instance_type,
                t.unit,
                _scaled(t.od_rate, 4),
                _scaled(t.billed_rate, 4),
                None if commit_rate is None else _scaled(commit_rate, 4),
                t.size,
                t.hourly,
                t.duty,
                t.description,
                sku,
                f"{sku}.{term.get(t.mode, _ON_DEMAND_TERM)}.6YS6EN2CT7",
                seeded_number(seed, "rate", sku),
                t.id_kind,
                t.id_key,
                t.bucket,
                t.from_location,
                t.to_location,
                t.transfer_type,
                t.storage_class,
                *tags,
                sp_arn if t.mode == "SavingsPlan" else None,
                ri_arn if t.mode == "Reserved" else None,
                *commitment_term,
            )
        )
    insert(con, "tpl", rows)


def _prepare(
    con: duckdb.DuckDBPyConnection,
    payer: _Payer,
    delivery: _Delivery,
    invoice_id: str | None,
    seed: int,
    replicas: int,
) -> None:
    """Load the templates and the delivery's parameters, resource ids and CUR 2.0 maps."""
    _load_templates(con, payer, seed)
    period = delivery.period
    usage_hours = period.hours if delivery.usage_days is None else delivery.usage_days * 24
    con.execute(
        "CREATE OR REPLACE TEMP TABLE params (period_start TIMESTAMPTZ, period_end TIMESTAMPTZ,"
        " period_start_s BIGINT, month_hours INTEGER, usage_hours INTEGER, id_prefix VARCHAR, invoice_id VARCHAR,"
        " seed BIGINT, replicas BIGINT)"
    )
    params = [
        period.start,
        period.end,
        int(period.start.timestamp()),
        period.hours,
        usage_hours,
        _id_prefix(seed, delivery),
        invoice_id,
        seed,
        replicas,
    ]
    insert(con, "params", [params])
    con.execute(_SETUP_SQL)


def _totals(con: duckdb.DuckDBPyConnection) -> list[_Totals]:
    return [_Totals(*row) for row in con.execute(_AGGREGATE_SQL).fetchall()]


# ---------------------------------------------------------------------------------------------
# Rows derived from the usage: commitment fees, adjustments, tax
# ---------------------------------------------------------------------------------------------


def _extra_rows(
    totals: list[_Totals], payer: _Payer, delivery: _Delivery, invoice_id: str | None, seed: int
) -> list[dict[str, object]]:
    """The month's commitment fees, credits, refunds, discounts and tax, as canonical column dicts."""
    period = delivery.period
    id_prefix = _id_prefix(seed, delivery)
    rows: list[dict[str, object]] = []

    def add(item_type: str, account: str, product_code: str, cost: Decimal, description: str, **fields: object) -> None:
        bill_type = {"Fee": "Purchase", "SavingsPlanUpfrontFee": "Purchase", "Refund": "Refund"}.get(item_type)
        rows.append(
            {
                "identity_line_item_id": id_prefix + digest(seed, delivery.version_id, len(rows)).hex()[:16],
                "identity_time_interval": f"{period.start:{_ISO}}/{period.end:{_ISO}}",
                "bill_invoice_id": invoice_id,
                "bill_invoicing_entity": _ENTITY,
                "bill_billing_entity": "AWS",
                "bill_bill_type": bill_type or "Anniversary",
                "bill_payer_account_id": payer.account,
                "bill_payer_account_name": _ACCOUNTS[payer.account][0],
                "bill_billing_period_start_date": period.start,
                "bill_billing_period_end_date": period.end,
                "line_item_usage_account_id": account,
                "line_item_usage_account_name": _ACCOUNTS[account][0],
                "line_item_line_item_type": item_type,
                "line_item_usage_start_date": period.start,
                "line_item_usage_end_date": period.end,
                "line_item_product_code": product_code,
                "line_item_currency_code": "USD",
                "line_item_unblended_cost": cost,
                "line_item_line_item_description": description,
                "line_item_legal_entity": _ENTITY,
                "product_servicecode": product_code,
                "product_product_name": _PRODUCTS[product_code],
                "business_unit": _ACCOUNTS[account][1],
                **fields,
            }
        )

    def priced(usage_type: str, unit: str, amount: Decimal, rate: Decimal) -> dict[str, object]:
        sku = seeded_code(seed, "sku", usage_type)
        return {
            "line_item_usage_type": usage_type,
            "line_item_usage_amount": amount,
            "line_item_unblended_rate": rate,
            "product_sku": sku,
            "pricing_unit": unit,
            "pricing_rate_code": f"{sku}.{seeded_code(seed, 'term', usage_type, length=10)}.6YS6EN2CT7",
            "pricing_rate_id": seeded_number(seed, "rate", sku),
        }

    if plan := payer.savings_plan:
        arn = _sp_arn(seed, plan)
        usage_type = "ComputeSP:1yrPartialUpfront"
        term_start, term_end = _term(plan.purchase_period)
        common = {
            "line_item_resource_id": arn,
            "savings_plan_savings_plan_a_r_n": arn,
            "savings_plan_start_time": term_start,
            "savings_plan_end_time": term_end,
            "savings_plan_offering_type": "ComputeSavingsPlans",
            "product_product_family": "Savings Plan",
            "pricing_term": "Savings Plan",
        }
        if plan.purchase_period == period.label:
            upfront = plan.hourly_commitment * plan.upfront_share * _TERM_HOURS
            add(
                "SavingsPlanUpfrontFee",
                plan.account,
                "ComputeSavingsPlans",
                upfront,
                "1 year Partial Upfront Compute Savings Plan",
                **priced(usage_type, "Quantity", Decimal(1), upfront),
                **common,
            )
        recurring = plan.hourly_commitment * (1 - plan.upfront_share)
        hours = Decimal(period.hours)
        # billed: the recurring half; TotalCommitmentToDate: the whole commitment incl. amortized upfront
        add(
            "SavingsPlanRecurringFee",
            plan.account,
            "ComputeSavingsPlans",
            recurring * hours,
            f"{recurring} USD hourly fee per Compute Savings Plan",
            **priced(usage_type, "Hrs", hours, recurring),
            savings_plan_total_commitment_to_date=plan.hourly_commitment * hours,
            savings_plan_used_commitment=sum((t.sp_used for t in totals), Decimal(0)),
            **common,
        )
    if ri := payer.reservation:
        arn = _ri_arn(seed, ri)
        usage_type = f"{_REGIONS[ri.region][0]}HeavyUsage:{ri.instance_type}"
        term_start, term_end = _term(ri.purchase_period)
        common = {
            "reservation_reservation_a_r_n": arn,
            "reservation_start_time": term_start,
            "reservation_end_time": term_end,
            "product_product_family": "Compute Instance",
            "product_region_code": ri.region,
            "product_instance_type": ri.instance_type,
            "pricing_term": "Reserved",
        }
        if ri.purchase_period == period.label:
            upfront = _RI_UPFRONT_HOURLY * _TERM_HOURS * ri.quantity
            add(
                "Fee",
                ri.account,
                "AmazonEC2",
                upfront,
                f"Sign up charge for subscription: {seeded_number(seed, 'subscription', arn)}, planId: 2191323",
                **priced(usage_type, "Quantity", Decimal(1), upfront),
                **common,
            )
        hours = Decimal(ri.quantity * period.hours)
        unused = hours - sum((t.ri_hours for t in totals), Decimal(0))
        add(
            "RIFee",
            ri.account,
            "AmazonEC2",
            _RI_RECURRING * hours,
            f"USD {_RI_RECURRING} hourly fee per Linux/UNIX (Amazon VPC), {ri.instance_type} instance",
            **priced(usage_type, "Hrs", hours, _RI_RECURRING),
            **common,
            reservation_unused_quantity=unused,
            reservation_unused_recurring_fee=unused * _RI_RECURRING,
            reservation_unused_amortized_upfront_fee_for_billing_period=unused * _RI_UPFRONT_HOURLY,
        )
    for adjustment in payer.adjustments:
        if adjustment.period not in (None, period.label) or (adjustment.final_only and not delivery.final):
            continue
        for t in totals:
            if (
                t.product_code == adjustment.product_code
                and adjustment.account in (None, t.account)
                and t.usage_cost > 0
            ):
                amount = round(t.usage_cost * adjustment.share, 2)
                add(adjustment.line_item_type, t.account, t.product_code, amount, adjustment.description)
    # tax is charged on the net billed amount of each account and service, before credits and refunds
    base: dict[tuple[str, str], Decimal] = {(t.account, t.product_code): t.billed for t in totals}
    for row in list(rows):
        if row["line_item_line_item_type"] not in ("Credit", "Refund"):
            key = (str(row["line_item_usage_account_id"]), str(row["line_item_product_code"]))
            base[key] = base.get(key, Decimal(0)) + Decimal(str(row["line_item_unblended_cost"]))
    for (account, product_code), amount in sorted(base.items()):
        add(
            "Tax",
            account,
            product_code,
            round(amount * _TAX_RATE, 2),
            f"Tax for product code {product_code}",
            line_item_tax_type="Sales Tax",
        )
    return rows


def _insert_extra(con: duckdb.DuckDBPyConnection, rows: list[dict[str, object]]) -> None:
    """Store the derived rows as ``extra``, shaped like the generated ``li`` rows."""
    con.execute("CREATE OR REPLACE TEMP TABLE extra AS SELECT * FROM li LIMIT 0")
    columns = [name for name, *_ in con.execute("DESCRIBE extra").fetchall()]
    insert(con, "extra", [[row.get(c) for c in columns] for row in rows])
    # the map columns are this module's _MAP_COLUMNS
    con.execute(f"UPDATE extra SET {', '.join(f'{name} = {sql}' for name, sql in _MAP_COLUMNS.items())}")  # noqa: S608


# ---------------------------------------------------------------------------------------------
# Writers: canonical rows -> CUR 2.0 Parquet or CUR 1 CSV
# ---------------------------------------------------------------------------------------------

_CUR2_ONLY = frozenset({"bill_payer_account_name", "line_item_usage_account_name"})
_CUR1_TAGS = (
    ("resourceTags/user:team", "tag_team"),
    ("resourceTags/user:project", "tag_project"),
    ("resourceTags/aws:createdBy", "tag_created_by"),
    ("costCategory/Business Unit", "business_unit"),
)
_CUR1_CATEGORIES = {
    "identity": "identity",
    "bill": "bill",
    "line_item": "lineItem",
    "product": "product",
    "pricing": "pricing",
    "reservation": "reservation",
    "savings_plan": "savingsPlan",
}
# product/* and pricing/* are lowerCamel in CUR 1 except these
_CUR1_UPPER = frozenset({"product_name", "rate_code", "rate_id"})


def _cur2_columns() -> list[tuple[str, str]]:
    """(name, manifest type) of the CUR 2.0 Parquet columns, alphabetical like the export."""
    columns = [(name, "map<string,string>") for name in _MAP_COLUMNS]
    for column in CUR_COLUMNS:
        if not column.product_map_key:
            # CUR writes commitment terms (the columns read leniently) as ISO text, not as timestamps
            timestamp = "string" if column.repair else "timestamp"
            kind = {COST: "double", TIMESTAMP: timestamp}.get(column.sql_type, "string")
            columns.append((column.name, kind))
    return sorted(columns)


def _cur1_header(snake: str) -> str:
    """Canonical snake-case name -> CUR 1 ``category/Name`` header (inverse of ``cur1_to_snake``)."""
    category = next(c for c in sorted(_CUR1_CATEGORIES, key=len, reverse=True) if snake.startswith(c + "_"))
    name = snake[len(category) + 1 :]
    camel = "".join(part[:1].upper() + part[1:] for part in name.split("_"))
    if category in ("product", "pricing") and name not in _CUR1_UPPER:
        camel = camel[:1].lower() + camel[1:]
    return f"{_CUR1_CATEGORIES[category]}/{camel}"


def _decimal_text(column: str) -> str:
    """Plain decimal text, at most 10 decimals, no trailing zeros, never an exponent: how CUR 1 CSV spells money."""
    return rf"regexp_replace(CAST(CAST({column} AS {COST}) AS VARCHAR), '\.?0+$', '')"


def _cur1_columns() -> list[tuple[str, str, str]]:
    """(header, manifest type, SQL text value) of the CUR 1 CSV columns."""
    columns = []
    for column in CUR_COLUMNS:
        if column.name in _CUR2_ONLY:
            continue
        if column.sql_type == COST:
            sql = _decimal_text(column.name)
            kind = "BigDecimal" if column.required else "OptionalBigDecimal"
        elif column.sql_type == TIMESTAMP and not column.repair:
            fmt = _ISO_MS if column.name.startswith("bill_") else _ISO
            sql, kind = f"strftime({column.name}, '{fmt}')", "DateTime"
        else:
            sql = column.name
            kind = "Interval" if column.name == "identity_time_interval" else "String"
        columns.append((_cur1_header(column.name), kind, sql))
    columns.extend((header, "OptionalString", source) for header, source in _CUR1_TAGS)
    return columns


# Columns real CUR 1 reports carry that gpuledger does not read but the peer converter (focus-converter 1.0.0)
# requires: the scaled exports carry them so both read the same file.
_CUR1_PEER_COLUMNS = (
    ("product/region", "OptionalString", "product_region_code"),
    (
        "reservation/TotalReservedUnits",
        "OptionalBigDecimal",
        f"CASE WHEN line_item_line_item_type = 'RIFee' THEN {_decimal_text('line_item_usage_amount')} END",
    ),
)


def _copy(
    con: duckdb.DuckDBPyConnection, fmt: SourceFormat | ScaledFormat, source: str, target: Path, peer: bool = False
) -> None:
    """Write ``source`` (a FROM clause over canonical rows) as one CUR data file; ``peer``: CUR 1 with the columns
    the peer converter requires too. ``cur1-parquet`` is CUR 1 as Athena's Parquet: snake-case names, typed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    cur1 = _cur1_columns() + (list(_CUR1_PEER_COLUMNS) if peer else [])
    if fmt in ("aws-cur2", "cur2-parquet"):
        select = ", ".join(name for name, _ in _cur2_columns())
        options = "FORMAT parquet, COMPRESSION snappy"
    elif fmt == "cur1-parquet":
        select = ", ".join(f"{_athena_value(header, sql)} AS {cur1_to_snake(header)}" for header, _, sql in cur1)
        options = "FORMAT parquet, COMPRESSION snappy"
    else:
        select = ", ".join(f'{sql} AS "{header}"' for header, _, sql in cur1)
        options = "FORMAT csv, HEADER true, COMPRESSION gzip"
    # COPY TO takes no parameters: the path quoted, columns, source and options this module's own
    con.execute(f"COPY (SELECT {select} FROM {source}) TO {quote(str(target))} ({options})")  # noqa: S608


def _athena_value(header: str, text_sql: str) -> str:
    """A CUR 1 column's value as Athena's Parquet types it: money as DOUBLE, times as TIMESTAMP, the rest text."""
    canonical = next((c for c in CUR_COLUMNS if _cur1_header(c.name) == header), None)
    if canonical is not None and canonical.sql_type == COST:
        return f"CAST({canonical.name} AS DOUBLE)"
    if canonical is not None and canonical.sql_type == TIMESTAMP and not canonical.repair:
        return f"CAST({canonical.name} AS TIMESTAMP)"
    if header == "reservation/TotalReservedUnits":
        return f"CAST({text_sql} AS DOUBLE)"
    return text_sql


# ---------------------------------------------------------------------------------------------
# A: the demo buckets
# ---------------------------------------------------------------------------------------------

_CUR2_BUCKET, _CUR2_PREFIX, _CUR2_EXPORT = "helios-billing-exports", "cur2", "helios-cur2"
_CUR1_BUCKET, _CUR1_PREFIX, _CUR1_REPORT = "helios-legacy-billing", "cur1", "helios-legacy-cur"
_RESTATED_AFTER_DAYS = 28  # the first November version was delivered before month end


def _build_delivery(con: duckdb.DuckDBPyConnection, payer: _Payer, delivery: _Delivery, seed: int) -> int:
    """Fill ``delivery_rows`` with one full copy of the payer's month, numbered in file order (``rn``)."""
    invoice_id = seeded_number(seed, "invoice", payer.account, delivery.period.label) if delivery.final else None
    _prepare(con, payer, delivery, invoice_id, seed, replicas=1)
    con.execute(_DEMO_EVENTS_SQL)
    con.execute(_LINE_ITEMS_SQL)
    _insert_extra(con, _extra_rows(_totals(con), payer, delivery, invoice_id, seed))
    con.execute(
        "CREATE OR REPLACE TEMP TABLE delivery_rows AS SELECT *,"
        " row_number() OVER (ORDER BY line_item_usage_start_date, identity_line_item_id) AS rn"
        " FROM (SELECT * FROM li UNION ALL SELECT * FROM extra)"
    )
    (count,) = con.execute("SELECT count(*) FROM delivery_rows").fetchone() or (0,)
    return int(count)


def _write_parts(con: duckdb.DuckDBPyConnection, fmt: SourceFormat, rows: int, targets: list[Path]) -> None:
    """Split ``delivery_rows`` into consecutive, equally sized data files."""
    per_part = math.ceil(rows / len(targets))
    for part, target in enumerate(targets):
        first, last = part * per_part + 1, (part + 1) * per_part
        # the bounds are integers computed here; the subquery goes into a COPY, which takes no parameters
        source = f"(SELECT * FROM delivery_rows WHERE rn BETWEEN {first} AND {last} ORDER BY rn)"  # noqa: S608
        _copy(con, fmt, source, target)


def _write_json(path: Path, document: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _write_cur2_demo(con: duckdb.DuckDBPyConnection, root: Path, seed: int) -> DemoSource:
    payer = _helios_main()
    bucket = root / _CUR2_BUCKET
    export_key = f"{_CUR2_PREFIX}/{_CUR2_EXPORT}"
    export_arn = (
        f"arn:aws:bcm-data-exports:us-east-1:{payer.account}:export/{_CUR2_EXPORT}-{seeded_uuid(seed, 'export')}"
    )
    columns = [{"name": name, "type": kind} for name, kind in _cur2_columns()]
    october, november = Period("2026-10"), Period("2026-11")
    data_file = f"{_CUR2_EXPORT}-00001.snappy.parquet"

    def deliver(delivery: _Delivery, folder: str) -> str:
        key = f"{export_key}/data/BILLING_PERIOD={delivery.period.label}/{folder}{data_file}"
        rows = _build_delivery(con, payer, delivery, seed)
        _write_parts(con, "aws-cur2", rows, [bucket / key])
        return f"s3://{_CUR2_BUCKET}/{key}"

    def manifest(delivery: _Delivery, data_files: list[str]) -> None:
        label = delivery.period.label
        _write_json(
            bucket / export_key / "metadata" / f"BILLING_PERIOD={label}" / f"{_CUR2_EXPORT}-Manifest.json",
            {
                "executionId": delivery.version_id,
                "exportArn": export_arn,
                "billingPeriod": label,
                "columns": columns,
                "dataFiles": data_files,
                "additionalOutputFiles": [],
            },
        )

    # October: OVERWRITE_REPORT, files straight in the period folder
    oct_final = _Delivery(seeded_uuid(seed, "cur2", october.label, 1), october, None, final=True)
    manifest(oct_final, [deliver(oct_final, "")])
    # November: CREATE_NEW_REPORT; the restating execution's manifest replaces the first one's
    nov_first = _Delivery(seeded_uuid(seed, "cur2", november.label, 1), november, _RESTATED_AFTER_DAYS, final=False)
    manifest(nov_first, [deliver(nov_first, f"{nov_first.version_id}/")])
    nov_final = _Delivery(seeded_uuid(seed, "cur2", november.label, 2), november, None, final=True)
    manifest(nov_final, [deliver(nov_final, f"{nov_final.version_id}/")])
    # December: data still being delivered, no manifest yet
    december = _Delivery(seeded_uuid(seed, "cur2", "2026-12", 1), Period("2026-12"), 1, final=False)
    deliver(december, f"{december.version_id}/")
    return DemoSource(name=_CUR2_EXPORT, format="aws-cur2", path=bucket / export_key)


def _deliver_cur1(con: duckdb.DuckDBPyConnection, root: Path, payer: _Payer, delivery: _Delivery, parts: int,
                  seed: int) -> DemoSource:  # fmt: skip
    """Write one CUR 1 assembly of ``payer``'s month in ``parts`` files, and the manifest naming them."""
    bucket, period = root / _CUR1_BUCKET, delivery.period
    report_key = f"{_CUR1_PREFIX}/{_CUR1_REPORT}"
    range_key = f"{report_key}/{period.cur1_range}"
    keys = [f"{range_key}/{delivery.version_id}/{_CUR1_REPORT}-{n}.csv.gz" for n in range(1, parts + 1)]
    rows = _build_delivery(con, payer, delivery, seed)
    _write_parts(con, "aws-cur1", rows, [bucket / key for key in keys])
    columns = [
        {"category": header.split("/", 1)[0], "name": header.split("/", 1)[1], "type": kind}
        for header, kind, _ in _cur1_columns()
    ]
    _write_json(
        bucket / range_key / f"{_CUR1_REPORT}-Manifest.json",
        {
            "assemblyId": delivery.version_id,
            "account": payer.account,
            "columns": columns,
            "charset": "UTF-8",
            "compression": "GZIP",
            "contentType": "text/csv",
            "reportId": digest(seed, "report", _CUR1_REPORT).hex(),
            "reportName": _CUR1_REPORT,
            "billingPeriod": {
                "start": f"{period.start:%Y%m%dT%H%M%S}.000Z",
                "end": f"{period.end:%Y%m%dT%H%M%S}.000Z",
            },
            "bucket": _CUR1_BUCKET,
            "reportKeys": keys,
        },
    )
    return DemoSource(name=_CUR1_REPORT, format="aws-cur1", path=bucket / report_key)


def _write_cur1_demo(con: duckdb.DuckDBPyConnection, root: Path, seed: int) -> DemoSource:
    payer = _helios_vision()
    october, november = Period("2026-10"), Period("2026-11")
    october_final = _Delivery(seeded_uuid(seed, "cur1", october.label, 1), october, None, final=True)
    _deliver_cur1(con, root, payer, october_final, 2, seed)
    nov_first = _Delivery(seeded_uuid(seed, "cur1", november.label, 1), november, _RESTATED_AFTER_DAYS, final=False)
    _deliver_cur1(con, root, payer, nov_first, 1, seed)
    nov_final = _Delivery(seeded_uuid(seed, "cur1", november.label, 2), november, None, final=True)
    return _deliver_cur1(con, root, payer, nov_final, 1, seed)


def write_cur1_month(
    root: Path, month: str, *, reservation_bought: str, final: bool = True, seed: int = 2026
) -> DemoSource:
    """Write one month of the legacy CUR 1 payer (004455667788) alone under ``root``, in two files.

    ``final`` writes the closed month's assembly; False its first version, metered over the month's first
    28 days (writing the final one later restates it). The payer's p4d reservation is bought in
    ``reservation_bought``, so months before the demo's October hold reserved usage too.
    """
    payer = _helios_vision()
    assert payer.reservation is not None
    payer = replace(payer, reservation=replace(payer.reservation, purchase_period=reservation_bought))
    period = Period(month)
    usage_days = None if final else _RESTATED_AFTER_DAYS
    delivery = _Delivery(seeded_uuid(seed, "cur1-alone", month, int(final)), period, usage_days, final=final)
    con = connect()
    try:
        return _deliver_cur1(con, root, payer, delivery, 2, seed)
    finally:
        con.close()


def demo_instance_id(key: str, seed: int = 2026) -> str:
    """ResourceId of the demo's GPU instance template ``key`` (replica 0), as ``_SETUP_SQL`` computes it."""
    keys = {t.key for payer in (_helios_main(), _helios_vision()) for t in payer.templates if t.kind == "instance"}
    if key not in keys:
        raise ValueError(f"{key!r} is not an instance of the demo exports (one of {', '.join(sorted(keys))})")
    return "i-0" + hashlib.md5(f"{seed}:{key}:0".encode(), usedforsecurity=False).hexdigest()[:16]


def write_demo_exports(root: Path, seed: int = 2026) -> list[DemoSource]:
    """Write Helios Labs' AWS billing exports for 2026-10 and 2026-11 under ``root`` (one folder per bucket).

    The same seed gives byte-identical files. Superseded versions and an unmanifested future
    period are left on disk, as in a real bucket; only manifest-listed files count.
    """
    con = connect()
    try:
        return [_write_cur2_demo(con, root, seed), _write_cur1_demo(con, root, seed)]
    finally:
        con.close()


# ---------------------------------------------------------------------------------------------
# B: one large month for benchmarks
# ---------------------------------------------------------------------------------------------

_BENCH_PERIOD = Period("2026-11")
_ROWS_PER_REPLICA = 50_000  # more rows, more resources: ~200 copies of each template at 10M rows


def _bench_payer() -> _Payer:
    """Both orgs' resources under one payer, with every commitment bought in the benchmark month."""
    main, vision = _helios_main(), _helios_vision()
    assert main.savings_plan is not None and vision.reservation is not None
    return _Payer(
        account=main.account,
        templates=main.templates + vision.templates,
        savings_plan=replace(main.savings_plan, purchase_period=_BENCH_PERIOD.label),
        reservation=replace(vision.reservation, purchase_period=_BENCH_PERIOD.label),
        adjustments=tuple(replace(a, period=None) for a in main.adjustments + vision.adjustments),
    )


def _load_weights(con: duckdb.DuckDBPyConnection, templates: tuple[_Template, ...]) -> None:
    """1000 hash buckets shared out by template weight (largest remainder), for an equi-join pick."""
    total = sum(t.weight for t in templates)
    quotas = [t.weight * 1000 / total for t in templates]
    counts = [int(q) for q in quotas]
    by_remainder = sorted(range(len(templates)), key=lambda i: (counts[i] - quotas[i], i))
    for i in by_remainder[: 1000 - sum(counts)]:
        counts[i] += 1
    buckets = [tpl_id for tpl_id, count in enumerate(counts) for _ in range(count)]
    con.execute("CREATE OR REPLACE TEMP TABLE weights (bucket BIGINT, tpl_id INTEGER)")
    insert(con, "weights", [[bucket, tpl_id] for bucket, tpl_id in enumerate(buckets)])


def _sized_commitments(payer: _Payer, totals: list[_Totals]) -> _Payer:
    """Size the plan and the reservation to the sampled usage, leaving some commitment unused."""
    assert payer.savings_plan is not None and payer.reservation is not None
    hours = _BENCH_PERIOD.hours
    sp_used = sum((t.sp_used for t in totals), Decimal(0))
    ri_hours = sum((t.ri_hours for t in totals), Decimal(0))
    return replace(
        payer,
        savings_plan=replace(
            payer.savings_plan, hourly_commitment=Decimal(math.ceil(sp_used * Decimal("1.1") / hours))
        ),
        reservation=replace(payer.reservation, quantity=math.ceil(ri_hours / hours) + 1),
    )


def write_scaled_cur_export(path: Path, rows: int, fmt: ScaledFormat, seed: int = 2026) -> list[Path]:
    """Write one month (2026-11) of exactly ``rows`` line items into the folder ``path``; return its files.

    Mostly Usage (on-demand, spot, RI- and Savings-Plan-covered with negations), plus the
    commitment fees, discounts, credit, refund and tax rows. Generated by DuckDB over
    ``range(rows)`` and streamed to one file, so memory stays flat at 10M+ rows.
    """
    payer = _bench_payer()
    templates = len(payer.templates)
    delivery = _Delivery(seeded_uuid(seed, "bench", rows), _BENCH_PERIOD, None, final=True)
    invoice_id = seeded_number(seed, "invoice", payer.account, _BENCH_PERIOD.label)
    con = connect()
    try:
        _load_weights(con, payer.templates)

        def sample(usage_rows: int) -> list[_Totals]:
            replicas = max(1, usage_rows // _ROWS_PER_REPLICA)
            _prepare(con, payer, delivery, invoice_id, seed, replicas)
            con.execute(_SAMPLED_EVENTS_SQL.format(rows=usage_rows, templates=templates))
            con.execute(_LINE_ITEMS_SQL)
            return _totals(con)

        # the derived rows depend only on which (account, product) pairs occur, and every pair occurs
        # once each template has been walked, so a minimal sample tells how many there will be
        fixed = len(_extra_rows(sample(2 * templates), _sized_commitments(payer, []), delivery, invoice_id, seed))
        if rows < 2 * templates + fixed:
            raise ValueError(f"rows must be at least {2 * templates + fixed} to hold every line item type")
        totals = sample(rows - fixed)
        extra = _extra_rows(totals, _sized_commitments(payer, totals), delivery, invoice_id, seed)
        assert len(extra) == fixed
        _insert_extra(con, extra)
        path.mkdir(parents=True, exist_ok=True)
        name = {"cur2-parquet": "helios-bench-00001.snappy.parquet", "cur1-parquet": "helios-bench-1.snappy.parquet"}
        target = path / name.get(fmt, "helios-bench-1.csv.gz")
        _copy(con, fmt, "(SELECT * FROM li UNION ALL SELECT * FROM extra)", target, peer=True)
        return [target]
    finally:
        con.close()
