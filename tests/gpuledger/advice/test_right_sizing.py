"""Hand-checked right-sizing estimates (advice.right_sizing) and their backtest (advice.right_sizing_backtest).

Each run is published as FOCUS charges and DCGM activity, split, then advised with a rate card given here:
H100 on demand at AWS 6.88 and Lambda 2.99, H200 at AWS 7.91, A100-80GB at AWS 3.43, L40S at AWS 1.86 (USD,
2026-11-01). Catalog levers used: H100 80 GiB, 3.35 TB/s, 989 TFLOPS (Hopper, FP8); H200 141 GiB, 4.8 TB/s;
A100-80GB 80 GiB, 2.039 TB/s, 312 TFLOPS; L40S 48 GiB, 0.864 TB/s, 362 TFLOPS; 8 GPUs per node at most.
Default settings: 10 % memory headroom (A100-80GB 72 GiB usable, L40S 43.2), memory-bound from DRAM 0.5,
FP8-class tensor activity 0.5.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal

import duckdb
import pytest

from gpuledger.advice.advise import advise
from models.advice import AdviceConfig, RateCardEntry
from models.allocation import NodeMapping
from tests.fixtures.allocation_cases import Charge, Job, at, insert_charges, insert_jobs, node_config, split

D = Decimal
AS_OF = date(2026, 11, 1)


def rate(provider: str, gpu_model: str, price: str, category: str = "on-demand") -> RateCardEntry:
    return RateCardEntry(provider, gpu_model, category, D(price), "USD", AS_OF, "test card")


RATES = (
    rate("AWS", "H100", "6.88"),
    rate("Lambda", "H100", "2.99"),
    rate("AWS", "H100", "3.10", "spot"),  # not on demand: never a right-sizing price
    rate("AWS", "H200", "7.91"),
    rate("AWS", "A100-80GB", "3.43"),
    rate("AWS", "L40S", "1.86"),
)
CONFIG = AdviceConfig(rates=RATES, rates_are_example=False)


def insert_dcgm(
    con: duckdb.DuckDBPyConnection,
    node: str,
    hour: datetime,
    job_id: str,
    *,
    gpus: Sequence[int] = range(8),
    active_seconds: float = 3600.0,
    sm: float = 0.8,
    tensor: float | None = 0.6,
    dram: float | None = 0.3,
    fb_used_mib: float = 30 * 1024,
    cluster: str = "c1",
) -> None:
    """One hour of DCGM samples per GPU labelled with the job: activity fields and the framebuffer in use."""
    for gpu in gpus:
        con.execute(
            "INSERT INTO gpu.activity (cluster, node, gpu, hour, job_id, metric, sampled_seconds, active_seconds,"
            " busy_seconds, active_busy_seconds, mean_utilization, sm_active, tensor_active, dram_active,"
            " fb_used_mib, samples, source)"
            " VALUES ($1, $2, $3, $4, $5, 'DCGM_FI_PROF_SM_ACTIVE', 3600, $6, $7, $7, $8, $8, $9, $10, $11, 60,"
            " 'test')",
            [cluster, node, str(gpu), hour, job_id, active_seconds, active_seconds * sm, sm, tensor, dram, fb_used_mib],
        )


def targets(con: duckdb.DuckDBPyConnection, run_group: str, columns: str) -> dict[str, tuple[object, ...]]:
    """``columns`` of a run's right-sizing rows, by target GPU model."""
    rows = con.execute(
        f"SELECT target_gpu_model, {columns} FROM advice.right_sizing WHERE run_group = $g ORDER BY 1",
        {"g": run_group},
    ).fetchall()
    return {row[0]: row[1:] for row in rows}


