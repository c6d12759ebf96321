"""FOCUS 1.3 out of the demo: the CostAndUsage export keeps every charge and total of 1.2, the allocated rows sum to
the charges they split, the ContractCommitment rows reconcile with the commitments' charges, the analyst file has
the same datasets as views, and an export the 1.3 checks refuse is not written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
import yaml

from gpuledger.publish.focus_1_3 import Dataset
from gpuledger.publish.snapshot import ANALYST_FILE
from gpuledger.warehouse.home import connect_warehouse
from gpuledger.warehouse.sqlfiles import quote_ident
from models.focus_1_3 import CONTRACT_COMMITMENT_1_3, COST_AND_USAGE_1_3
from pipelines.cli import main
from tests.fixtures.paths import REPO

pytestmark = [pytest.mark.both_warehouses, pytest.mark.serial]

MONEY = ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost")


@pytest.fixture(scope="module")
def exports(demo_home: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo exported once each way: FOCUS 1.2, 1.3, 1.3 allocated and the 1.3 ContractCommitment dataset."""
    folder = tmp_path_factory.mktemp("focus-exports")
    runs = {
        "1.2": [],
        "1.3": ["--focus-version", "1.3"],
        "allocated": ["--focus-version", "1.3", "--allocated"],
        "commitments": ["--focus-version", "1.3", "--dataset", "contract-commitment"],
    }
    files = {}
    for name, flags in runs.items():
        files[name] = folder / f"{name}.parquet"
        assert main(["export-focus", "--home", str(demo_home), "--out", str(files[name]), *flags]) == 0, name
    return files


@pytest.fixture
def con(exports: dict[str, Path]) -> Iterator[duckdb.DuckDBPyConnection]:
    with closing(duckdb.connect()) as connection:
        for name, path in exports.items():
            connection.execute(f"CREATE VIEW {duckdb_name(name)} AS SELECT * FROM read_parquet('{path}')")
        yield connection


def duckdb_name(export: str) -> str:
    return {"1.2": "v1_2", "1.3": "v1_3"}.get(export, export)


def test_the_1_3_datasets_have_the_spec_columns_in_order_then_gpuledger_columns(con):
    for view, spec in (
        ("v1_3", COST_AND_USAGE_1_3),
        ("allocated", COST_AND_USAGE_1_3),
        ("commitments", CONTRACT_COMMITMENT_1_3),
    ):
        columns = [d[0] for d in con.execute(f"SELECT * FROM {view} LIMIT 0").description]
        assert columns[: len(spec)] == [c.name for c in spec], view
        assert all(c.startswith("x_") for c in columns[len(spec) :]), view


def test_the_1_3_export_has_every_charge_and_total_of_1_2(con):
    totals = (
        "SELECT ProviderName, BillingAccountId, x_BillingMonth, BillingCurrency, count(*), {}"
        " FROM {} GROUP BY ALL ORDER BY ALL"
    )
    sums = ", ".join(f"sum({m})" for m in MONEY)
    assert con.execute(totals.format(sums, "v1_3")).fetchall() == con.execute(totals.format(sums, "v1_2")).fetchall()
    assert con.execute("SELECT count(*) FROM v1_3 WHERE ServiceProviderName IS NULL").fetchone() == (0,)


def test_allocated_rows_sum_exactly_to_the_charges_they_split(con):
    per_charge = """
        SELECT x_DeliveryId, x_SourceLineItemId, {} FROM {} GROUP BY ALL
    """
    sums = ", ".join(f"sum({m}) AS {m}" for m in (*MONEY, "PricingQuantity", "ConsumedQuantity"))
    differ = con.execute(
        f"SELECT count(*) FROM ({per_charge.format(sums, 'allocated')}) a"
        f" FULL JOIN ({per_charge.format(sums, 'v1_2')}) o USING (x_DeliveryId, x_SourceLineItemId)"
        " WHERE a.BilledCost IS DISTINCT FROM o.BilledCost OR a.EffectiveCost IS DISTINCT FROM o.EffectiveCost"
        " OR a.ListCost IS DISTINCT FROM o.ListCost OR a.ContractedCost IS DISTINCT FROM o.ContractedCost"
        " OR a.PricingQuantity IS DISTINCT FROM o.PricingQuantity"
        " OR a.ConsumedQuantity IS DISTINCT FROM o.ConsumedQuantity"
    ).fetchone()
    assert differ == (0,)
    monthly = (
        "SELECT x_BillingMonth, BillingCurrency, sum(BilledCost), sum(EffectiveCost) FROM {} GROUP BY ALL ORDER BY ALL"
    )
    assert con.execute(monthly.format("allocated")).fetchall() == con.execute(monthly.format("v1_2")).fetchall()
    assert con.execute("SELECT count(*) > (SELECT count(*) FROM v1_2) FROM allocated").fetchone() == (True,)


