"""The Dagster code location loads, and its partitions and checks are the ones the pipeline relies on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import (
    AssetKey,
    DagsterInstance,
    DagsterRunStatus,
    DefaultScheduleStatus,
    build_run_status_sensor_context,
    build_schedule_context,
)

from pipelines.definitions import (
    BILLING_MONTHS,
    INGESTION_PARTITIONS,
    WarehouseResource,
    defs,
    ingestion_partition_key,
    nightly_sync,
    refresh_sensor,
)
from tests.fixtures.paths import REPO


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
    assert checks == {"focus_conformance", "source_reconciliation", "held_deliveries"}
    keys = INGESTION_PARTITIONS.get_partition_keys()
    assert ingestion_partition_key("2026-11", "aws") in keys


def test_allocation_and_showback_are_monthly_after_focus_with_the_split_and_attribution_checks():
    graph = defs.resolve_asset_graph()
    split = AssetKey(["allocation", "cost_split"])
    assert graph.get(split).partitions_def == BILLING_MONTHS
    assert AssetKey(["focus", "costs"]) in graph.get(split).parent_keys
    checks = {check.name for check in graph.get_check_keys_for_assets([split])}
    assert checks == {"split_reconciliation", "gpu_attribution"}
    for name in ("team_month", "user_month", "job_costs", "idle_by_hour_of_week"):
        assert graph.get(AssetKey(["showback", name])).parent_keys == {split}


def test_the_graph_ends_in_chargeback_then_publish_with_the_freshness_check():
    graph = defs.resolve_asset_graph()
    months, analyst = AssetKey(["chargeback", "months"]), AssetKey(["publish", "analyst_duckdb"])
    assert AssetKey(["showback", "team_month"]) in graph.get(months).parent_keys
    assert graph.get(analyst).parent_keys == {months}
    assert {check.name for check in graph.get_check_keys_for_assets([analyst])} == {"source_freshness"}


def test_the_nightly_schedule_runs_at_2_utc_by_default_and_syncs_first():
    nightly = defs.get_schedule_def("nightly")
    assert (nightly.cron_schedule, nightly.execution_timezone, nightly.default_status) == (
        "0 2 * * *",
        "UTC",
        DefaultScheduleStatus.RUNNING,
    )
    (request,) = nightly.evaluate_tick(build_schedule_context()).run_requests
    assert nightly.job_name == "nightly_sync" and request.run_config == {}


@pytest.mark.parametrize("status", [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE])
def test_after_the_nightly_sync_the_open_months_are_refreshed_then_split_then_published(demo_home, status):
    instance = DagsterInstance.ephemeral()
    resources = {"warehouse": WarehouseResource(home=str(demo_home))}
    finished = nightly_sync.execute_in_process(instance=instance, resources=resources)  # the demo has no remote
    refresh = refresh_sensor(status)
    assert refresh.name == f"refresh_after_nightly_sync_{status.value.lower()}"
    context = build_run_status_sensor_context(
        sensor_name=refresh.name,
        dagster_instance=instance,
        dagster_run=finished.dagster_run,
        dagster_event=finished.get_run_success_event(),
        resources=resources,
    )
    requests = refresh(context)
    # tests pin the clock at 2026-12-02: October is closed, November (AWS restates to 12-15) and December are open
    assert [(r.job_name, r.partition_key) for r in requests] == [
        *(
            ("focus_ingestion", ingestion_partition_key(month, provider))
            for month in ("2026-11", "2026-12")
            for provider in ("aws", "azure", "focus", "gcp")  # the demo's sources, CoreWeave's FOCUS files among them
        ),
        ("monthly_allocation", "2026-11-01"),
        ("monthly_allocation", "2026-12-01"),
        ("publishing", None),
    ]
    assert all(r.run_key and r.run_key.startswith(f"nightly:{finished.run_id}:") for r in requests)