def test_30_gib_on_h100_fits_a100_80gb_and_l40s_at_their_estimated_costs(con):
    # One hour of a p5.48xlarge (8 H100) at 55.04, held by run "r30"; each GPU active 2700 of 3600 s, tensor 0.6,
    # DRAM 0.3 (compute-bound), framebuffer high-water 30 GiB. Held 8 GPU-hours, busy 8 x 2700 / 3600 = 6,
    # idle 2; cost to finish = GPU cost = 55.04.
    insert_charges(con, [Charge("h")])
    insert_jobs(con, [Job("r30", at(2), at(2, 1))])
    insert_dcgm(con, "gpu-01", at(2), "r30", active_seconds=2700)
    split(con, node_config())
    advise(con, CONFIG)
    rows = targets(
        con,
        "r30",
        "fit, gpus_needed, bound, provider, target_provider, estimated_gpu_hours, estimated_gpu_cost,"
        " estimated_cost_to_finish, estimated_saving, opportunity, best, fp8_unused",
    )
    # the spot price is not a target price; the run's own model is re-rated at its cheapest provider
    assert sorted(rows) == ["A100-80GB", "H100", "H200", "L40S"]
    # A100-80GB: 30 <= 72 GiB fits; compute-bound, speed 312 / 989: 6 x 989 / 312 + 2 = 21.0192307692 GPU-hours
    # x 3.43 = 72.0959615385; saving 55.04 - 72.0959615385 = -17.0559615385 (it would have cost more)
    fit, needed, bound, provider, target_provider, hours, gpu_cost, to_finish, saving, kind, best, fp8 = rows[
        "A100-80GB"
    ]
    assert (fit, needed, bound, provider, target_provider) == ("fits", 8, "compute-bound", "AWS", "AWS")
    assert hours == pytest.approx(6 * 989 / 312 + 2, rel=1e-12)
    assert (gpu_cost, to_finish, saving) == (D("72.0959615385"), D("72.0959615385"), D("-17.0559615385"))
    assert (kind, best, fp8) == ("right-size", False, False)
    # L40S: 30 <= 43.2 GiB fits; speed 362 / 989: 6 x 989 / 362 + 2 = 18.3922651934 GPU-hours x 1.86
    # = 34.2096132597; saving 55.04 - 34.2096132597 = 20.8303867403
    fit, needed, _, _, _, hours, gpu_cost, to_finish, saving, kind, best, _ = rows["L40S"]
    assert (fit, needed, kind, best) == ("fits", 8, "right-size", False)
    assert hours == pytest.approx(6 * 989 / 362 + 2, rel=1e-12)
    assert (gpu_cost, to_finish, saving) == (D("34.2096132597"), D("34.2096132597"), D("20.8303867403"))
    # H100 at Lambda: 8 GPU-hours x 2.99 = 23.92, saving 31.12: the largest, so the run's best alternative
    _, _, _, _, target_provider, hours, gpu_cost, _, saving, kind, best, _ = rows["H100"]
    assert (target_provider, hours, gpu_cost, saving, kind, best) == (
        "Lambda", 8.0, D("23.92"), D("31.12"), "cheaper provider", True
    )  # fmt: skip
    # H200: same TFLOPS, 8 GPU-hours x 7.91 = 63.28, saving -8.24
    assert rows["H200"][7:9] == (D("63.28"), D("-8.24"))
    row = con.execute(
        "SELECT month, team, currency, run_groups, method, evidence FROM advice.right_sizing"
        " WHERE run_group = 'r30' AND target_gpu_model = 'L40S'"
    ).fetchone()
    assert row is not None
    month, team, currency, run_groups, method, evidence = row
    assert (month, team, currency, run_groups) == (date(2026, 11, 1), "llm", "USD", ["r30"])
    assert "AWS L40S on-demand 1.86 USD per GPU-hour (rate card of 2026-11-01, test card)" in method
    assert "EXAMPLE" not in method
    assert evidence.startswith("high-water 30.0 GiB per GPU of 43.2 GiB usable on L40S (48 GiB less 10 % headroom)")
    assert "8.0 GPU-hours on 8 x H100 (6.0 busy)" in evidence
    assert "DRAM 0.30, tensor 0.60: compute-bound" in evidence
    assert "FP8" not in evidence


def test_a_run_on_committed_capacity_says_its_saving_comes_at_renewal(con):
    # The same hour, three quarters of it under a savings plan (PricingCategory Committed, 41.28 of 55.04): the
    # estimate stands, and its evidence says 75 % of the GPU cost was committed capacity, saved only at renewal.
    insert_charges(
        con,
        [
            Charge("h-sp", billed=D("41.28"), pricing_category="Committed"),
            Charge("h-od", billed=D("13.76"), pricing_category="Standard"),
        ],
    )
    insert_jobs(con, [Job("r30", at(2), at(2, 1))])
    insert_dcgm(con, "gpu-01", at(2), "r30", active_seconds=2700)
    split(con, node_config())
    advise(con, CONFIG)
    assert con.execute("SELECT committed_gpu_cost FROM advice.run_profiles").fetchall() == [(D("41.28"),)]
    evidence = con.execute("SELECT evidence FROM advice.right_sizing WHERE target_gpu_model = 'L40S'").fetchone()
    assert evidence is not None
    assert evidence[0].endswith(
        "75% of its GPU cost was committed capacity (reserved, savings plan, CUD): realizable at renewal"
    )