def test_allocated_rows_name_team_user_job_and_run_group(con):
    tags = con.execute(
        "SELECT AllocatedTags::JSON ->> 'gpuledger/team', AllocatedTags::JSON ->> 'gpuledger/user',"
        " AllocatedTags::JSON ->> 'gpuledger/job', AllocatedTags::JSON ->> 'gpuledger/run_group',"
        " AllocatedResourceId, AllocatedMethodDetails::JSON -> '$.Elements'"
        " FROM allocated WHERE AllocatedResourceId IS NOT NULL"
    ).fetchall()
    assert tags and all(team and job == resource for team, _, job, _, resource, _ in tags)
    assert sum(1 for _, user, _, run_group, _, _ in tags if user and run_group) > len(tags) / 2
    remainders = con.execute(
        "SELECT count(*), count(AllocatedTags::JSON ->> 'gpuledger/team')"
        " FROM allocated WHERE AllocatedResourceId IS NULL"
    ).fetchone()
    assert remainders[0] > 0 and remainders[0] == remainders[1]  # the remainder still names its owning team


def test_contract_commitments_reconcile_with_their_purchases_used_and_unused_charges(con):
    commitments = con.execute(
        "SELECT ContractCommitmentId, x_PurchasedCost, x_UsedCost, x_UnusedCost, x_AppliedCharges FROM commitments"
    ).fetchall()
    assert len(commitments) == 4  # the demo's RI, Savings Plan, Azure reservation and GCP CUD
    for commitment_id, purchased, used, unused, applied in commitments:
        charges = con.execute(
            "SELECT count(*),"
            " sum(BilledCost) FILTER (WHERE ChargeCategory = 'Purchase'"
            "   OR (CommitmentDiscountId IS NULL AND ChargeFrequency = 'Recurring')),"
            " sum(EffectiveCost) FILTER (WHERE CommitmentDiscountStatus = 'Used'),"
            " sum(EffectiveCost) FILTER (WHERE CommitmentDiscountStatus = 'Unused'),"
            " sum(CASE WHEN ChargeCategory = 'Purchase' THEN BilledCost ELSE EffectiveCost END)"
            " FROM v1_2 WHERE coalesce(CommitmentDiscountId, x_CommitmentId) = $id",
            {"id": commitment_id},
        ).fetchone()
        assert (applied, purchased, used, unused) == charges[:4], commitment_id
        linked = con.execute(
            "SELECT count(*),"
            " sum(CAST(ContractApplied::JSON ->> '$.Elements[0].ContractCommitmentAppliedCost' AS DECIMAL(38, 10)))"
            " FROM v1_3 WHERE ContractApplied::JSON ->> '$.Elements[0].ContractCommitmentId' = $id",
            {"id": commitment_id},
        ).fetchone()
        assert linked == (applied, charges[4]), commitment_id  # a purchase applies what it paid, usage its cost


