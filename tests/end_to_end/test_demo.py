"""The demo end to end, through Dagster: every cent of the sample exports reconciles, independently computed."""

from __future__ import annotations

import csv
import gzip
import json
from collections import defaultdict
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from gpuledger.gates.focus_validator import run_focus_validator, should_rules
from gpuledger.warehouse.home import connect_warehouse
from models.aws_cur import cur1_to_snake
from pipelines.cli import main

pytestmark = [pytest.mark.both_warehouses, pytest.mark.slow]

Totals = dict[tuple[str, str, str], list[Decimal]]


PUBLISHED_TABLES = (
    "focus.costs",
    "allocation.cost_split",
    "showback.team_month",
    "showback.job_costs",
    "showback.idle_by_hour_of_week",
)


def _snapshot(home: Path) -> dict[str, pa.Table]:
    """Every published table's rows in a fixed order (Arrow tables: compared exactly, as tuples would be)."""
    with closing(connect_warehouse(home, read_only=True)) as con:
        # Table names are this module's constants.
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").to_arrow_table() for t in PUBLISHED_TABLES}


def _focus_totals(home: Path) -> Totals:
    with closing(connect_warehouse(home, read_only=True)) as con:
        rows = con.execute(
            "SELECT BillingAccountId, strftime(BillingPeriodStart, '%Y-%m'), BillingCurrency,"
            " sum(BilledCost), sum(EffectiveCost) FROM focus.costs GROUP BY ALL"
        ).fetchall()
    return {(a, p, c): [b, e] for a, p, c, b, e in rows}


def _manifest_files(home: Path) -> list[Path]:
    """Data files named by the newest manifests, read straight from the manifests (not via the pipeline)."""
    files = []
    for manifest in sorted((home / "exports").rglob("*Manifest.json")):
        data = json.loads(manifest.read_text())
        for key in data.get("reportKeys", []):  # CUR 1: keys below the period folder
            files.append(manifest.parent / key.split(f"/{manifest.parent.name}/", 1)[1])
        for uri in data.get("dataFiles", []):  # Data Exports: s3 URIs below data/
            export_root = manifest.parent.parent.parent
            files.append(export_root / "data" / uri.split("/data/", 1)[1])
    return files


def _source_rows(path: Path) -> list[dict[str, object]]:
    if path.name.endswith(".parquet"):
        return pl.read_parquet(path).to_dicts()
    with gzip.open(path, "rt", newline="", encoding="utf-8") as handle:
        return [{cur1_to_snake(k): v for k, v in row.items()} for row in csv.DictReader(handle)]


def _dec(value: object) -> Decimal:
    if value in (None, ""):
        return Decimal(0)
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(str(value))


def _amortized(row: dict[str, object]) -> Decimal:
    """AWS's CID amortization, written out independently of the SQL model."""
    kind = row["line_item_line_item_type"]
    cost = _dec(row["line_item_unblended_cost"])
    commitment = row.get("reservation_reservation_a_r_n") or row.get("savings_plan_savings_plan_a_r_n")
    if kind == "DiscountedUsage":
        return _dec(row["reservation_effective_cost"])
    if kind == "SavingsPlanCoveredUsage":
        return _dec(row["savings_plan_savings_plan_effective_cost"])
    if kind in ("SavingsPlanNegation", "SavingsPlanUpfrontFee"):
        return Decimal(0)
    if kind == "SavingsPlanRecurringFee":
        return _dec(row["savings_plan_total_commitment_to_date"]) - _dec(row["savings_plan_used_commitment"])
    if kind == "RIFee":
        return _dec(row["reservation_unused_amortized_upfront_fee_for_billing_period"]) + _dec(
            row["reservation_unused_recurring_fee"]
        )
    if kind in ("Fee", "Refund") and commitment:
        return Decimal(0)
    return cost


def _source_totals(home: Path) -> Totals:
    totals: Totals = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for path in _manifest_files(home):
        for row in _source_rows(path):
            start = row["bill_billing_period_start_date"]
            period = start.strftime("%Y-%m") if hasattr(start, "strftime") else str(start)[:7]
            key = (str(row["bill_payer_account_id"]), period, str(row["line_item_currency_code"]))
            totals[key][0] += _dec(row["line_item_unblended_cost"])
            totals[key][1] += _amortized(row)
    return dict(totals)


def _generator_totals(home: Path) -> Totals:
    """Azure and GCP: the totals the generators summed in Decimal from the rows they wrote."""
    totals: Totals = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for t in json.loads((home / "exports" / "_expected_totals_azure.json").read_text()):
        # the combined dataset bills what ActualCost bills and amortizes what AmortizedCost amortizes
        column = 0 if t["dataset"] == "ActualCost" else 1
        totals[(t["billing_profile_id"], t["billing_period"], t["currency"])][column] += Decimal(t["cost"])
    for t in json.loads((home / "exports" / "_expected_totals_gcp.json").read_text()):
        month = f"{t['invoice_month'][:4]}-{t['invoice_month'][4:]}"
        # credits are FOCUS rows or reductions of their charge: billed and effective are both cost + credits
        totals[(t["billing_account_id"], month, t["currency"])] = [Decimal(t["net"]), Decimal(t["net"])]
    return dict(totals)


