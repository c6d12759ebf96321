"""Hand-checked advice on interactive sessions (idle by hour of week, auto-stop replay) and owned vs rented GPUs.

Unless a test says otherwise a GPU charge is one hour of a p5.48xlarge (8 H100) at 55.04, i.e. 6.88 per
GPU-hour; node gpu-01 (cluster c1) runs on instance i-0gpu. November 2026 starts on a Sunday: the 6th is a
Friday, the 9th a Monday.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import duckdb

from gpuledger.advice.advise import advise
from models.advice import AdviceConfig, OwnedHardware
from models.allocation import AllocationConfig
from tests.fixtures.allocation_cases import (
    Charge,
    Job,
    at,
    hourly_charges,
    insert_charges,
    insert_jobs,
    node_config,
    split,
)

D = Decimal


def insert_session_hours(
    con: duckdb.DuckDBPyConnection, job_id: str, start: datetime, active: list[float], *, gpus: int = 8
) -> None:
    """Job-labelled activity of ``gpus`` GPUs on gpu-01 for consecutive hours from ``start``: hour i active
    ``active[i]`` seconds of each GPU (fully busy while active), sampled the whole hour."""
    # one statement: a row per GPU and hour from two lists (an INSERT per row takes seconds)
    con.execute(
        "INSERT INTO gpu.activity (cluster, node, gpu, hour, job_id, metric, sampled_seconds, active_seconds,"
        " busy_seconds, active_busy_seconds, mean_utilization, samples, source)"
        " SELECT 'c1', 'gpu-01', CAST(g AS VARCHAR), $start + to_hours(CAST(i - 1 AS BIGINT)), $job,"
        " 'DCGM_FI_PROF_GR_ENGINE_ACTIVE', 3600, $active[i], $active[i], $active[i], $active[i] / 3600, 60, 'test'"
        " FROM range($gpus) AS r (g), range(1, len($active) + 1) AS s (i)",
        {"start": start, "job": job_id, "active": active, "gpus": gpus},
    )


def weekend_notebook(con: duckdb.DuckDBPyConnection) -> None:
    """Notebook nb1 (tkim, team research, partition interactive) holds all 8 GPUs of gpu-01 from Friday 17:00 to
    Monday 10:00 (65 hours, 65 hourly charges): busy Friday 17-18 and Monday 9-10, idle from Friday 18:00 to
    Monday 09:00 (6 + 24 + 24 + 9 = 63 hours)."""
    insert_charges(con, hourly_charges("h", at(6, 17), 65))
    insert_jobs(con, [Job("nb1", at(6, 17), at(9, 10), account="research", user="tkim", partition="interactive")])
    insert_session_hours(con, "nb1", at(6, 17), [3600.0] + [0.0] * 63 + [3600.0])
    split(con, node_config())


def autostop_row(con: duckdb.DuckDBPyConnection, job_id: str) -> tuple[object, ...]:
    row = con.execute(
        'SELECT team, "user", gpu_model, gpus, held_gpu_hours, idle_gpu_hours, idle_stretches,'
        " longest_stretch_hours, saved_gpu_hours, gpu_cost, gpu_cost_per_gpu_hour, estimated_saving, opportunity,"
        " run_groups FROM advice.autostop_replay WHERE job_id = $id",
        {"id": job_id},
    ).fetchall()
    assert len(row) == 1
    return row[0]


def test_weekend_notebook_auto_stopped_after_30_idle_minutes_saves_62_5_hours_of_its_gpus(con):
    # Split: every hour is one 55.04 charge wholly the notebook's (run in the 2 busy hours, idle allocated in the
    # 63 idle ones): GPU cost 65 x 55.04 = 3577.60 for 65 x 8 = 520 GPU-h, i.e. 6.88 per held GPU-hour.
    # Replay, N = 30: one idle stretch of 63 h = 3780 min; stopped after 30 min, so (3780 - 30) / 60 = 62.5 h of
    # 8 GPUs = 500 GPU-h saved, at 6.88 = 3440.00. Fully idle GPU-h: 63 x 8 = 504.
    weekend_notebook(con)
    advise(con, AdviceConfig())
    assert autostop_row(con, "nb1") == (
        "research", "tkim", "H100", 8, 520.0, 504.0, 1, 63.0, 500.0,
        D("3577.6000000000"), D("6.8800000000"), D("3440.0000000000"), "notebook auto-stop", ["nb1"],
    )  # fmt: skip
    row = con.execute(
        "SELECT month, currency, method, evidence FROM advice.autostop_replay WHERE job_id = 'nb1'"
    ).fetchone()
    assert row is not None
    month, currency, method, evidence = row
    assert (str(month), currency) == ("2026-11-01", "USD")
    assert "after 30 idle minutes" in method
    assert "longest 63.0 h" in evidence and "saves 500.0 GPU-h" in evidence
    # N = 90: (3780 - 90) / 60 = 61.5 h x 8 = 492 GPU-h, at 6.88 = 3384.96
    advise(con, AdviceConfig(autostop_idle_minutes=90))
    replayed = con.execute("SELECT saved_gpu_hours, estimated_saving FROM advice.autostop_replay").fetchall()
    assert replayed == [(492.0, D("3384.9600000000"))]
    # the contract's opportunity row reaches advice.opportunities
    ranked = con.execute(
        "SELECT team, estimated_saving FROM advice.opportunities WHERE opportunity = 'notebook auto-stop'"
    ).fetchall()
    assert ranked == [("research", D("3384.9600000000"))]


def test_weekend_notebook_idle_shows_per_user_and_hour_of_week(con):
    # 65 distinct hours of the week (Friday 17:00 .. Monday 09:00), 8 GPU-h held in each. Idle: every hour but
    # Friday 17 and Monday 9, 8 GPU-h and 55.04 each; 63 x 55.04 = 3467.52 idle in all.
    weekend_notebook(con)
    advise(con, AdviceConfig())
    rows = con.execute(
        "SELECT iso_weekday, hour_of_day, sessions, held_gpu_hours, idle_gpu_hours, idle_allocated_gpu_hours,"
        " idle_share, gpu_cost, idle_cost, session_job_ids FROM advice.session_idle_by_hour"
        " WHERE team = 'research' AND \"user\" = 'tkim' AND currency = 'USD' AND month = DATE '2026-11-01'"
        " ORDER BY iso_weekday, hour_of_day"
    ).fetchall()
    assert len(rows) == 65
    by_hour = {(r[0], r[1]): r[2:] for r in rows}
    busy = (1, 8.0, 0.0, 0.0, 0.0, D("55.0400000000"), D("0E-10"), ["nb1"])
    idle = (1, 8.0, 8.0, 8.0, 1.0, D("55.0400000000"), D("55.0400000000"), ["nb1"])
    assert by_hour[(5, 17)] == busy  # Friday 17:00, working
    assert by_hour[(5, 18)] == idle  # Friday 18:00, gone home
    assert by_hour[(6, 3)] == idle  # Saturday 03:00
    assert by_hour[(1, 8)] == idle  # Monday 08:00
    assert by_hour[(1, 9)] == busy  # Monday 09:00, back
    total = con.execute("SELECT sum(idle_cost), sum(idle_gpu_hours) FROM advice.session_idle_by_hour").fetchone()
    assert total == (D("3467.5200000000"), 504.0)


def test_short_and_partly_held_stretches_save_only_past_n_and_partly_active_hours_are_not_idle(con):
    # Notebook nb2 holds 8 GPUs Monday 2 Nov 10:00-14:45: hour 10 busy, 11 idle, 12 active 600 s of 3600 (partly
    # idle: not counted), 13 busy, 14 idle and held 45 min. Charges: five hours at 55.04; in hour 14 it holds
    # 3/4 of the capacity: 41.28 (the rest is unallocated idle of the owner). GPU cost 4 x 55.04 + 41.28 =
    # 261.44 for 32 + 6 = 38 GPU-h: 6.88 per GPU-h.
    # Replay, N = 30: stretch 1 = hour 11 (60 min) saves 30 min; stretch 2 = hour 14 (45 min) saves 15 min:
    # (0.5 + 0.25) x 8 = 6 GPU-h, at 6.88 = 41.28. Counting hour 12's idle 50 min would have made stretch 1
    # 110 min (saving 80 min) instead. Fully idle GPU-h 8 + 6 = 14; longest stretch 1 h.
    insert_charges(con, hourly_charges("h", at(2, 10), 5))
    insert_jobs(con, [Job("nb2", at(2, 10), at(2, 14, 45), account="research", user="alice", partition="interactive")])
    insert_session_hours(con, "nb2", at(2, 10), [3600.0, 0.0, 600.0, 3600.0, 0.0])
    split(con, node_config())
    advise(con, AdviceConfig())
    assert autostop_row(con, "nb2") == (
        "research", "alice", "H100", 8, 38.0, 14.0, 2, 1.0, 6.0,
        D("261.4400000000"), D("6.8800000000"), D("41.2800000000"), "notebook auto-stop", ["nb2"],
    )  # fmt: skip


def test_a_run_is_no_session_and_gets_no_auto_stop_advice(con):
    # The same idle pattern in a batch partition: not a session, so neither table has it.
    insert_charges(con, hourly_charges("h", at(2, 10), 3))
    insert_jobs(con, [Job("b1", at(2, 10), at(2, 13), account="research", partition="batch")])
    insert_session_hours(con, "b1", at(2, 10), [3600.0, 0.0, 0.0])
    split(con, node_config())
    advise(con, AdviceConfig())
    assert con.execute("SELECT count(*) FROM advice.autostop_replay").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM advice.session_idle_by_hour").fetchone() == (0,)


OWNED = (
    # 26280 / (3 x 8760) = 1.00 per GPU-h; 1000 W x PUE 1.5 = 1.5 kWh x 0.20 = 0.30; 144 / 720 h = 0.20: 1.50
    OwnedHardware("H100", D("26280"), 3, 1000, D("0.20"), 1.5, D("144")),
    # 8760 / (1 x 8760) = 1.00; 500 W x 1.0 = 0.5 kWh x 0.10 = 0.05; 72 / 720 = 0.10: 1.15 per GPU-h
    OwnedHardware("L40S", D("8760"), 1, 500, D("0.10"), 1.0, D("72")),
)


def fleet(con: duckdb.DuckDBPyConnection) -> None:
    """November: 15 daily charges of one p5.48xlarge (8 H100, 24 h at 55.04 = 1320.96 each), one hour of a
    g6e.xlarge (1 L40S, 1.86) and one hour of a p4d.24xlarge (8 A100-40GB, 32.77); no telemetry (all idle)."""
    daily = [Charge(f"d{i:02d}", start=at(1 + i), hours=24, billed=D("1320.96")) for i in range(15)]
    l40s = Charge("l", resource_id="i-0l40s", start=at(3, 5), billed=D("1.86"), instance_type="g6e.xlarge",
                  usage_type="BoxUsage:g6e.xlarge")  # fmt: skip
    a100 = Charge("a", resource_id="i-0a100", start=at(3, 5), billed=D("32.77"), instance_type="p4d.24xlarge",
                  usage_type="BoxUsage:p4d.24xlarge")  # fmt: skip
    insert_charges(con, [*daily, l40s, a100])
    split(con, AllocationConfig())


def test_owned_vs_rented_break_even_is_owned_over_rented_cost_per_gpu_hour(con):
    # H100: rented 15 x 192 = 2880 GPU-h for 15 x 1320.96 = 19814.40 (6.88 per GPU-h); peak 8 GPUs in an hour
    # (a daily charge's 192 GPU-h spread over 24 h); utilization 2880 / (8 x 720) = 50 %. Owned 1.50 per GPU-h:
    # break-even 1.50 / 6.88 = 0.21802325...; owned month 8 x 720 = 5760 GPU-h: depreciation 5760, power
    # 5760 x 1.5 kWh x 0.20 = 1728, colocation 8 x 144 = 1152 = 8640; saving 19814.40 - 8640 = 11174.40.
    # L40S: 1 GPU-h for 1.86, capacity 1, utilization 1/720; owned 1.15 per GPU-h, break-even 1.15 / 1.86;
    # owned month 720 h: depreciation 720, power 720 x 0.5 x 0.10 = 36, colocation 72 = 828: saving -826.14.
    # A100-40GB: no owned cost configured: NULL saving.
    fleet(con)
    advise(con, AdviceConfig(owned=OWNED, owned_are_example=False))
    rows = con.execute(
        "SELECT gpu_model, team, rented_gpu_hours, rented_cost, rented_cost_per_gpu_hour, capacity, hours_in_month,"
        " utilization, owned_cost_per_gpu_hour, break_even_utilization, depreciation_cost, power_cost,"
        " colocation_cost, owned_monthly_cost, estimated_saving, verdict, opportunity"
        " FROM advice.owned_vs_rented WHERE month = DATE '2026-11-01' AND currency = 'USD' ORDER BY gpu_model"
    ).fetchall()
    assert [r[0] for r in rows] == ["A100-40GB", "H100", "L40S"]
    a100, h100, l40s = rows
    assert h100[1:8] == (None, 2880.0, D("19814.4000000000"), D("6.8800000000"), 8, 720.0, 0.5)
    assert h100[8] == D("1.5000000000")
    assert abs(h100[9] - 1.5 / 6.88) < 1e-12
    assert h100[10:] == (
        D("5760.0000000000"), D("1728.0000000000"), D("1152.0000000000"), D("8640.0000000000"),
        D("11174.4000000000"), "owning pays: utilization 50% > break-even 22%", "owned GPUs",
    )  # fmt: skip
    assert l40s[2:9] == (1.0, D("1.8600000000"), D("1.8600000000"), 1, 720.0, 1 / 720, D("1.1500000000"))
    assert abs(l40s[9] - 1.15 / 1.86) < 1e-12
    assert l40s[10:16] == (
        D("720.0000000000"), D("36.0000000000"), D("72.0000000000"), D("828.0000000000"), D("-826.1400000000"),
        "renting pays: utilization 0% <= break-even 62%",
    )  # fmt: skip
    assert a100[8] is None and a100[13:16] == (None, None, "no owned cost configured for A100-40GB in USD")
    methods = con.execute("SELECT DISTINCT method FROM advice.owned_vs_rented").fetchall()
    assert not any(m.startswith("EXAMPLE") for (m,) in methods)
    # the seeded example costs say so in the method
    advise(con, AdviceConfig())
    method = con.execute("SELECT method FROM advice.owned_vs_rented WHERE gpu_model = 'H100'").fetchone()
    assert method is not None and method[0].startswith("EXAMPLE owned-hardware costs")


def test_owned_focus_rows_are_focus_shaped_estimates_adding_up_to_the_owned_monthly_cost(con):
    # Three components per configured model and month (H100: 5760 + 1728 + 1152; L40S: 720 + 36 + 72), each
    # model's rows adding up exactly to owned_vs_rented.owned_monthly_cost; nothing reaches focus.costs.
    fleet(con)
    advise(con, AdviceConfig(owned=OWNED, owned_are_example=False))
    rows = con.execute(
        "SELECT SkuId, x_CostComponent, BilledCost, EffectiveCost, ListCost, ContractedCost, ConsumedQuantity"
        " FROM advice.owned_focus_rows ORDER BY SkuId, x_CostComponent"
    ).fetchall()
    assert [(r[0], r[1], r[2], r[6]) for r in rows] == [
        ("H100", "colocation", D("1152.0000000000"), D("5760.0000000000")),
        ("H100", "depreciation", D("5760.0000000000"), D("5760.0000000000")),
        ("H100", "power", D("1728.0000000000"), D("5760.0000000000")),
        ("L40S", "colocation", D("72.0000000000"), D("720.0000000000")),
        ("L40S", "depreciation", D("720.0000000000"), D("720.0000000000")),
        ("L40S", "power", D("36.0000000000"), D("720.0000000000")),
    ]
    assert all(r[2] == r[3] == r[4] == r[5] for r in rows)
    mismatched = con.execute(
        "SELECT o.gpu_model FROM advice.owned_vs_rented AS o"
        " LEFT JOIN (SELECT x_BillingMonth, BillingCurrency, SkuId, sum(EffectiveCost) AS cost"
        "   FROM advice.owned_focus_rows GROUP BY ALL) AS f"
        " ON f.x_BillingMonth = o.month AND f.BillingCurrency = o.currency AND f.SkuId = o.gpu_model"
        " WHERE f.cost IS DISTINCT FROM o.owned_monthly_cost"
    ).fetchall()
    assert mismatched == []
    # the model without owned costs has a NULL owned cost and no rows
    assert con.execute("SELECT count(*) FROM advice.owned_focus_rows WHERE SkuId = 'A100-40GB'").fetchone() == (0,)
    fixed = con.execute(
        "SELECT DISTINCT ProviderName, PublisherName, InvoiceIssuerName, ServiceName, ServiceCategory,"
        " ChargeCategory, ChargeClass, ChargeFrequency, PricingCategory, ConsumedUnit, ResourceType, x_Estimate,"
        " BillingPeriodStart, BillingPeriodEnd, ChargePeriodStart, ChargePeriodEnd"
        " FROM advice.owned_focus_rows"
    ).fetchall()
    start, end = at(1), at(1, month=12)
    owner = "Owned hardware (gpuledger estimate)"
    assert fixed == [
        (owner, owner, owner, "Owned GPUs", "AI and Machine Learning", "Usage", None, "Usage-Based", "Standard",
         "Hours", "GPU", True, start, end, start, end),
    ]  # fmt: skip
    # FOCUS names carry focus.costs' types
    types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'focus'"
                             " AND table_name = 'costs'").fetchall())  # fmt: skip
    ours = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'advice'"
        " AND table_name = 'owned_focus_rows'"
    ).fetchall()
    assert [(c, t) for c, t in ours if c in types and types[c] != t] == []
    assert {c for c, _ in ours} >= {"BilledCost", "ChargeDescription", "SkuId", "x_EstimateMethod"}
    description = con.execute(
        "SELECT ChargeDescription FROM advice.owned_focus_rows WHERE SkuId = 'H100' AND x_CostComponent = 'power'"
    ).fetchone()
    assert description is not None and "nominal 1000.0 W" in description[0] and description[0].startswith("ESTIMATE")
    assert con.execute("SELECT count(*) FROM focus.costs WHERE ProviderName = $p", {"p": owner}).fetchone() == (0,)
