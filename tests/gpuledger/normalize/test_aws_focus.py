"""AWS FOCUS 1.0 / 1.2 exports -> FOCUS 1.2: passthrough with upgrade, totals unchanged."""

from __future__ import annotations

import pytest

from gpuledger.gates.checks import run_checks
from gpuledger.gates.load import load_delivery
from gpuledger.normalize.focus_passthrough import ADDED_IN
from gpuledger.warehouse.home import open_warehouse
from models.delivery import Delivery
from pipelines.deliveries import deliveries_for, load_month
from tests.fixtures.cur_cases import EXPECTED_BILLED, EXPECTED_EFFECTIVE, every_line_item_type, write_cur1_csv

# Columns FOCUS 1.1 and 1.2 added; a FOCUS_1_0_AWS export has none of them.
NEWER_THAN_1_0 = [name for names in ADDED_IN.values() for name in names]


@pytest.fixture
def aws_focus_export(tmp_path):
    """A FOCUS export as AWS writes it: AWS's issuer name, its x_ columns, Tags as a map, costs as doubles."""
    source_home = tmp_path / "source"
    with open_warehouse(source_home) as con:
        load_delivery(con, Delivery("aws-cur1", (write_cur1_csv(tmp_path / "cur.csv", every_line_item_type()),)))
        con.execute(
            "CREATE TEMP TABLE export AS SELECT * EXCLUDE (Tags, InvoiceIssuerName, x_SourceFormat, x_DeliveryId,"
            " x_SourceFile, x_SourceLineItemId, x_SourceLineItemType, x_IngestedAt, x_InstanceType)"
            " REPLACE (CAST(BilledCost AS DOUBLE) AS BilledCost, CAST(EffectiveCost AS DOUBLE) AS EffectiveCost),"
            " 'Amazon Web Services, Inc.' AS InvoiceIssuerName,"
            " CAST(coalesce(CAST(Tags AS JSON), '{}') AS MAP(VARCHAR, VARCHAR)) AS Tags FROM focus.costs"
        )
        v12 = tmp_path / "focus12.parquet"
        v10 = tmp_path / "focus10.parquet"
        con.table("export").write_parquet(str(v12))
        con.sql(f"SELECT * EXCLUDE ({', '.join(NEWER_THAN_1_0)}) FROM export").write_parquet(str(v10))
    return {"1.2": v12, "1.0": v10}


@pytest.mark.parametrize("version", ["1.2", "1.0"])
def test_aws_focus_export_is_upgraded_and_reconciles(con, aws_focus_export, version):
    result = load_delivery(con, Delivery("aws-focus", (aws_focus_export[version],)))
    (only,) = result.slices
    assert (only.billed_cost, only.effective_cost) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
    assert [r.check for r in run_checks(con) if not r.passed] == []
    formats = con.execute("SELECT DISTINCT x_SourceFormat, InvoiceIssuerName FROM focus.costs").fetchall()
    assert formats == [(f"aws-focus-{version}", "AWS")]
    tags = con.execute('SELECT count(*) FROM focus.costs WHERE Tags LIKE \'%"team":"llm"%\'').fetchone()
    assert tags == (1,)


def test_a_configured_aws_focus_folder_of_month_files_loads(con, home, aws_focus_export):
    month = home / "exports" / "focus" / "2026-11"
    month.mkdir(parents=True)
    file = month / "part-0.parquet"
    file.write_bytes(aws_focus_export["1.2"].read_bytes())
    (home / "gpuledger.toml").write_text(
        '[[sources]]\nname = "aws"\nformat = "aws-focus"\npath = "exports/focus"\n', encoding="utf-8"
    )
    (delivery,) = deliveries_for(home, "aws", "2026-11")
    assert (delivery.files, delivery.billing_period, delivery.source_name) == ((file,), "2026-11", "aws")
    (result,) = load_month(con, home, "aws", "2026-11")
    (only,) = result.slices
    assert (only.billed_cost, only.effective_cost) == (EXPECTED_BILLED, EXPECTED_EFFECTIVE)
