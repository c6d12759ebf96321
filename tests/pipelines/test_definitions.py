"""The Dagster code location loads, tells the pipeline's story (groups in flow order, sources upstream, no dead end),
and its partitions, blocking checks and jobs are the ones the pipeline relies on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import (
    AssetKey,
    DagsterInstance,
    DagsterRunStatus,
    DefaultScheduleStatus,
    RunsFilter,
    build_run_status_sensor_context,
    build_schedule_context,
)

from pipelines.batches import ingestion_partition_key
from pipelines.definitions import (
    BILLING_MONTHS,
    INGESTION_PARTITIONS,
    WarehouseResource,
    build_definitions,
    defs,
    nightly_sync,
    refresh_sensor,
)
from tests.fixtures.paths import REPO

EXPORTS = ("helios_azure_mca", "helios_coreweave_focus", "helios_cur2", "helios_gcp_billing", "helios_legacy_cur")
TELEMETRY = ("helios_azure", "helios_coreweave", "helios_eks", "helios_gcp", "helios_slurm_dcgm", "helios_slurm_sacct")
SHOWBACK = ("showback/idle_by_hour_of_week", "showback/job_costs", "showback/team_month", "showback/user_month")
# asset -> (group, parents): the README's flow, sources -> normalize -> telemetry -> allocation -> showback ->
# advice -> chargeback -> publish -> reports
DEMO_GRAPH = {
    **{f"sources/exports/{name}": ("sources", set()) for name in EXPORTS},
    **{f"sources/telemetry/{name}": ("sources", set()) for name in TELEMETRY},
    "focus/costs": ("normalize", {f"sources/exports/{name}" for name in EXPORTS}),
    "telemetry/gpu_activity": ("telemetry", {f"sources/telemetry/{name}" for name in TELEMETRY}),
    "allocation/cost_split": ("allocation", {"focus/costs", "telemetry/gpu_activity"}),
    **{key: ("showback", {"allocation/cost_split"}) for key in SHOWBACK},
    "advice/opportunities": ("advice", set(SHOWBACK)),
    "chargeback/months": ("chargeback", {"showback/team_month"}),
    "chargeback/statements": ("chargeback", {"chargeback/months"}),
    "publish/analyst_duckdb": (
        "publish",
        {*SHOWBACK, "advice/opportunities", "chargeback/months", "chargeback/statements"},
    ),
    "publish/warehouse_vacuum": ("publish", {"publish/analyst_duckdb"}),
    "reports/chargeback_report": ("reports", {"chargeback/statements", "publish/analyst_duckdb"}),
}
# (asset, check) -> blocking: the ERROR checks stop what depends on their asset, the warnings do not
DEMO_CHECKS = {
    ("focus/costs", "focus_conformance"): True,
    ("focus/costs", "source_reconciliation"): True,
    ("focus/costs", "held_deliveries"): False,
    ("focus/costs", "refused_deliveries"): False,
    ("allocation/cost_split", "split_reconciliation"): True,
    ("allocation/cost_split", "gpu_attribution"): False,
    ("publish/analyst_duckdb", "source_freshness"): False,
}


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


def test_the_demo_graph_reads_like_the_flow_with_sources_upstream_and_no_dead_end(demo_home):
    graph = build_definitions(demo_home).resolve_asset_graph()
    nodes = {key.to_user_string(): graph.get(key) for key in graph.get_all_asset_keys()}
    assert {
        name: (node.group_name, {parent.to_user_string() for parent in node.parent_keys})
        for name, node in nodes.items()
    } == DEMO_GRAPH
    assert {name for name, node in nodes.items() if node.is_observable} == {
        name for name in DEMO_GRAPH if name.startswith("sources/")
    }
    leaves = {name for name, node in nodes.items() if not node.child_keys}
    # the reports end the flow; the vacuum is the warehouse's housekeeping after the publish, read by nobody
    assert leaves == {"reports/chargeback_report", "publish/warehouse_vacuum"}


def test_the_checks_that_guard_money_block_and_the_warnings_do_not(demo_home):
    graph = build_definitions(demo_home).resolve_asset_graph()
    specs = {(key.asset_key.to_user_string(), key.name): graph.get_check_spec(key) for key in graph.asset_check_keys}
    assert {key: spec.blocking for key, spec in specs.items()} == DEMO_CHECKS


def test_the_jobs_are_named_for_the_nightly_run_and_the_month_close(demo_home):
    definitions = build_definitions(demo_home)
    jobs = {job.name for job in definitions.resolve_all_job_defs()} - {"__ASSET_JOB"}
    assert jobs == {
        "observe_sources", "focus_ingestion", "monthly_allocation", "publishing", "month_close", "nightly_sync",
    }  # fmt: skip
    month_close = definitions.resolve_job_def("month_close")
    assert {key.to_user_string() for key in month_close.asset_layer.executable_asset_keys} == {
        "chargeback/statements",
        "publish/analyst_duckdb",
        "reports/chargeback_report",
    }


def test_a_home_without_configuration_has_no_source_assets_nor_their_job(tmp_path):
    definitions = build_definitions(tmp_path)
    graph = definitions.resolve_asset_graph()
    assert not [key for key in graph.get_all_asset_keys() if key.path[0] == "sources"]
    assert "observe_sources" not in {job.name for job in definitions.resolve_all_job_defs()}


def test_focus_asset_is_partitioned_by_month_and_provider_and_the_split_by_month():
    graph = defs.resolve_asset_graph()
    assert graph.get(AssetKey(["focus", "costs"])).partitions_def == INGESTION_PARTITIONS
    for key in (["telemetry", "gpu_activity"], ["allocation", "cost_split"], ["chargeback", "statements"]):
        assert graph.get(AssetKey(key)).partitions_def == BILLING_MONTHS
    assert ingestion_partition_key("2026-11", "aws").keys_by_dimension == {"month": "2026-11", "provider": "aws"}


def test_the_demo_run_records_only_months_with_data_and_its_runs_under_the_named_jobs(demo_run):
    home, output = demo_run
    with DagsterInstance.from_config(str(home / "dagster")) as instance:
        assert instance.get_dynamic_partitions(BILLING_MONTHS.name) == ["2026-10", "2026-11"]
        jobs = {run.job_name for run in instance.get_runs(RunsFilter())}
    assert {"observe_sources", "focus_ingestion", "monthly_allocation", "publishing", "month_close"} <= jobs
    assert "__ephemeral_asset_job__" not in jobs
    # one line as each stage starts, in flow order
    stage = re.compile(r"(syncing|observing|loading|splitting|publishing|closing)\b.* \.\.\.")
    starts = [line for line in output.splitlines() if stage.fullmatch(line)]
    assert starts == [
        "observing sources ...",
        *(f"loading {p} {m} ..." for m in ("2026-10", "2026-11") for p in ("aws", "azure", "focus", "gcp")),
        "splitting 2026-10 ...",
        "splitting 2026-11 ...",
        "publishing ...",
        "closing 2026-10 ...",  # the demo closes its closed month through Dagster
    ]


def test_the_nightly_schedule_runs_at_2_utc_by_default_and_syncs_first():
    nightly = defs.resolve_schedule_def("nightly")
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
    assert instance.get_dynamic_partitions(BILLING_MONTHS.name) == ["2026-11", "2026-12"]
    assert [(r.job_name, r.partition_key) for r in requests] == [
        *(
            ("focus_ingestion", ingestion_partition_key(month, provider))
            for month in ("2026-11", "2026-12")
            for provider in ("aws", "azure", "focus", "gcp")  # the demo's sources, CoreWeave's FOCUS files among them
        ),
    ]  # the barrier then requests the split and the publish (tests/pipelines/test_batches.py)
    assert all(r.run_key and r.run_key.startswith(f"nightly:{finished.run_id}:") for r in requests)
