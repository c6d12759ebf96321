"""What the analyst file adds to the warehouse's tables: rounded views that foot, the stored billing month, the GPU
catalog and job GPU models from it, and the views per completed run and per idle instance."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger.publish.snapshot import ANALYST_FILE
from gpuledger.warehouse.sqlfiles import load_sql
from models.billing_month import BillingMonth
from models.gpu_catalog import GPU_INSTANCE_TYPES, GPU_MODELS

pytestmark = pytest.mark.both_warehouses

CENT = Decimal("0.01")


def cents(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


@pytest.fixture(scope="module")
def analyst(demo_home: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with closing(duckdb.connect(str(demo_home / ANALYST_FILE), read_only=True)) as con:
        yield con


@pytest.fixture
def macros() -> Iterator[duckdb.DuckDBPyConnection]:
    with closing(duckdb.connect()) as con:
        con.execute(load_sql("publish/macros.sql"))
        yield con


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    result = con.execute(sql)
    names = [d[0] for d in result.description]
    return [dict(zip(names, row, strict=True)) for row in result.fetchall()]


def foot(con: duckdb.DuckDBPyConnection, parts: list[Decimal]) -> list[Decimal]:
    # as text: a list of Decimals of mixed scales would be bound as DOUBLE
    sql = "SELECT cents_that_foot($parts::VARCHAR[]::DECIMAL(38, 10)[])"
    return con.execute(sql, {"parts": [str(part) for part in parts]}).fetchone()[0]


def test_parts_in_cents_add_up_to_the_total_in_cents(macros):
    # rounded on their own, three times 1.005 shows 3.03 against a total of 3.02: the largest remainders get the cent
    assert foot(macros, [Decimal("1.005")] * 3) == [Decimal("1.01"), Decimal("1.01"), Decimal("1.00")]
    assert foot(macros, [Decimal("0.004"), Decimal("0.004"), Decimal("-0.002")]) == [CENT, 0, 0]
    assert foot(macros, [Decimal("-1.006"), Decimal("-1.006")]) == [Decimal("-1.00"), Decimal("-1.01")]  # tie: first
    generator = random.Random(17)
    for _ in range(200):
        parts = [Decimal(generator.randint(-(10**9), 10**9)).scaleb(-generator.randint(0, 10)) for _ in range(6)]
        parts += [Decimal("0.125"), Decimal("-7.305")]  # half a cent lost by each: ties for the lost cents
        shown = foot(macros, parts)
        assert sum(shown) == cents(sum(parts))
        assert all(abs(s - p) < CENT for s, p in zip(shown, parts, strict=True))


def test_money_rounds_to_cents_and_gpu_hours_to_tenths(macros):
    amount, hours = macros.execute(
        "SELECT cents(-2.345::DECIMAL(38, 10)), tenths(3542.4933333333993::DOUBLE)"
    ).fetchone()
    assert (amount, hours) == (Decimal("-2.35"), Decimal("3542.5"))


def test_views_show_no_exact_money_nor_float_noise(analyst):
    """Tables keep DECIMAL(38,10) and DOUBLE; a view column of those types is only a percentage."""
    unrounded = analyst.execute(
        "SELECT table_name || '.' || column_name FROM duckdb_columns() WHERE database_name = current_database()"
        " AND schema_name = 'views' AND (data_type IN ('DOUBLE', 'FLOAT') OR data_type LIKE 'DECIMAL(%,10)')"
    ).fetchall()
    assert unrounded and all(name.endswith("_percent") for (name,) in unrounded)
    shown = analyst.execute(
        "SELECT DISTINCT data_type FROM duckdb_columns() WHERE database_name = current_database()"
        " AND schema_name = 'views' AND (column_name LIKE '%_cost' OR column_name LIKE '%gpu_hours' OR column_name"
        " LIKE '%_total' OR column_name IN ('cost', 'adjustment', 'cost_to_finish', 'cost_per_completed_run'))"
    ).fetchall()
    assert sorted(t for (t,) in shown) == ["DECIMAL(18,1)", "DECIMAL(18,2)"]


def test_the_billing_month_is_stored_by_the_one_rule(analyst):
    months = analyst.execute(
        "SELECT DISTINCT ProviderName, BillingPeriodStart, x_BillingMonth FROM focus.costs ORDER BY ALL"
    ).fetchall()
    assert {BillingMonth.of_period_start(start).first_day == month for _, start, month in months} == {True}
    # GCP periods start at local midnight US/Pacific: 07:00 or 08:00 UTC, in the month all the same
    gcp = {(start.astimezone(UTC).hour, month.day) for provider, start, month in months if provider == "Google Cloud"}
    assert gcp and {hour for hour, _ in gcp} <= {7, 8} and {day for _, day in gcp} == {1}
    split = analyst.execute(
        "SELECT count(*), count(*) FILTER (WHERE billing_month = billing_month(BillingPeriodStart))"
        " FROM allocation.cost_split"
    ).fetchone()
    assert split[0] > 0 and split[0] == split[1]


def test_the_gpu_catalog_is_in_the_file(analyst):
    models = analyst.execute("SELECT * FROM ref.gpu_models ORDER BY gpu_model").fetchall()
    assert models == [
        (
            m.name,
            m.vendor,
            m.architecture,
            Decimal(str(m.memory_gib)),
            Decimal(str(m.memory_bandwidth_tbps)),
            Decimal(str(m.dense_tflops)),
            m.fp8,
            m.fp4,
            m.interconnect,
        )
        for m in sorted(GPU_MODELS.values(), key=lambda m: m.name)
    ]
    instances = analyst.execute("SELECT * FROM ref.gpu_instances ORDER BY provider, instance_type").fetchall()
    assert instances == [
        (t.provider, t.instance_type, t.gpu_model, t.gpu_count, t.vcpus, Decimal(str(t.memory_gib)))
        for t in sorted(GPU_INSTANCE_TYPES.values(), key=lambda t: (t.provider, t.instance_type))
    ]


def test_jobs_without_a_scheduler_gpu_model_take_the_catalog_s(analyst):
    jobs = rows(
        analyst,
        "SELECT c.cluster, c.job_id, c.gpu_model, j.gpu_model AS scheduler_model, sum(c.total_cost) AS cost"
        " FROM showback.job_costs AS c JOIN gpu.jobs AS j USING (cluster, job_id) GROUP BY ALL",
    )
    assert all(job["gpu_model"] == job["scheduler_model"] for job in jobs if job["scheduler_model"])
    # the demo's Slurm jobs on p5 (H100) and p5e (H200) nodes, the most expensive run among them
    mixed = [job for job in jobs if job["scheduler_model"] is None]
    assert mixed and {job["gpu_model"] for job in mixed} == {"H100+H200"}
    assert all(job["gpu_model"] is not None for job in jobs)


def test_completed_runs_foot_and_match_the_job_costs(analyst):
    runs = rows(analyst, "SELECT * FROM views.completed_runs")
    parts = (
        "run",
        "idle",
        "failed_attempts",
        "preempted_attempts",
        "cancelled_attempts",
        "checkpoint_storage",
        "egress",
    )
    exact = {
        (r["cluster"], r["team"], r["run_group"], r["currency"]): r
        for r in rows(
            analyst,
            "SELECT DISTINCT cluster, team, run_group, currency, run_group_cost_to_finish, run_group_attempts,"
            " run_group_completed_at FROM showback.job_costs WHERE run_group_completed",
        )
    }
    assert len(runs) == len(exact)
    for run in runs:
        job = exact[(run["cluster"], run["team"], run["run_group"], run["currency"])]
        assert run["cost_to_finish"] == sum(run[f"{part}_cost"] for part in parts)
        assert run["cost_to_finish"] == cents(job["run_group_cost_to_finish"])
        assert (run["attempts"], run["completed_at"]) == (job["run_group_attempts"], job["run_group_completed_at"])
        assert run["completed_month"] == datetime(run["completed_at"].year, run["completed_at"].month, 1).date()
    # per month, team and currency, the runs team_month counts (it has rows only where the team has costs that month)
    counted = dict(
        analyst.execute(
            "SELECT billing_month || team || currency, completed_runs FROM showback.team_month WHERE completed_runs > 0"
        ).fetchall()
    )
    listed: dict[str, int] = {}
    for run in runs:
        key = f"{run['completed_month']}{run['team']}{run['currency']}"
        listed[key] = listed.get(key, 0) + 1
    assert counted and {key: listed[key] for key in counted} == counted
    # a run the demo had to retry: its failed attempts are a part of its cost to finish, with lost work estimated
    retried = [run for run in runs if run["failed_attempts_cost"] > 0]
    assert retried and all(run["estimated_lost_work_cost"] is not None for run in retried)
    assert any(run["retained_checkpoint_cost"] > 0 for run in runs)


def test_idle_by_instance_foots_and_adds_up_to_the_team_months(analyst):
    instances = rows(analyst, "SELECT * FROM views.idle_by_instance")
    kinds = ("allocated", "underutilized", "unallocated", "unused_commitment")
    for instance in instances:
        assert instance["idle_cost"] == sum(instance[f"idle_{kind}_cost"] for kind in kinds)
    exact = dict(
        analyst.execute(
            "SELECT billing_month || currency, sum(idle_cost) FROM showback.team_month GROUP BY ALL"
        ).fetchall()
    )
    shown: dict[str, Decimal] = {}
    for instance in instances:
        key = f"{instance['billing_month']}{instance['currency']}"
        shown[key] = shown.get(key, Decimal(0)) + instance["idle_cost"]
    assert shown.keys() == exact.keys()
    for key, total in shown.items():
        assert abs(total - exact[key]) < CENT * len(instances) / 2
    # idle no job held is reachable per instance, with the team paying for it and the GPU model of its type
    unallocated = [i for i in instances if i["idle_unallocated_cost"] > 0]
    assert unallocated and all(i["owner_team"] for i in unallocated)
    assert {i["gpu_model"] for i in instances} >= {"H100", "H200", "A100-80GB"}
