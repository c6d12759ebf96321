"""The Dagster code location loads, and its partitions and checks are the ones the pipeline relies on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dagster import AssetKey

from pipelines.definitions import BILLING_MONTHS, INGESTION_PARTITIONS, defs, ingestion_partition_key

REPO = Path(__file__).resolve().parents[2]


def test_dagster_cli_validates_the_definitions(tmp_path):
    env = os.environ | {"DAGSTER_HOME": str(tmp_path)}
    (tmp_path / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    dagster = Path(sys.executable).parent / "dagster"
    result = subprocess.run(
        [str(dagster), "definitions", "validate", "-m", "pipelines.definitions"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed validation" in result.stdout + result.stderr


def test_focus_asset_is_partitioned_by_month_and_provider_with_its_checks():
    graph = defs.resolve_asset_graph()
    key = AssetKey(["focus", "costs"])
    assert graph.get(key).partitions_def == INGESTION_PARTITIONS
    checks = {check.name for check in graph.get_check_keys_for_assets([key])}
    assert checks == {"focus_conformance", "source_reconciliation"}
    keys = INGESTION_PARTITIONS.get_partition_keys()
    assert ingestion_partition_key("2026-11", "aws") in keys


def test_allocation_and_showback_are_monthly_after_focus_with_the_split_check():
    graph = defs.resolve_asset_graph()
    split = AssetKey(["allocation", "cost_split"])
    assert graph.get(split).partitions_def == BILLING_MONTHS
    assert AssetKey(["focus", "costs"]) in graph.get(split).parent_keys
    for name in ("team_month", "job_costs", "idle_by_hour_of_week"):
        assert graph.get(AssetKey(["showback", name])).parent_keys == {split}
    assert {check.name for check in graph.get_check_keys_for_assets([split])} == {"split_reconciliation"}
