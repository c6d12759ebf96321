"""Property-based tests of the split: random charges, jobs and telemetry must always reconcile exactly.

One in-memory warehouse serves every example (schema creation costs more than a split); each example empties
it first. The expected sums come from the generated charges, not from the warehouse.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Context, Decimal, localcontext

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuledger.warehouse.database import ensure_schema
from gpuledger.warehouse.sqlfiles import load_sql
from models.allocation import CATEGORIES, IDLE_KINDS, PRICING_MODES, AllocationConfig, NodeMapping
from tests.fixtures.allocation_cases import (
    MONTH_START,
    Charge,
    Job,
    at,
    insert_charges,
    insert_jobs,
    node_config,
    split,
    split_snapshot,
)

pytestmark = [pytest.mark.serial, pytest.mark.slow]

RESOURCES = ("i-0gpu", "i-1gpu", "i-2gpu")
NODES = ("gpu-01", "gpu-02", "gpu-03", "gpu-04")
# gpu-01/02 mapped by config; gpu-03 only through its samples' instance id (i-2gpu); gpu-04 unknown
MAPPED = (NodeMapping("c1", "gpu-01", "i-0gpu"), NodeMapping("c1", "gpu-02", "i-1gpu"))
GPU_TYPES = ("p5.48xlarge", "p4d.24xlarge", "p3.8xlarge", "p3.2xlarge")
TEAMS = ("llm", "vision", "infra", "")
ACCOUNTS = ("llm", "vision", "ops")
STATES = ("COMPLETED", "FAILED", "OUT_OF_MEMORY", "CANCELLED", "PREEMPTED", "RUNNING", "TIMEOUT")
CHECKPOINT_PREFIXES = ("s3://ckpt-bucket/llm/", "s3://ckpt-bucket/vision/", "s3://tagged-bucket/llm/")
DAY = at(2)
HOURS = 3
"""Things happen in the first HOURS hours of Nov 2 (so they meet), with some spill over their edges."""

UNIT = Decimal("0.0000000001")


# -- strategies ----------------------------------------------------------------------------------------------------

costs = st.one_of(
    st.decimals(min_value=-10_000, max_value=10_000, places=10, allow_nan=False, allow_infinity=False),
    st.decimals(min_value=-1, max_value=1, places=2, allow_nan=False, allow_infinity=False),
    st.sampled_from([Decimal(0), UNIT, -UNIT, Decimal("55.04"), Decimal("-55.04")]),
)
byte_counts = st.one_of(st.just(0), st.integers(min_value=1, max_value=99), st.integers(min_value=0, max_value=10**12))
"""Stored or sent bytes: empty objects and idle senders (0) included."""
tags = st.one_of(
    st.none(),
    st.fixed_dictionaries({"team": st.sampled_from(TEAMS)}),
    st.fixed_dictionaries({"owner": st.sampled_from(TEAMS)}),
    st.just({"purpose": "checkpoints"}),
)


@st.composite
def charges(draw: st.DrawFn, index: int) -> Charge:
    kind = draw(st.sampled_from(["gpu", "gpu", "gpu", "storage", "storage", "egress", "egress", "other"]))
    start_hour = draw(st.integers(min_value=0, max_value=HOURS - 1))
    hours = draw(st.sampled_from([1, 1, 1, 2, 24]))
    start = DAY if hours == 24 else DAY + timedelta(hours=start_hour)
    billed = draw(costs)
    effective = draw(st.one_of(st.none(), costs))
    common = {
        "line_item": f"c{index}",
        "start": start,
        "hours": hours,
        "billed": billed,
        "effective": effective,
        "tags": draw(tags),
        "sub_account": draw(st.sampled_from(["000123456789", "999999999999"])),
        "currency": draw(st.sampled_from(["USD", "USD", "EUR"])),
        "category": draw(st.sampled_from(["Usage", "Usage", "Usage", "Credit", "Adjustment", "Tax"])),
    }
    if kind == "gpu":
        return Charge(
            **common,
            resource_id=draw(st.sampled_from([*RESOURCES, *RESOURCES, None])),
            instance_type=draw(st.sampled_from(GPU_TYPES)),
            consumed_hours=draw(st.sampled_from([None, Decimal(0), Decimal("0.5"), Decimal(hours)])),
            commitment_status=draw(st.sampled_from([None, None, "Used", "Unused"])),
        )
    if kind == "storage":
        return Charge(
            **common,
            resource_id=draw(st.sampled_from(["ckpt-bucket", "ckpt-bucket", "tagged-bucket", "plain-bucket", None])),
            instance_type=None,
            usage_type="USE1-TimedStorage-ByteHrs",
            service_category="Storage",
            consumed_unit=None,
        )
    if kind == "egress":
        return Charge(
            **common,
            resource_id=draw(st.sampled_from([*RESOURCES, None])),
            instance_type=None,
            usage_type=draw(st.sampled_from(["USE1-DataTransfer-Out-Bytes", "USE1-USW2-AWS-Out-Bytes"])),
            service_category="Networking",
            consumed_unit="GB",
        )
    return Charge(
        **common,
        resource_id=None,
        instance_type=None,
        usage_type=draw(st.sampled_from(["Support", "USE1-Requests-Tier1"])),
        service_category="Other",
        consumed_unit=None,
    )


@st.composite
def jobs(draw: st.DrawFn, index: int) -> Job:
    minutes = st.one_of(st.sampled_from([0, 30, 60, 90]), st.integers(min_value=-90, max_value=HOURS * 60))
    start = DAY + timedelta(minutes=draw(minutes))
    durations = st.one_of(st.sampled_from([60, 120, 45]), st.integers(min_value=1, max_value=(HOURS + 2) * 60))
    duration = draw(st.one_of(st.none(), durations))
    return Job(
        job_id=f"j{index}",
        start=start,
        end=None if duration is None else start + timedelta(minutes=duration),
        nodes=tuple(draw(st.lists(st.sampled_from((*NODES, *NODES[:2])), min_size=1, max_size=4, unique=True))),
        gpu_count=draw(st.integers(min_value=1, max_value=16)),
        account=draw(st.sampled_from(ACCOUNTS)),
        state=draw(st.sampled_from(STATES)),
        run_group=draw(st.sampled_from([None, "rg-a", "rg-b"])),
        checkpoint_uri=draw(st.sampled_from([None, *CHECKPOINT_PREFIXES])),
    )


@dataclass(frozen=True)
class Activity:
    node: str
    hour: datetime
    job_id: str | None
    instance_id: str | None
    gpus: int
    sampled_seconds: float
    active_seconds: float
    busy_seconds: float
    utilization: float


@st.composite
def activities(draw: st.DrawFn, job_ids: Sequence[str]) -> Activity:
    sampled = draw(st.sampled_from([0.0, 60.0, 1800.0, 3600.0]))
    node = draw(st.sampled_from(NODES))
    return Activity(
        node=node,
        hour=DAY + timedelta(hours=draw(st.integers(min_value=-1, max_value=HOURS))),
        job_id=draw(st.sampled_from([None, None, "ghost", *job_ids])),
        instance_id=draw(st.sampled_from([None, "i-2gpu" if node == "gpu-03" else "i-9"])),
        gpus=draw(st.integers(min_value=1, max_value=8)),
        sampled_seconds=sampled,
        active_seconds=draw(st.floats(min_value=0, max_value=sampled)),
        busy_seconds=draw(st.floats(min_value=0, max_value=sampled)),
        utilization=draw(st.floats(min_value=0, max_value=1)),
    )


@dataclass(frozen=True)
class Month:
    charges: list[Charge]
    jobs: list[Job]
    activity: list[Activity]
    checkpoint_bytes: list[tuple[datetime, str, int]]
    egress_bytes: list[tuple[str, datetime, str, int]]
    config: AllocationConfig


@st.composite
def months(draw: st.DrawFn) -> Month:
    n_charges = draw(st.integers(min_value=1, max_value=8))
    month_charges = [draw(charges(i)) for i in range(n_charges)]
    month_jobs = [draw(jobs(i)) for i in range(draw(st.integers(min_value=1, max_value=5)))]
    job_ids = [j.job_id for j in month_jobs]
    activity = draw(st.lists(activities(job_ids), max_size=8))
    hours = st.integers(min_value=-1, max_value=HOURS).map(lambda h: DAY + timedelta(hours=h))
    checkpoint_bytes = draw(
        st.lists(
            st.tuples(
                hours,
                st.tuples(st.sampled_from(CHECKPOINT_PREFIXES), st.sampled_from(["", "a", "b/c.pt"])).map("".join),
                byte_counts,
            ),
            max_size=6,
        )
    )
    # bytes of the jobs' own nodes and hours mostly, some of unknown jobs, nodes or hours
    job_hours = [
        (node, j.start.replace(minute=0) + timedelta(hours=h), j.job_id)
        for j in month_jobs
        for node in j.nodes
        for h in range(2)
    ]
    sent_from = st.tuples(st.sampled_from(NODES), hours, st.sampled_from(["ghost", *job_ids]))
    if job_hours:
        sent_from = st.one_of(st.sampled_from(job_hours), sent_from)
    egress_bytes = draw(
        st.lists(
            st.tuples(sent_from, byte_counts).map(lambda t: (*t[0], t[1])),
            max_size=6,
        )
    )
    config = node_config(
        nodes=MAPPED,
        idle_policy=draw(st.sampled_from(["owner", "share"])),
        pricing=draw(st.sampled_from(PRICING_MODES)),
        team_tag_keys=draw(st.sampled_from([("team",), ("owner", "team")])),
        account_teams=draw(st.sampled_from([{}, {"000123456789": "platform"}])),
        job_account_teams=draw(st.sampled_from([{}, {"ops": "infra", "llm": "research"}])),
        checkpoint_resources=("ckpt-bucket",),
        checkpoint_tags={"purpose": "checkpoints"},
    )
    return Month(month_charges, month_jobs, activity, checkpoint_bytes, egress_bytes, config)


# -- warehouse -----------------------------------------------------------------------------------------------------

DATA_TABLES = (
    "focus.cost_rows",
    "meta.slice_owners",
    "gpu.jobs",
    "gpu.activity",
    "gpu.checkpoint_bytes",
    "gpu.egress_bytes",
    "gpu.usage",
    "allocation.cost_split",
)


@pytest.fixture(scope="module")
def warehouse() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect(":memory:")
    con.execute("SET TimeZone = 'UTC'")
    ensure_schema(con)
    yield con
    con.close()


def load(con: duckdb.DuckDBPyConnection, month: Month) -> None:
    """Empty the warehouse, then write ``month`` into it."""
    for table in DATA_TABLES:
        con.execute(f"DELETE FROM {table}")
    for table in ("job_costs", "team_month", "user_month", "idle_by_hour_of_week"):
        con.execute(f"DROP TABLE IF EXISTS showback.{table}")
    insert_charges(con, month.charges)
    insert_jobs(con, month.jobs)
    activity = [
        (
            *("c1", a.node, str(gpu), a.hour, a.job_id, a.instance_id, a.sampled_seconds, a.active_seconds),
            *(a.busy_seconds, min(a.busy_seconds, a.active_seconds), a.utilization),
        )
        for a in month.activity
        for gpu in range(a.gpus)
    ]
    if activity:
        con.executemany(
            "INSERT INTO gpu.activity (cluster, node, gpu, hour, job_id, instance_id, metric, sampled_seconds,"
            " active_seconds, busy_seconds, active_busy_seconds, mean_utilization, samples, source)"
            " VALUES ($1, $2, $3, $4, $5, $6, 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', $7, $8, $9, $10, $11, 60, 'test')",
            activity,
        )
    if month.checkpoint_bytes:
        con.executemany(
            "INSERT INTO gpu.checkpoint_bytes (source, as_of, uri, bytes) VALUES ('test', $1, $2, $3)",
            month.checkpoint_bytes,
        )
    if month.egress_bytes:
        con.executemany("INSERT INTO gpu.egress_bytes VALUES ('test', 'c1', $1, $2, $3, $4)", month.egress_bytes)


def sign(value: Decimal) -> int:
    return (value > 0) - (value < 0)


# -- properties ----------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(month=months())
def test_split_always_reconciles_and_reruns_identically(warehouse: duckdb.DuckDBPyConnection, month: Month):
    con = warehouse
    load(con, month)
    split(con, month.config)

    charges = {c.line_item: c for c in month.charges}
    effective = {c.line_item: c.billed if c.effective is None else c.effective for c in month.charges}
    rows = con.execute(
        "SELECT x_SourceLineItemId, category, idle_kind, team, job_id, BilledCost, EffectiveCost, gpu_hours,"
        " allocated_ratio, BillingPeriodStart FROM allocation.cost_split"
    ).fetchall()

    # every charge is split, and its pieces sum exactly to its BilledCost and EffectiveCost
    billed_sums: dict[str, Decimal] = defaultdict(Decimal)
    effective_sums: dict[str, Decimal] = defaultdict(Decimal)
    for line_item, category, idle_kind, team, job_id, billed, eff, gpu_hours, ratio, period in rows:
        billed_sums[line_item] += billed
        effective_sums[line_item] += eff
        charge = charges[line_item]
        # no piece has the sign opposite to its charge's; a zero charge gives zero pieces
        assert sign(billed) in (0, sign(charge.billed)), (line_item, category, billed, charge.billed)
        assert sign(eff) in (0, sign(effective[line_item])), (line_item, category, eff, effective[line_item])
        # categories and idle kinds are the documented ones
        assert category in CATEGORIES
        assert (idle_kind is not None) == (category == "idle")
        assert idle_kind is None or idle_kind in IDLE_KINDS
        assert category != "run" or job_id is not None
        assert team
        assert gpu_hours >= 0
        assert 0 <= ratio <= 1
        assert period == MONTH_START
    assert set(billed_sums) == set(charges)
    assert billed_sums == {c.line_item: c.billed for c in month.charges}
    assert effective_sums == effective

    # per currency, showback's team totals are the month's FOCUS totals
    expected: dict[str, list[Decimal]] = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for c in month.charges:
        expected[c.currency][0] += effective[c.line_item]
        expected[c.currency][1] += c.billed
    shown = con.execute(
        "SELECT currency, sum(total_cost), sum(billed_cost) FROM showback.team_month"
        " WHERE billing_month = DATE '2026-11-01' GROUP BY ALL"
    ).fetchall()
    assert {currency: [total, billed] for currency, total, billed in shown} == expected
    focus = con.execute(
        "SELECT BillingCurrency, sum(EffectiveCost), sum(BilledCost) FROM focus.costs GROUP BY ALL"
    ).fetchall()
    assert {currency: [total, billed] for currency, total, billed in focus} == expected

    # re-running gives identical rows
    before = split_snapshot(con)
    split(con, month.config)
    assert split_snapshot(con) == before


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cost=costs,
    weights=st.lists(st.integers(min_value=0, max_value=10**15), min_size=1, max_size=12).filter(any),
)
def test_split_amount_macro_is_exact_and_monotone(warehouse: duckdb.DuckDBPyConnection, cost, weights):
    # The rounding macro alone: pieces sum to the cost, each has its sign or is zero, and none is further than one
    # unit from its exact share.
    con = warehouse
    con.execute(load_sql("allocation/macros.sql"))
    total = sum(weights)
    cumulative = [sum(weights[: i + 1]) for i in range(len(weights))]
    pieces = [
        con.execute(
            "SELECT split_amount(CAST($cost AS DECIMAL(38, 10)), $cum, $weight, $total)",
            {"cost": cost, "cum": cum, "weight": weight, "total": total},
        ).fetchone()[0]
        for cum, weight in zip(cumulative, weights, strict=True)
    ]
    assert sum(pieces) == cost
    with localcontext(Context(prec=100)):
        for piece, weight in zip(pieces, weights, strict=True):
            assert sign(piece) in (0, sign(cost))
            assert abs(piece - cost * weight / total) <= UNIT