def _focus_file_totals(home: Path) -> Totals:
    """The specialist cloud's FOCUS CSVs, summed in Decimal straight from the files."""
    totals: Totals = defaultdict(lambda: [Decimal(0), Decimal(0)])
    for path in sorted((home / "exports" / "coreweave").rglob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                key = (row["BillingAccountId"], row["BillingPeriodStart"][:7], row["BillingCurrency"])
                totals[key][0] += Decimal(row["BilledCost"])
                totals[key][1] += Decimal(row["EffectiveCost"])
    return dict(totals)


def test_every_slice_reconciles_with_the_source_to_the_cent(demo_home):
    focus = _focus_totals(demo_home)
    source = _source_totals(demo_home) | _generator_totals(demo_home) | _focus_file_totals(demo_home)
    assert set(focus) == set(source)
    # (two AWS payers, an Azure billing profile, a GCP billing account, a CoreWeave organization) x two months
    assert len(source) == 10
    for key, (billed, effective) in source.items():
        assert abs(focus[key][0] - billed) < Decimal("0.001"), key
        assert abs(focus[key][1] - effective) < Decimal("0.001"), key


def test_only_the_newest_manifest_counts_and_unmanifested_data_is_ignored(demo_home):
    with closing(connect_warehouse(demo_home, read_only=True)) as con:
        aws_files = con.execute("SELECT DISTINCT x_SourceFile FROM focus.costs WHERE ProviderName = 'AWS'")
        files = {row[0] for row in aws_files.fetchall()}
        months = con.execute("SELECT DISTINCT strftime(BillingPeriodStart, '%Y-%m') FROM focus.costs").fetchall()
    assert files == {str(p) for p in _manifest_files(demo_home)}
    aws_exports = [demo_home / "exports" / name for name in ("helios-legacy-billing", "helios-billing-exports")]
    all_data = {str(p) for root in aws_exports for p in root.rglob("*") if p.name.endswith((".parquet", ".csv.gz"))}
    assert len(all_data - files) >= 3  # the superseded assembly and execution, and the 2026-12 folder
    assert sorted(months) == [("2026-10",), ("2026-11",)]


def test_no_stage_leaves_a_view_of_its_own_in_the_warehouse(demo_home):
    # readers' views are their sessions' (temporary): stored, they would be catalog changes a lake commits and
    # concurrent loads conflict on, left behind in the analysts' warehouse
    with closing(connect_warehouse(demo_home, read_only=True)) as con:
        stored = con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary AND schema_name = 'main'"
        ).fetchall()
    assert stored == []


def test_account_ids_keep_leading_zeros(demo_home):
    accounts = {key[0] for key in _focus_totals(demo_home)}
    assert {"012345678901", "004455667788", "01A2B3-C4D5E6-F7A8B9"} <= accounts


def test_rerun_is_idempotent(demo_copy):
    """On a copy: a run holds the warehouse for writing, and other workers' tests read the demo home meanwhile."""
    before = _snapshot(demo_copy)
    assert main(["run", "--home", str(demo_copy)]) == 0
    assert _snapshot(demo_copy) == before


def test_official_validator_reports_no_failed_rule(demo_home, tmp_path):
    export = tmp_path / "focus.parquet"
    assert main(["export-focus", "--home", str(demo_home), "--out", str(export)]) == 0
    result = run_focus_validator(export, criteria="ALL")
    assert result.total > 500
    assert result.failed == {}
    # SHOULD rules included: every one the engine executes passed, none was skipped
    assert should_rules() <= result.passed_rules, sorted(should_rules() - result.passed_rules)


def test_gpu_split_runs_on_every_provider(demo_home):
    with closing(connect_warehouse(demo_home, read_only=True)) as con:
        rows = con.execute(
            "SELECT ProviderName, list(DISTINCT category ORDER BY category), list(DISTINCT allocation_basis)"
            " FROM allocation.cost_split WHERE BillingPeriodStart >= TIMESTAMPTZ '2026-10-31 00:00:00+00'"
            " GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    categories = ["checkpoint_storage", "egress", "idle", "other", "run"]
    assert [(provider, cats) for provider, cats, _ in rows] == [
        ("AWS", categories),
        ("CoreWeave", ["checkpoint_storage", "idle", "run"]),  # no egress charges, nothing else billed
        ("Google Cloud", categories),
        ("Microsoft", categories),
    ]
    for provider, _, bases in rows:  # each job's own GPU activity and stored byte-hours, not owner fallbacks only
        assert {"job-label", "stored-byte-hours"} <= set(bases), provider
        assert provider == "CoreWeave" or "egress-bytes" in bases, provider


def test_demo_ends_with_the_showback_summary_per_team(demo_run):
    _, output = demo_run
    summary = output.split("Showback per team", 1)[1]
    for team in ("llm-pretrain", "research", "vision", "speech", "unallocated"):
        assert f"2026-11  {team}" in summary
    assert "showback.team_month" in output and "analyst.duckdb (published for analysts; open it read-only)" in output


def test_showback_totals_equal_focus_effective_cost_per_month_and_currency(demo_home):
    with closing(connect_warehouse(demo_home, read_only=True)) as con:
        focus = con.execute(
            "SELECT CAST(BillingPeriodStart AS DATE), BillingCurrency, sum(EffectiveCost), sum(BilledCost)"
            " FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        showback = con.execute(
            "SELECT billing_month, currency, sum(total_cost), sum(billed_cost) FROM showback.team_month"
            " GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        run_and_idle = con.execute(
            "SELECT count(DISTINCT team) FILTER (WHERE run_cost > 0 AND idle_cost > 0) FROM showback.team_month"
            " WHERE billing_month = DATE '2026-11-01'"
        ).fetchone()
    assert showback == focus
    assert run_and_idle == (4,)
