"""The official FOCUS validator gate (gpuledger.gates.focus_validator, scripts/validate-focus).

These tests really run focus-validator 2.2.1 from .venv-validator (installed by
`make install-validator`; the session fixture installs it from the hashed lock when missing).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from gpuledger.gates import focus_validator as fv
from tests.fixtures.paths import REPO

pytestmark = [pytest.mark.serial, pytest.mark.slow]

# FOCUS 1.2 Cost and Usage, all 57 columns, with the explicit types the validator expects.
DEC = "DECIMAL(38,10)"
TS = "TIMESTAMPTZ"
STR = "VARCHAR"
FOCUS_1_2_COLUMNS: list[tuple[str, str]] = [
    ("AvailabilityZone", STR),
    ("BilledCost", DEC),
    ("BillingAccountId", STR),
    ("BillingAccountName", STR),
    ("BillingAccountType", STR),
    ("BillingCurrency", STR),
    ("BillingPeriodEnd", TS),
    ("BillingPeriodStart", TS),
    ("CapacityReservationId", STR),
    ("CapacityReservationStatus", STR),
    ("ChargeCategory", STR),
    ("ChargeClass", STR),
    ("ChargeDescription", STR),
    ("ChargeFrequency", STR),
    ("ChargePeriodEnd", TS),
    ("ChargePeriodStart", TS),
    ("CommitmentDiscountCategory", STR),
    ("CommitmentDiscountId", STR),
    ("CommitmentDiscountName", STR),
    ("CommitmentDiscountQuantity", DEC),
    ("CommitmentDiscountStatus", STR),
    ("CommitmentDiscountType", STR),
    ("CommitmentDiscountUnit", STR),
    ("ConsumedQuantity", DEC),
    ("ConsumedUnit", STR),
    ("ContractedCost", DEC),
    ("ContractedUnitPrice", DEC),
    ("EffectiveCost", DEC),
    ("InvoiceId", STR),
    ("InvoiceIssuerName", STR),
    ("ListCost", DEC),
    ("ListUnitPrice", DEC),
    ("PricingCategory", STR),
    ("PricingCurrency", STR),
    ("PricingCurrencyContractedUnitPrice", DEC),
    ("PricingCurrencyEffectiveCost", DEC),
    ("PricingCurrencyListUnitPrice", DEC),
    ("PricingQuantity", DEC),
    ("PricingUnit", STR),
    ("ProviderName", STR),
    ("PublisherName", STR),
    ("RegionId", STR),
    ("RegionName", STR),
    ("ResourceId", STR),
    ("ResourceName", STR),
    ("ResourceType", STR),
    ("ServiceCategory", STR),
    ("ServiceName", STR),
    ("ServiceSubcategory", STR),
    ("SkuId", STR),
    ("SkuMeter", STR),
    ("SkuPriceDetails", STR),
    ("SkuPriceId", STR),
    ("SubAccountId", STR),
    ("SubAccountName", STR),
    ("SubAccountType", STR),
    ("Tags", STR),
]

# One provider, one payer account, one billing period; ProviderName == InvoiceIssuerName
# (a first-party charge, see reference focus-1.2.md section 4.9).
_COMMON: dict[str, Any] = {
    "BillingAccountId": "123456789012",
    "BillingAccountName": "Acme Payer",
    "BillingAccountType": "Billing Account",
    "BillingCurrency": "USD",
    "BillingPeriodStart": "2026-10-01 00:00:00+00",
    "BillingPeriodEnd": "2026-11-01 00:00:00+00",
    "ChargePeriodStart": "2026-10-03 00:00:00+00",
    "ChargePeriodEnd": "2026-10-04 00:00:00+00",
    "InvoiceId": "INV-202610-0001",
    "InvoiceIssuerName": "Acme Cloud",
    "ProviderName": "Acme Cloud",
    "PublisherName": "Acme Cloud",
    "PricingCurrency": "USD",
    "RegionId": "us-east-1",
    "RegionName": "US East (N. Virginia)",
    "ServiceCategory": "Compute",
    "ServiceSubcategory": "Virtual Machines",
    "ServiceName": "Acme Compute",
    "SubAccountId": "210987654321",
    "SubAccountName": "ml-research",
    "SubAccountType": "Linked Account",
}

_GPU_NODE: dict[str, Any] = {
    "AvailabilityZone": "us-east-1a",
    "ChargeDescription": "GPU instance hours (8x H100)",
    "ChargeFrequency": "Usage-Based",
    "ConsumedQuantity": "24",
    "ConsumedUnit": "Hours",
    "PricingQuantity": "24",
    "PricingUnit": "Hours",
    "ResourceType": "Virtual Machine",
    "SkuId": "SKU-GPU8-H100",
    "SkuMeter": "Instance Hours",
    "SkuPriceDetails": '{"GpuCount": 8, "InstanceType": "gpu8.h100"}',
    "Tags": '{"team": "ml", "job": "llm-pretrain"}',
}


def _on_demand_usage(day: int) -> dict[str, Any]:
    """24 on-demand GPU hours at 98.32: List = Contracted = Billed = Effective = 2359.68."""
    return {
        **_GPU_NODE,
        "ChargeCategory": "Usage",
        "ChargePeriodStart": f"2026-10-{day:02d} 00:00:00+00",
        "ChargePeriodEnd": f"2026-10-{day + 1:02d} 00:00:00+00",
        "PricingCategory": "Standard",
        "SkuPriceId": "SKU-GPU8-H100-OD-USE1",
        "ListUnitPrice": "98.32",
        "ContractedUnitPrice": "98.32",
        "PricingCurrencyListUnitPrice": "98.32",
        "PricingCurrencyContractedUnitPrice": "98.32",
        "ListCost": "2359.68",
        "ContractedCost": "2359.68",
        "BilledCost": "2359.68",
        "EffectiveCost": "2359.68",
        "PricingCurrencyEffectiveCost": "2359.68",
        "ResourceId": f"i-0a1b2c3d4e5f{day:05d}",
        "ResourceName": f"train-node-{day:02d}",
    }


_COMMITMENT: dict[str, Any] = {
    "CommitmentDiscountId": "ri-gpu8-0001",
    "CommitmentDiscountCategory": "Usage",
    "CommitmentDiscountName": "gpu-reservation-october",
    "CommitmentDiscountType": "Reserved Instance",
    "CommitmentDiscountUnit": "Hours",
}

_ROWS: list[dict[str, Any]] = [
    # Usage covered by the reservation: billed 0, amortized 24 h x 75.00, inside a capacity reservation.
    {
        **_GPU_NODE,
        **_COMMITMENT,
        "ChargeCategory": "Usage",
        "CommitmentDiscountStatus": "Used",
        "CommitmentDiscountQuantity": "24",
        "CapacityReservationId": "cr-gpu8-0001",
        "CapacityReservationStatus": "Used",
        "PricingCategory": "Committed",
        "SkuPriceId": "SKU-GPU8-H100-RI-USE1",
        "ListUnitPrice": "98.32",
        "ContractedUnitPrice": "75",
        "PricingCurrencyListUnitPrice": "98.32",
        "PricingCurrencyContractedUnitPrice": "75",
        "ListCost": "2359.68",
        "ContractedCost": "1800",
        "BilledCost": "0",
        "EffectiveCost": "1800",
        "PricingCurrencyEffectiveCost": "1800",
        "ResourceId": "i-0a1b2c3d4e5f99999",
        "ResourceName": "train-node-reserved",
    },
    # The all-upfront reservation purchase: 744 h x 75.00 billed, EffectiveCost 0 (amortized above).
    {
        **_COMMITMENT,
        "ChargeCategory": "Purchase",
        "ChargeDescription": "GPU reservation, October, all upfront",
        "ChargeFrequency": "One-Time",
        "ChargePeriodStart": "2026-10-01 00:00:00+00",
        "ChargePeriodEnd": "2026-11-01 00:00:00+00",
        "CommitmentDiscountQuantity": "744",
        "PricingCategory": "Committed",
        "PricingQuantity": "744",
        "PricingUnit": "Hours",
        "SkuId": "SKU-GPU8-H100",
        "SkuMeter": "Reservation",
        "SkuPriceId": "SKU-GPU8-H100-RI-USE1",
        "ListUnitPrice": "98.32",
        "ContractedUnitPrice": "75",
        "PricingCurrencyListUnitPrice": "98.32",
        "PricingCurrencyContractedUnitPrice": "75",
        "ListCost": "73150.08",
        "ContractedCost": "55800",
        "BilledCost": "55800",
        "EffectiveCost": "0",
        "PricingCurrencyEffectiveCost": "0",
        "ResourceId": "ri-gpu8-0001",
        "ResourceName": "gpu-reservation-october",
        "ResourceType": "Reserved Instance",
    },
    # Tax: no SKU, price or pricing quantity (TUP rule), same amount in every cost column.
    {
        "ChargeCategory": "Tax",
        "ChargeDescription": "Sales tax",
        "ChargeFrequency": "Recurring",
        "ListCost": "188.77",
        "ContractedCost": "188.77",
        "BilledCost": "188.77",
        "EffectiveCost": "188.77",
        "PricingCurrencyEffectiveCost": "188.77",
    },
    # Credit: unrelated to other charges, EffectiveCost = BilledCost.
    {
        "ChargeCategory": "Credit",
        "ChargeDescription": "Research credits",
        "ChargeFrequency": "One-Time",
        "ListCost": "-100",
        "ContractedCost": "-100",
        "BilledCost": "-100",
        "EffectiveCost": "-100",
        "PricingCurrencyEffectiveCost": "-100",
    },
]


def focus_rows(usage_days: int = 1) -> list[dict[str, Any]]:
    """Usage (on-demand and reserved), Purchase, Tax and Credit rows, all columns filled in."""
    days = [_on_demand_usage(1 + (i % 30)) for i in range(usage_days)]
    return [{name: None for name, _ in FOCUS_1_2_COLUMNS} | _COMMON | row for row in [*days, *_ROWS]]


def write_focus_parquet(path: Path, rows: list[dict[str, Any]]) -> Path:
    """Write rows with the explicit FOCUS 1.2 schema through DuckDB (UTC timestamps)."""
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        ddl = ", ".join(f'"{name}" {sql_type}' for name, sql_type in FOCUS_1_2_COLUMNS)
        con.execute(f"CREATE TABLE focus ({ddl})")
        names = [name for name, _ in FOCUS_1_2_COLUMNS]
        placeholders = ", ".join("?" for _ in names)
        con.executemany(f"INSERT INTO focus VALUES ({placeholders})", [[row[n] for n in names] for row in rows])
        con.execute(f"COPY focus TO '{path}' (FORMAT parquet)")
    finally:
        con.close()
    return path


@pytest.fixture(scope="session")
def valid_parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_focus_parquet(tmp_path_factory.mktemp("focus") / "valid.parquet", focus_rows())


def test_fixture_is_a_consistent_focus_1_2_table(valid_parquet: Path) -> None:
    con = duckdb.connect()
    cols = con.execute(f"DESCRIBE SELECT * FROM '{valid_parquet}'").fetchall()
    assert [c[0] for c in cols] == [name for name, _ in FOCUS_1_2_COLUMNS]
    assert len(cols) == 57
    expected_types = [{TS: "TIMESTAMP WITH TIME ZONE"}.get(t, t) for _, t in FOCUS_1_2_COLUMNS]
    assert [c[1] for c in cols] == expected_types
    categories = {r[0] for r in con.execute(f"SELECT ChargeCategory FROM '{valid_parquet}'").fetchall()}
    assert categories == {"Usage", "Purchase", "Tax", "Credit"}
    # ListCost = ListUnitPrice x PricingQuantity wherever both are present.
    mismatched = con.execute(
        f"SELECT count(*) FROM '{valid_parquet}' WHERE ListUnitPrice IS NOT NULL "
        "AND ListCost <> ListUnitPrice * PricingQuantity"
    ).fetchone()
    assert mismatched == (0,)
    total = con.execute(f"SELECT sum(BilledCost) FROM '{valid_parquet}'").fetchone()
    assert total is not None and total[0] == Decimal("58248.4500000000")


def test_valid_file_has_no_failed_rules(validator_ready: None, valid_parquet: Path, tmp_path: Path) -> None:
    junit = tmp_path / "report.xml"
    result = fv.run_focus_validator(valid_parquet, "ALL", junit_path=junit)
    assert result.failed == {}, result.report()
    assert result.ok
    # The 1.2.0.1 model has 621 rules; the validator reports those reachable for CostAndUsage.
    assert result.total > 500
    assert result.passed > 200
    assert result.skipped < result.total
    assert result.failed_composites == ()
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "0"
    assert int(root.get("tests", "0")) == result.total


@pytest.fixture(scope="session")
def mutated_run(
    validator_ready: None, tmp_path_factory: pytest.TempPathFactory
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """scripts/validate-focus on two bad rows among valid ones: NULL and non-ISO-4217 BillingCurrency."""
    rows = focus_rows()
    rows[1]["BillingCurrency"] = None
    rows[2]["BillingCurrency"] = "XYZ"
    tmp = tmp_path_factory.mktemp("mutated")
    path = write_focus_parquet(tmp / "mutated.parquet", rows)
    junit = tmp / "out" / "report.xml"
    proc = subprocess.run(
        [REPO / "scripts" / "validate-focus", path, "--criteria", "ALL", "--junit", junit],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, junit


def test_mutations_are_reported_as_failed(mutated_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, junit = mutated_run
    result = fv.parse_junit(junit)
    assert set(result.failed) == {"BillingCurrency-C-004-M", "BillingCurrency-C-006-M"}, result.report()
    assert result.failed["BillingCurrency-C-004-M"] == "BillingCurrency MUST NOT be null."
    assert "national currency" in result.failed["BillingCurrency-C-006-M"]
    assert not result.ok
    # Only leaf rules are gated: the parents that fail because of the children are listed apart,
    # although the validator's own count includes them.
    assert {"BillingCurrency-C-000-M", "CostAndUsage-D-000-M"} <= set(result.failed_composites)
    assert int(ET.parse(junit).getroot().get("failures", "0")) > len(result.failed)


def test_script_gates_on_leaf_failures(mutated_run: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, _ = mutated_run
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert re.fullmatch(r"focus-validator: rules=\d+ failed=2 skipped=\d+", lines[0]), proc.stdout
    assert lines[1:] == [
        "  FAILED BillingCurrency-C-004-M: BillingCurrency MUST NOT be null.",
        "  FAILED BillingCurrency-C-006-M: BillingCurrency MUST be expressed in national currency (e.g., USD, EUR).",
    ]


def test_patched_purchase_rule_still_flags_a_commitment_purchase_with_effective_cost(
    validator_ready: None, tmp_path: Path
) -> None:
    rows = focus_rows()
    purchase = next(r for r in rows if r["ChargeCategory"] == "Purchase" and r["CommitmentDiscountId"])
    purchase["EffectiveCost"] = purchase["PricingCurrencyEffectiveCost"] = purchase["BilledCost"]
    result = fv.run_focus_validator(write_focus_parquet(tmp_path / "purchase.parquet", rows), "ALL")
    assert "EffectiveCost-C-005-C" in result.failed, result.report()


def test_script_usage_errors() -> None:
    script = REPO / "scripts" / "validate-focus"
    missing = subprocess.run([script, "/nonexistent.parquet"], capture_output=True, text=True, check=False)
    assert missing.returncode == 1
    assert "no such file" in missing.stderr
    typo = subprocess.run(
        [script, "x.parquet", "--criteria", "TAGGING_SUPORTED"], capture_output=True, text=True, check=False
    )
    assert typo.returncode == 2
    assert "unknown applicability criteria" in typo.stderr


def test_gate_ignores_composites_but_counts_orphans_and_errors(tmp_path: Path) -> None:
    """Parse a hand-written report: composite parents of a failed leaf are not gated."""
    xml = tmp_path / "r.xml"
    xml.write_text(
        """<?xml version='1.0' encoding='utf-8'?>