def test_120_gib_single_gpu_on_h200_does_not_fit_an_80_gb_gpu_and_a_sharded_run_spreads(con):
    # One hour of a p5e.48xlarge (8 H200) at 63.28. Job "big" holds GPU 0 with a 120 GiB high-water mark: a single
    # GPU run cannot shard, and 120 > 72 GiB usable of an A100-80GB or an H100 -> does not fit, no saving. Job
    # "sharded" holds GPUs 1-2 at 100 GiB each: its 200 GiB over A100-80GBs of 72 GiB need ceil(200 / 72) = 3
    # GPUs <= 8 per node -> needs sharding over 3; on L40S ceil(200 / 43.2) = 5 GPUs.
    insert_charges(con, [Charge("h", billed=D("63.28"), instance_type="p5e.48xlarge", usage_type="BoxUsage:p5e")])
    insert_jobs(con, [Job("big", at(2), at(2, 1), gpu_count=1), Job("sharded", at(2), at(2, 1), gpu_count=2)])
    insert_dcgm(con, "gpu-01", at(2), "big", gpus=[0], fb_used_mib=120 * 1024)
    insert_dcgm(con, "gpu-01", at(2), "sharded", gpus=[1, 2], fb_used_mib=100 * 1024)
    split(con, node_config())
    advise(con, CONFIG)
    big = targets(con, "big", "gpu_model, fit, gpus_needed, estimated_saving, best")
    assert big["A100-80GB"] == ("H200", "does not fit", None, None, False)
    assert big["H100"] == ("H200", "does not fit", None, None, False)
    assert big["L40S"] == ("H200", "does not fit", None, None, False)
    # its own model fits (120 <= 126.9 GiB): 1 GPU-hour at 7.91 against 63.28 / 8 = 7.91 billed, saving 0
    assert big["H200"] == ("H200", "fits", 1, D("0E-10"), False)
    sharded = targets(con, "sharded", "fit, gpus_needed")
    assert sharded["A100-80GB"] == ("needs sharding", 3)
    assert sharded["L40S"] == ("needs sharding", 5)
    assert sharded["H100"] == ("needs sharding", 3)
    evidence = con.execute(
        "SELECT evidence FROM advice.right_sizing WHERE run_group = 'sharded' AND target_gpu_model = 'L40S'"
    ).fetchone()
    assert evidence is not None and "needs sharding over 5 GPUs" in evidence[0]
    # no positive saving for "big" anywhere: no best row
    assert con.execute("SELECT count(*) FROM advice.right_sizing WHERE run_group = 'big' AND best").fetchone() == (0,)


def test_memory_bound_run_scales_by_bandwidth_and_flags_unused_fp8(con):
    # The 8-GPU H100 hour of the first test, but DRAM 0.7 >= 0.5 and above tensor 0.3: memory-bound. Busy 6 of 8
    # GPU-hours; on an A100-80GB they take 6 x 3.35 / 2.039 = 9.8577734183 GPU-hours, plus 2 idle = 11.8577734183,
    # x 3.43 = 40.6721628249 (not by TFLOPS: that would be 21.0192 GPU-hours). On an L40S 6 x 3.35 / 0.864 + 2
    # = 25.2638888889 GPU-hours x 1.86 = 46.9908333333.
    # Tensor activity never above 0.3 < 0.5 on a Hopper with FP8: FP8 unused.
    insert_charges(con, [Charge("h")])
    insert_jobs(con, [Job("mem", at(2), at(2, 1))])
    insert_dcgm(con, "gpu-01", at(2), "mem", active_seconds=2700, tensor=0.3, dram=0.7)
    split(con, node_config())
    advise(con, CONFIG)
    rows = targets(con, "mem", "bound, speed_ratio, estimated_gpu_hours, estimated_gpu_cost, fp8_unused, evidence")
    bound, speed, hours, cost, fp8, evidence = rows["A100-80GB"]
    assert (bound, fp8) == ("memory-bound", True)
    assert speed == pytest.approx(2.039 / 3.35, rel=1e-12)
    assert hours == pytest.approx(6 * 3.35 / 2.039 + 2, rel=1e-12)
    assert cost == D("40.6721628249")
    assert rows["L40S"][2] == pytest.approx(6 * 3.35 / 0.864 + 2, rel=1e-12)
    assert rows["L40S"][3] == D("46.9908333333")
    assert "DRAM 0.70 > tensor 0.30: memory-bound" in evidence
    assert "memory bandwidth 2.039 / 3.35 TB/s" in evidence
    assert "FP8 unused: peak tensor activity 0.30 < 0.50 on Hopper" in evidence


