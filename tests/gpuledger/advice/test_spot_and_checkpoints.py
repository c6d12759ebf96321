"""Hand-checked cases of the spot what-if, the Young/Daly checkpoint interval and checkpoint retention.

Unless a test says otherwise a GPU charge is one hour of a p5.48xlarge (8 H100 at AWS) billed 64.00, i.e.
8.00 per GPU-hour, with no telemetry (allocation only: the job holding the node is charged all of it). The
rate card is a test card: AWS H100 on demand 8.00, spot 2.00 per GPU-hour (ratio 0.25), dated 2026-11-15.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import duckdb
import pytest

from gpuledger.advice.advise import advise
from models.advice import AdviceConfig, RateCardEntry
from tests.fixtures.allocation_cases import (
    Charge,
    Job,
    at,
    hourly_charges,
    insert_charges,
    insert_checkpoint_bytes,
    insert_jobs,
    node_config,
    split,
    storage_charge,
)

D = Decimal
CARD_DATE = date(2026, 11, 15)
TEST_CARD = (
    RateCardEntry("AWS", "H100", "on-demand", D("8.00"), "USD", CARD_DATE, "test card"),
    RateCardEntry("AWS", "H100", "spot", D("2.00"), "USD", CARD_DATE, "test card"),
)
CONFIG = AdviceConfig(rates=TEST_CARD, rates_are_example=False, checkpoint_write_minutes=10.0, restart_minutes=15.0)
CONTRACT = {
    "month": "DATE",
    "team": "VARCHAR",
    "currency": "VARCHAR",
    "opportunity": "VARCHAR",
    "estimated_saving": "DECIMAL(38,10)",
    "method": "VARCHAR",
    "evidence": "VARCHAR",
    "run_groups": "VARCHAR[]",
}


def row(con: duckdb.DuckDBPyConnection, table: str, run_group: str, columns: str) -> tuple[object, ...]:
    found = con.execute(
        f"SELECT {columns} FROM advice.{table} WHERE run_group = $rg",
        {"rg": run_group},
    ).fetchall()
    assert len(found) == 1, found
    return found[0]


def twice_interrupted_run(con: duckdb.DuckDBPyConnection) -> None:
    """Run "r" (8 GPUs, on demand): attempts r-1 00:00-02:00 and r-2 02:00-04:00 are preempted, r-3 04:00-06:00
    completes (Nov 2). Six hourly charges of 64.00: GPU cost 384.00 over 48 GPU-hours. Every attempt writes a
    checkpoint 30, 60 and 90 minutes after it starts (9 writes, every gap 30 min)."""
    insert_charges(con, hourly_charges("h", at(2), 6, billed=D("64.00")))
    uri = "s3://ckpt-bucket/r/"
    insert_jobs(
        con,
        [
            Job("r-1", at(2, 0), at(2, 2), state="PREEMPTED", run_group="r", checkpoint_uri=uri),
            Job("r-2", at(2, 2), at(2, 4), state="PREEMPTED", run_group="r", checkpoint_uri=uri),
            Job("r-3", at(2, 4), at(2, 6), run_group="r", checkpoint_uri=uri),
        ],
    )
    written = {
        f"{uri}step-{attempt}{n}.pt": at(2, 2 * attempt) + timedelta(minutes=30 * n)
        for attempt in range(3)
        for n in (1, 2, 3)
    }
    insert_checkpoint_bytes(con, at(2, 7), dict.fromkeys(written, 10**9), last_modified=written)
    split(con, node_config())


def test_spot_what_if_of_a_run_interrupted_twice(con):
    # Gross: 384.00 x (1 - 2.00 / 8.00) = 384.00 x 0.75 = 288.00.
    # Expected interruptions: its own 2. Each loses half its observed checkpoint interval plus the restart:
    # (30 / 2 + 15) min = 30 min on 8 GPUs = 4 GPU-hours, at the spot price 2.00 = 8.00; twice = 16.00.
    # Saving: 288.00 - 16.00 = 272.00.
    twice_interrupted_run(con)
    advise(con, CONFIG)
    columns = (
        "month, team, currency, opportunity, provider, gpu_model, gpu_count, gpu_cost, spot_gpu_cost, spot_saved,"
        " on_demand_price, spot_price, spot_price_ratio, gross_saving, expected_interruptions, interval_minutes,"
        " interval_observed, restart_minutes, lost_gpu_hours_per_interruption, expected_lost_cost, estimated_saving,"
        " run_groups"
    )
    assert row(con, "spot_what_if", "r", columns) == (
        date(2026, 11, 1),
        "llm",
        "USD",
        "spot",
        "AWS",
        "H100",
        8,
        D("384.00"),
        D("0"),
        None,
        D("8.00"),
        D("2.00"),
        0.25,
        D("288.00"),
        2,
        pytest.approx(30.0),
        True,
        15.0,
        pytest.approx(4.0),
        D("16.00"),
        D("272.00"),
        ["r"],
    )
    method, evidence = row(con, "spot_what_if", "r", "method, evidence")
    assert "rate card of 2026-11-15 (test card)" in method
    assert "EXAMPLE" not in method
    assert "2 interruptions + failures" in evidence and "(observed checkpoint interval)" in evidence


def test_spot_what_if_needs_a_spot_price_and_names_an_example_card(con):
    # Without a spot price for H100 at AWS in USD nothing is estimated; the seeded example card is named as such.
    twice_interrupted_run(con)
    on_demand_only = AdviceConfig(rates=TEST_CARD[:1], rates_are_example=False)
    advise(con, on_demand_only)
    assert row(con, "spot_what_if", "r", "opportunity, spot_price, gross_saving, estimated_saving, evidence") == (
        "spot",
        None,
        None,
        None,
        "no spot price for H100 at AWS in the rate card (in USD)",
    )
    advise(con, AdviceConfig())
    (method,) = row(con, "spot_what_if", "r", "method")
    assert method.endswith("EXAMPLE rate card of 2026-11-01")


def test_a_run_already_on_spot_shows_what_spot_saved(con):
    # Run "s" holds the node one hour on spot (PricingCategory Dynamic): EffectiveCost 24.80, ListCost 55.04.
    # Spot saved 55.04 - 24.80 = 30.24; nothing is estimated for it.
    insert_charges(con, [Charge("s", start=at(3), billed=D("24.80"), list_cost=D("55.04"), pricing_category="Dynamic")])
    insert_jobs(con, [Job("s", at(3, 0), at(3, 1))])
    split(con, node_config())
    advise(con, CONFIG)
    assert row(
        con,
        "spot_what_if",
        "s",
        "opportunity, gpu_cost, spot_gpu_cost, spot_gpu_list_cost, spot_saved, estimated_saving",
    ) == ("spot (already used)", D("24.80"), D("24.80"), D("55.04"), D("30.24"), None)


def test_young_daly_interval_of_a_run_interrupted_twice(con):
    # T = 3 attempts x 2 h = 6 h, n = 2 interruptions: MTBF 3 h = 180 min; write time w = 10 min (setting);
    # optimum sqrt(2 x 10 x 180) = 60 min; observed every 30 min. Rate 384.00 / 48 GPU-hours = 8.00.
    # C(30 min) = (6 / 0.5) x (10/60) x 8 + 2 x 0.25 x 8 = 16 + 4 = 20 GPU-hours = 160.00
    # C(60 min) = (6 / 1) x (10/60) x 8 + 2 x 0.5 x 8 = 8 + 8 = 16 GPU-hours = 128.00 -> saving 32.00.
    # Measured lost work: each preempted attempt ran 30 min past its last checkpoint (01:30, 03:30):
    # 0.25 of 128.00 = 32.00 and 0.25 x 2 h x 8 GPUs = 4 GPU-hours, twice: 64.00 and 8 GPU-hours.
    twice_interrupted_run(con)
    advise(con, CONFIG)
    columns = (
        "month, opportunity, attempts, interruptions, failures, checkpoint_writes, observed_interval_minutes,"
        " interval_observed, attempt_hours, mtbf_hours, optimal_interval_minutes, gpu_cost_per_gpu_hour,"
        " measured_lost_work_cost, measured_lost_gpu_hours, model_cost_observed, model_cost_optimal, estimated_saving"
    )
    assert row(con, "checkpoint_intervals", "r", columns) == (
        date(2026, 11, 1),
        "checkpoint interval",
        3,
        2,
        0,
        9,
        pytest.approx(30.0),
        True,
        pytest.approx(6.0),
        pytest.approx(3.0),
        pytest.approx(60.0),
        D("8.00"),
        D("64.00"),
        pytest.approx(8.0),
        D("160.00"),
        D("128.00"),
        D("32.00"),
    )


def test_without_checkpoints_the_interval_is_the_mean_attempt_length(con):
    # Run "n": n-1 00:00-02:00 fails (NODE_FAIL), n-2 02:00-03:00 completes; no checkpoint_uri. T = 3 h, n = 1:
    # MTBF 3 h = 180 min, optimum sqrt(2 x 10 x 180) = 60 min; the interval stands in as the mean attempt length
    # 3 h / 2 = 90 min. C(90) = (3 / 1.5) x (10/60) x 8 + 1 x 0.75 x 8 = 2.6667 + 6 = 8.6667 GPU-hours;
    # C(60) = 3 x (10/60) x 8 + 0.5 x 8 = 8 GPU-hours; saving 0.6667 x 8.00 = 5.3333333333.
    # Lost: n-1 wrote nothing, all of its 128.00 (16 GPU-hours). Run "ok" (04:00-05:00) never broke nor
    # checkpointed: it has no row.
    insert_charges(con, hourly_charges("h", at(2), 5, billed=D("64.00")))
    insert_jobs(
        con,
        [
            Job("n-1", at(2, 0), at(2, 2), state="NODE_FAIL", run_group="n"),
            Job("n-2", at(2, 2), at(2, 3), run_group="n"),
            Job("ok", at(2, 4), at(2, 5)),
        ],
    )
    split(con, node_config())
    advise(con, CONFIG)
    columns = (
        "checkpoint_writes, observed_interval_minutes, interval_minutes, interval_observed, mtbf_hours,"
        " optimal_interval_minutes, measured_lost_work_cost, measured_lost_gpu_hours, estimated_saving"
    )
    assert row(con, "checkpoint_intervals", "n", columns) == (
        0,
        None,
        pytest.approx(90.0),
        False,
        pytest.approx(3.0),
        pytest.approx(60.0),
        D("128.00"),
        pytest.approx(16.0),
        D("5.3333333333"),
    )
    (evidence,) = row(con, "checkpoint_intervals", "n", "evidence")
    assert "mean attempt length 90.0 min" in evidence and "all work since the attempt started is lost" in evidence
    assert con.execute("SELECT count(*) FROM advice.checkpoint_intervals WHERE run_group = 'ok'").fetchone() == (0,)


def test_retention_prices_deleting_all_but_the_newest_three_checkpoints(con):
    # Run "pre" runs Oct 30 00:00-01:00 and completes. Retained checkpoint storage: Oct 31 2.40 (October), then
    # Nov 1 3.00 + Nov 2 7.00 = 10.00 in November, its latest billing month with such cost.
    # Newest inventory (Nov 2): a 1000 (written 00:10), b 2000 (00:20), c 3000 (00:30), d 3900 (00:40) and e 100
    # with no last_modified, first listed Oct 30 12:00 -> the newest. gone.pt, only in the older listing, is not
    # counted. All 10000 bytes; the newest 3 (e, d, c) hold 7000: saving 10.00 x (1 - 7000/10000) = 3.00 a month.
    october = datetime(2026, 10, 1, tzinfo=UTC)
    insert_charges(
        con,
        [
            Charge("gpu", start=at(30, month=10), billing_period_start=october),
            storage_charge("s-oct31", at(31, month=10), "2.40", 10),
            storage_charge("s-nov01", at(1), "3.00", 11),
            storage_charge("s-nov02", at(2), "7.00", 11),
        ],
    )
    uri = "s3://ckpt-bucket/pre/"
    insert_jobs(con, [Job("pre", at(30, month=10), at(30, 1, month=10), checkpoint_uri=uri)])
    insert_checkpoint_bytes(con, at(30, 12, month=10), {uri + "e.pt": 100, uri + "gone.pt": 9000})
    written = {uri + f"{name}.pt": at(30, 0, 10 * (i + 1), month=10) for i, name in enumerate("abcd")}
    sizes = {uri + "a.pt": 1000, uri + "b.pt": 2000, uri + "c.pt": 3000, uri + "d.pt": 3900, uri + "e.pt": 100}
    insert_checkpoint_bytes(con, at(2), sizes, last_modified=written)
    config = node_config(checkpoint_resources=("ckpt-bucket",))
    split(con, config, "2026-10")
    split(con, config, "2026-11")
    advise(con, CONFIG)
    columns = (
        "month, team, currency, opportunity, checkpoint_uris, objects, bytes, keep_checkpoints, kept_bytes,"
        " retained_checkpoint_cost, estimated_saving, run_groups"
    )
    assert row(con, "checkpoint_retention", "pre", columns) == (
        date(2026, 11, 1),
        "llm",
        "USD",
        "checkpoint retention",
        [uri],
        5,
        10000,
        3,
        7000,
        D("10.00"),
        D("3.00"),
        ["pre"],
    )
    # keeping 5 or more leaves nothing to delete
    advise(con, AdviceConfig(keep_checkpoints=5))
    assert row(con, "checkpoint_retention", "pre", "kept_bytes, estimated_saving") == (10000, D("0"))


def test_estimate_tables_carry_the_opportunity_contract(con):
    twice_interrupted_run(con)
    advise(con, CONFIG)
    for table in ("spot_what_if", "checkpoint_intervals", "checkpoint_retention"):
        types = dict(
            con.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = 'advice' AND table_name = $t",
                {"t": table},
            ).fetchall()
        )
        assert {name: types.get(name) for name in CONTRACT} == CONTRACT, table