<testsuites name="FOCUS Validations" tests="5" failures="3" errors="1" skipped="1">
  <testsuite name="Base-Unknown">
    <testcase name="Tags-C-001-M :: None"><error message="boom"/></testcase>
  </testsuite>
  <testsuite name="BillingCurrency-C-000-BillingCurrency">
    <testcase name="BillingCurrency-C-000-M :: Composite">
      <failure name="BillingCurrency-C-000-M" message="x"/></testcase>
    <testcase name="BillingCurrency-C-004-M :: Nullability">
      <failure name="BillingCurrency-C-004-M" message="y"/></testcase>
  </testsuite>
  <testsuite name="SubAccountId-C-000-SubAccountId">
    <testcase name="SubAccountId-C-000-C :: Composite">
      <failure name="SubAccountId-C-000-C" message="z"/></testcase>
    <testcase name="SubAccountId-C-001-M :: Type"><skipped message="s"/></testcase>
  </testsuite>
</testsuites>
"""
    )
    result = fv.parse_junit(xml)
    assert result.total == 5
    assert result.skipped == 1
    assert set(result.failed) == {"Tags-C-001-M", "BillingCurrency-C-004-M", "SubAccountId-C-000-C"}
    assert result.failed["Tags-C-001-M"].startswith("error: boom")
    assert result.failed["BillingCurrency-C-004-M"] == "BillingCurrency MUST NOT be null."
    assert result.failed["SubAccountId-C-000-C"].startswith("composite failed with no failing child rule")
    assert result.failed_composites == ("BillingCurrency-C-000-M",)
    assert result.summary_line() == "focus-validator: rules=5 failed=3 skipped=1"


def test_unknown_criteria_are_rejected() -> None:
    assert fv.normalize_criteria("all") == "ALL"
    assert fv.normalize_criteria(" TAGGING_SUPPORTED , REGION_SUPPORTED") == "TAGGING_SUPPORTED,REGION_SUPPORTED"
    with pytest.raises(ValueError, match="unknown applicability criteria"):
        fv.normalize_criteria("TAGGING_SUPORTED")


def test_vendored_model_matches_patch_script(validator_ready: None) -> None:
    """tools/focus_validator_model/model-1.2.0.1.json is the installed model plus the 3 patches."""
    proc = subprocess.run(
        [
            fv.VENV_DIR / "bin" / "python",
            REPO / "tools" / "focus_validator_model" / "patch_model.py",
            "--check",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_module_imports_only_the_standard_library() -> None:
    """The gate must not need the pipeline's dependencies (it only shells out to .venv-validator)."""
    tree = ast.parse(Path(fv.__file__).read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported - {"__future__"} <= sys.stdlib_module_names