def test_a_reserved_instance_amortizes_its_stated_term_month_by_month(con):
    """Used + unused of each month = the month's recurring fee + the upfront fee x the month's share of the term."""
    (start, end, upfront) = con.execute(
        "SELECT ContractCommitmentPeriodStart, ContractCommitmentPeriodEnd,"
        " (SELECT sum(BilledCost) FROM v1_2 WHERE CommitmentDiscountType = 'Reserved Instance'"
        "  AND ChargeCategory = 'Purchase' AND ChargeFrequency = 'One-Time')"
        " FROM commitments WHERE ContractCommitmentType = 'Reserved Instance' AND x_TermBasis = 'stated by the source'"
    ).fetchone()
    term_hours = Decimal((end - start).total_seconds()) / 3600
    months = con.execute(
        "SELECT x_BillingMonth,"
        " sum(BilledCost) FILTER (WHERE ChargeCategory = 'Purchase' AND ChargeFrequency = 'Recurring'),"
        " sum(EffectiveCost) FILTER (WHERE CommitmentDiscountStatus IN ('Used', 'Unused')),"
        " max(epoch(BillingPeriodEnd) - epoch(BillingPeriodStart)) / 3600"
        " FROM v1_2 WHERE CommitmentDiscountType = 'Reserved Instance' GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert len(months) == 2
    for month, recurring, amortized, hours in months:
        assert amortized == recurring + upfront * Decimal(hours) / term_hours, month


def test_every_commitment_named_by_a_charge_is_in_the_dataset(con):
    orphans = con.execute(
        "SELECT count(*) FROM v1_3 WHERE ContractApplied IS NOT NULL"
        " AND (ContractApplied::JSON ->> '$.Elements[0].ContractCommitmentId')"
        " NOT IN (SELECT ContractCommitmentId FROM commitments)"
    ).fetchone()
    assert orphans == (0,)
    providers = {p for (p,) in con.execute("SELECT DISTINCT x_ProviderName FROM commitments").fetchall()}
    assert providers == {"AWS", "Microsoft", "Google Cloud"}


def test_the_analyst_file_has_the_1_3_datasets_as_views(demo_home, con):
    with closing(duckdb.connect(str(demo_home / ANALYST_FILE), read_only=True)) as analyst:
        for dataset, export in (
            (Dataset.COST_AND_USAGE, "v1_3"),
            (Dataset.ALLOCATED_COST_AND_USAGE, "allocated"),
            (Dataset.CONTRACT_COMMITMENT, "commitments"),
        ):
            published = analyst.execute(f"SELECT count(*) FROM focus_1_3.{dataset.value}").fetchone()
            assert published == con.execute(f"SELECT count(*) FROM {export}").fetchone(), dataset


def test_export_options_belong_to_1_3(demo_home, tmp_path, capsys):
    out = str(tmp_path / "x.parquet")
    assert main(["export-focus", "--home", str(demo_home), "--out", out, "--allocated"]) == 2
    assert "need --focus-version 1.3" in capsys.readouterr().err
    flags = ["--focus-version", "1.3", "--allocated", "--dataset", "contract-commitment"]
    assert main(["export-focus", "--home", str(demo_home), "--out", out, *flags]) == 2
    assert not Path(out).exists()


def test_an_export_the_1_3_checks_refuse_is_not_written(demo_copy, tmp_path, capsys):
    # a tag of the provider's under gpuledger's own key: allocated rows would repeat it in AllocatedTags
    with closing(connect_warehouse(demo_copy)) as warehouse:
        warehouse.execute(
            'UPDATE focus.cost_rows SET Tags = \'{"gpuledger/team": "vision"}\''
            " WHERE x_SourceLineItemId ="
            " (SELECT min(x_SourceLineItemId) FROM allocation.cost_split WHERE job_id IS NOT NULL)"
        )
    out = tmp_path / "allocated.parquet"
    assert (
        main(["export-focus", "--home", str(demo_copy), "--out", str(out), "--focus-version", "1.3", "--allocated"])
        == 1
    )
    err = capsys.readouterr().err
    assert "FOCUS 1.3 check" in err and "not written" in err
    assert not out.exists()


USE_CASES = REPO / "tests" / "fixtures" / "focus_use_cases"
_PLACEHOLDER = re.compile(r"(\w+)\s*(>=|<=|=|<|>)\s*\?|\?")


def use_case_queries() -> dict[str, tuple[str, str]]:
    """Key -> (slug, SQL) of the FOCUS use-case library's 1.2 queries, with the published fixes and gpuledger's."""
    queries = yaml.safe_load((USE_CASES / "focus_use_cases.yaml").read_text(encoding="utf-8"))
    for fixes in ("focus_use_cases_adjustments.yaml", "gpuledger_adjustments.yaml"):
        for key, fix in yaml.safe_load((USE_CASES / fixes).read_text(encoding="utf-8")).items():
            queries[key] = queries[key] | fix
    return {key: (query["slug"], query["sql"]) for key, query in queries.items() if "v1.2" in query["focus_versions"]}


def _parameters(con: duckdb.DuckDBPyConnection, sql: str) -> list[object]:
    """Each ``?`` bound by the column it is compared with: a period bound to the demo's two months, any other column
    to its most frequent value in the export."""
    values: list[object] = []
    for match in _PLACEHOLDER.finditer(sql):
        column, operator = match.group(1), match.group(2)
        if column is None or "Period" in column or column.endswith(("Start", "End")):
            values.append("2026-10-01" if operator in (">=", ">", None) else "2026-12-01")
        else:
            (value,) = con.execute(
                f"SELECT {quote_ident(column)} FROM focus_data_table GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
            ).fetchone()
            values.append(value)
    return values


def _run_use_cases(con: duckdb.DuckDBPyConnection, export: str) -> dict[str, object]:
    con.execute(f"CREATE OR REPLACE VIEW focus_data_table AS SELECT * FROM {export}")
    results = {}
    for slug, sql in use_case_queries().values():
        rows = con.execute(sql, _parameters(con, sql)).fetchall()
        # a LIMIT without a total order picks any rows: only how many; DOUBLE sums depend on the order rows are added
        # in: compared to 9 significant digits, in a fixed row order
        limited = re.search(r"\bLIMIT\b", sql, re.IGNORECASE) is not None
        results[slug] = len(rows) if limited else sorted(tuple(_comparable(v) for v in row) for row in rows)
    return results


def _comparable(value: object) -> str:
    return f"{value:.9g}" if isinstance(value, float) else str(value)


def test_the_focus_use_case_library_runs_on_the_1_2_and_the_1_3_export_alike(con):
    on_1_2 = _run_use_cases(con, "v1_2")
    assert len(on_1_2) == 53
    assert sum(1 for rows in on_1_2.values() if rows) >= 36  # the others ask for what the demo has none of
    assert _run_use_cases(con, "v1_3") == on_1_2
