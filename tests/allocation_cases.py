"""Builders for allocation tests: published FOCUS charges, jobs and hourly GPU activity, written straight
into a warehouse so each test states only what matters to it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import duckdb

from gpuledger.allocate import AllocationResult, allocate_month
from models.allocation import AllocationConfig

DELIVERY = "test:delivery"
MONTH_START = datetime(2026, 11, 1, tzinfo=UTC)


def at(day: int, hour: int = 0, minute: int = 0, month: int = 11) -> datetime:
    """A UTC time in November 2026 (or another month of 2026)."""
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


@dataclass
class Charge:
    """One FOCUS charge; defaults describe one hour of a p5.48xlarge (8 H100) on demand."""

    line_item: str
    resource_id: str | None = "i-0gpu"
    start: datetime = field(default_factory=lambda: at(2))
    hours: int = 1
    billed: Decimal = Decimal("55.04")
    effective: Decimal | None = None
    instance_type: str | None = "p5.48xlarge"
    usage_type: str | None = "BoxUsage:p5.48xlarge"
    category: str = "Usage"
    service_category: str = "Compute"
    consumed_hours: Decimal | None = None
    """ConsumedQuantity in Hours; None means the charge period's length."""
    consumed_unit: str | None = "Hours"
    tags: dict[str, str] | None = None
    sub_account: str = "000123456789"
    currency: str = "USD"
    commitment_status: str | None = None
    billing_period_start: datetime = MONTH_START


def insert_charges(con: duckdb.DuckDBPyConnection, charges: Sequence[Charge]) -> None:
    """Publish ``charges`` as one delivery's FOCUS rows (a slice per billing account and period)."""
    rows = []
    for c in charges:
        period_end = (c.billing_period_start + timedelta(days=32)).replace(day=1)
        quantity = c.consumed_hours if c.consumed_hours is not None else Decimal(c.hours)
        rows.append(
            {
                "BilledCost": c.billed,
                "EffectiveCost": c.billed if c.effective is None else c.effective,
                "ListCost": c.billed,
                "ContractedCost": c.billed,
                "BillingAccountId": "012345678901",
                "SubAccountId": c.sub_account,
                "BillingCurrency": c.currency,
                "BillingPeriodStart": c.billing_period_start,
                "BillingPeriodEnd": period_end,
                "ChargeCategory": c.category,
                "ChargeFrequency": "Usage-Based",
                "ChargePeriodStart": c.start,
                "ChargePeriodEnd": c.start + timedelta(hours=c.hours),
                "InvoiceIssuerName": "AWS",
                "ProviderName": "AWS",
                "PublisherName": "AWS",
                "ServiceCategory": c.service_category,
                "ServiceName": "Amazon Elastic Compute Cloud",
                "ServiceSubcategory": "Virtual Machines",
                "ResourceId": c.resource_id,
                "ConsumedQuantity": quantity if c.consumed_unit else None,
                "ConsumedUnit": c.consumed_unit,
                "CommitmentDiscountStatus": c.commitment_status,
                "Tags": json.dumps(c.tags) if c.tags is not None else None,
                "x_SourceFormat": "aws-cur2",
                "x_DeliveryId": DELIVERY,
                "x_SourceFile": "test.parquet",
                "x_SourceLineItemId": c.line_item,
                "x_IngestedAt": MONTH_START,
                "x_InstanceType": c.instance_type,
                "x_UsageType": c.usage_type,
            }
        )
    columns = list(rows[0])
    placeholders = ", ".join(f"${i + 1}" for i in range(len(columns)))
    for row in rows:
        con.execute(
            f"INSERT INTO focus.cost_rows ({', '.join(columns)}) VALUES ({placeholders})", [row[c] for c in columns]
        )
    con.execute(
        "INSERT INTO meta.slices BY NAME"
        " SELECT DISTINCT ProviderName AS provider_name, BillingAccountId AS billing_account_id,"
        " BillingPeriodStart AS billing_period_start, x_DeliveryId AS delivery_id, now() AS replaced_at"
        " FROM focus.cost_rows WHERE x_DeliveryId = $id"
        " AND (ProviderName, BillingAccountId, BillingPeriodStart) NOT IN"
        " (SELECT (provider_name, billing_account_id, billing_period_start) FROM meta.slices)",
        {"id": DELIVERY},
    )


