"""The month close through Dagster: a closed month's statement issued, published and rendered as the named job."""

from __future__ import annotations

import pytest
from dagster import AssetKey, DagsterInstance, RunsFilter

from pipelines.runner import RunFailed, close_month


def test_closing_a_month_issues_publishes_and_renders_it_under_the_month_close_job(demo_copy):
    close_month(demo_copy, "2026-10")
    assert (demo_copy / "reports" / "2026-10" / "v1" / "statement.pdf").exists()
    with DagsterInstance.from_config(str(demo_copy / "dagster")) as instance:
        assert {run.job_name for run in instance.get_runs(RunsFilter())} == {"month_close"}
        statements = instance.get_latest_materialization_event(AssetKey(["chargeback", "statements"]))
        published = instance.get_latest_materialization_event(AssetKey(["publish", "analyst_duckdb"]))
        report = instance.get_latest_materialization_event(AssetKey(["reports", "chargeback_report"]))
    assert statements is not None and published is not None and report is not None
    assert statements.asset_materialization.partition == "2026-10"
    assert statements.asset_materialization.metadata["statements_in_warehouse"].value == 1
    # the file published after the statement was issued counts it
    assert published.asset_materialization.metadata["rows"].value["chargeback.statements"] == 1
    assert "statement.pdf" in report.asset_materialization.metadata["files"].value


def test_an_open_month_is_not_closed(demo_copy):
    with pytest.raises(RunFailed, match="billing month 2026-11 is open until"):
        close_month(demo_copy, "2026-11")
    assert not (demo_copy / "reports" / "2026-11").exists()