def test_compute_bound_run_scales_by_tflops_fp8_flag_needs_hopper_and_tensor_activity(con):
    # Two runs, an hour each. "a100" on a p4de (8 A100-80GB, 32.77 an hour), fully busy, tensor 0.4, DRAM 0.3:
    # compute-bound; on an H100 its 8 busy GPU-hours take 8 x 312 / 989 = 2.5237613751 GPU-hours x 2.99
    # (Lambda) = 7.5460465116. An Ampere has no FP8: fp8_unused false although tensor 0.4 < 0.5.
    # "nometrics" on the H100 node with no tensor or DRAM reading: compute-bound assumed, FP8 use unknown (NULL).
    insert_charges(
        con,
        [
            Charge("a", resource_id="i-0a100", billed=D("32.77"), instance_type="p4de.24xlarge", usage_type="p4de"),
            Charge("h"),
        ],
    )
    insert_jobs(con, [Job("a100", at(2), at(2, 1), nodes=("gpu-02",)), Job("nometrics", at(2), at(2, 1))])
    insert_dcgm(con, "gpu-02", at(2), "a100", tensor=0.4, dram=0.3)
    insert_dcgm(con, "gpu-01", at(2), "nometrics", tensor=None, dram=None)
    split(con, node_config(nodes=(NodeMapping("c1", "gpu-01", "i-0gpu"), NodeMapping("c1", "gpu-02", "i-0a100"))))
    advise(con, CONFIG)
    a100 = targets(con, "a100", "bound, estimated_gpu_hours, estimated_gpu_cost, fp8_unused")
    assert a100["H100"][0] == "compute-bound"
    assert a100["H100"][1] == pytest.approx(8 * 312 / 989, rel=1e-12)
    assert a100["H100"][2] == D("7.5460465116")
    assert a100["H100"][3] is False
    nometrics = targets(con, "nometrics", "bound, estimated_gpu_hours, fp8_unused, evidence")
    bound, hours, fp8, evidence = nometrics["A100-80GB"]
    assert (bound, fp8) == ("compute-bound (assumed)", None)
    assert hours == pytest.approx(8 * 989 / 312, rel=1e-12)
    assert "compute-bound assumed" in evidence and "FP8" not in evidence


def test_backtest_compares_a_recipe_run_on_two_gpu_models_with_its_estimate(con):
    # Recipe "rm-7b" of team llm completes twice: "on-h100" one hour on a p5.48xlarge (8 H100, 55.04: 8 GPU-hours
    # at 6.88) and "on-a100" three hours on a p4de (8 A100-80GB, 3 x 32.77 = 98.31: 24 GPU-hours at 4.09625), both
    # fully busy, tensor 0.6 > DRAM 0.3: compute-bound. A run of another recipe on the p4de is left out.
    # H100 -> A100-80GB: 8 x 989 / 312 = 25.3589743590 GPU-hours at the A100 run's 4.09625 = 103.8766987179
    #   against 98.31 actual: +5.5666987179 (+5.66 %); GPU-hours 25.359 vs 24.
    # A100-80GB -> H100: 24 x 312 / 989 = 7.5712841254 GPU-hours at 6.88 = 52.0904347826 against 55.04:
    #   -2.9495652174 (-5.36 %).
    p4de = [
        Charge(f"a{i}", "i-0a100", at(2, i), billed=D("32.77"), instance_type="p4de.24xlarge", usage_type="p4de")
        for i in range(4)
    ]
    insert_charges(con, [Charge("h"), *p4de])
    insert_jobs(
        con,
        [
            Job("on-h100", at(2), at(2, 1), name="rm-7b"),
            Job("on-a100", at(2), at(2, 3), nodes=("gpu-02",), name="rm-7b"),
            Job("other", at(2, 3), at(2, 4), nodes=("gpu-02",), name="sft-7b"),
        ],
    )
    insert_dcgm(con, "gpu-01", at(2), "on-h100")
    for hour in range(3):
        insert_dcgm(con, "gpu-02", at(2, hour), "on-a100")
    insert_dcgm(con, "gpu-02", at(2, 3), "other")
    split(con, node_config(nodes=(NodeMapping("c1", "gpu-01", "i-0gpu"), NodeMapping("c1", "gpu-02", "i-0a100"))))
    advise(con, CONFIG)
    rows = con.execute(
        "SELECT recipe, source_run_group, actual_run_group, bound, fit, estimated_gpu_hours, actual_gpu_hours,"
        " actual_gpu_rate, estimated_cost_to_finish, actual_cost_to_finish, cost_error, cost_error_share"
        " FROM advice.right_sizing_backtest ORDER BY source_gpu_model"
    ).fetchall()
    assert [r[:5] for r in rows] == [
        ("rm-7b", "on-a100", "on-h100", "compute-bound", "fits"),
        ("rm-7b", "on-h100", "on-a100", "compute-bound", "fits"),
    ]
    from_a100, from_h100 = rows
    assert from_h100[5] == pytest.approx(8 * 989 / 312, rel=1e-12) and from_h100[6] == 24.0
    assert from_h100[7:11] == (D("4.09625"), D("103.8766987179"), D("98.31"), D("5.5666987179"))
    assert from_h100[11] == pytest.approx(5.5666987179 / 98.31, rel=1e-9)
    assert from_a100[5] == pytest.approx(24 * 312 / 989, rel=1e-12) and from_a100[6] == 8.0
    assert from_a100[7:11] == (D("6.88"), D("52.0904347826"), D("55.04"), D("-2.9495652174"))