@dataclass
class Job:
    job_id: str
    start: datetime
    end: datetime | None
    nodes: tuple[str, ...] = ("gpu-01",)
    gpu_count: int = 8
    account: str = "llm"
    state: str = "COMPLETED"
    run_group: str | None = None
    checkpoint_uri: str | None = None
    cluster: str = "c1"


def insert_jobs(con: duckdb.DuckDBPyConnection, jobs: Sequence[Job]) -> None:
    for j in jobs:
        con.execute(
            "INSERT INTO gpu.jobs (job_id, cluster, name, account, nodes, gpu_count, start_time, end_time, state,"
            " run_group, checkpoint_uri, source) VALUES ($1, $2, $1, $3, $4, $5, $6, $7, $8, $9, $10, 'test')",
            [
                j.job_id,
                j.cluster,
                j.account,
                list(j.nodes),
                j.gpu_count,
                j.start,
                j.end,
                j.state,
                j.run_group or j.job_id,
                j.checkpoint_uri,
            ],
        )


def insert_activity(
    con: duckdb.DuckDBPyConnection,
    node: str,
    hour: datetime,
    *,
    active_seconds: float,
    sampled_seconds: float = 3600.0,
    job_id: str | None = None,
    gpus: int = 8,
    instance_id: str | None = None,
    cluster: str = "c1",
    utilization: float = 0.5,
) -> None:
    """Per-GPU activity rows: each of ``gpus`` GPUs active ``active_seconds`` of the hour."""
    for gpu in range(gpus):
        con.execute(
            "INSERT INTO gpu.activity VALUES ($1, $2, $3, $4, $5, $6, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', $7, $8, $9,"
            " 60, 'test')",
            [cluster, node, str(gpu), hour, job_id, instance_id, sampled_seconds, active_seconds, utilization],
        )


def node_config(**kwargs: object) -> AllocationConfig:
    """Allocation config mapping node gpu-01 (cluster c1) to instance i-0gpu, plus ``kwargs``."""
    from models.allocation import NodeMapping

    nodes = kwargs.pop("nodes", (NodeMapping("c1", "gpu-01", "i-0gpu"),))
    return AllocationConfig(nodes=nodes, **kwargs)  # type: ignore[arg-type]


def split(con: duckdb.DuckDBPyConnection, config: AllocationConfig, month: str = "2026-11") -> AllocationResult:
    return allocate_month(con, config, month)


def pieces(con: duckdb.DuckDBPyConnection, line_item: str) -> list[tuple[object, ...]]:
    """(category, idle_kind, team, job_id, EffectiveCost, gpu_hours) of one charge's split, ordered."""
    return con.execute(
        "SELECT category, idle_kind, team, job_id, EffectiveCost, round(gpu_hours, 6) FROM allocation.cost_split"
        " WHERE x_SourceLineItemId = $id ORDER BY ALL",
        {"id": line_item},
    ).fetchall()


def hourly_charges(prefix: str, start: datetime, hours: int, **kwargs: object) -> list[Charge]:
    """``hours`` consecutive one-hour charges from ``start``, line items ``<prefix>-00``, ``<prefix>-01``, ..."""
    return [
        Charge(f"{prefix}-{i:02d}", start=start + timedelta(hours=i), **kwargs)  # type: ignore[arg-type]
        for i in range(hours)
    ]


def insert_checkpoint_bytes(
    con: duckdb.DuckDBPyConnection, as_of: datetime, objects: dict[str, int], *, source: str = "test"
) -> None:
    """One storage inventory snapshot: ``uri -> bytes`` as of ``as_of``."""
    for uri, size in objects.items():
        con.execute("INSERT INTO gpu.checkpoint_bytes VALUES ($1, $2, $3, $4)", [source, as_of, uri, size])


def insert_egress_bytes(
    con: duckdb.DuckDBPyConnection, node: str, hour: datetime, job_id: str, size: int, *, cluster: str = "c1"
) -> None:
    con.execute("INSERT INTO gpu.egress_bytes VALUES ('test', $1, $2, $3, $4, $5)", [cluster, node, hour, job_id, size])


SNAPSHOT_TABLES = (
    "allocation.cost_split",
    "gpu.usage",
    "showback.job_costs",
    "showback.team_month",
    "showback.idle_by_hour_of_week",
    "alloc.settings",
    "alloc.job_account_teams",
)


def split_snapshot(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[object, ...]]]:
    """Every row the split writes (and the configuration it read), in a stable order, for before/after checks."""
    return {table: con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall() for table in SNAPSHOT_TABLES}
