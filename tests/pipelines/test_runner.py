"""The nightly run and the month close through Dagster: partitions whose inputs did not change are skipped; a closed
month's statement is issued, published and rendered as the named job."""

from __future__ import annotations

from contextlib import closing

import duckdb
import pytest
from dagster import AssetKey, DagsterInstance, RunsFilter

from gpuledger.warehouse.home import open_warehouse
from pipelines.cli import main
from pipelines.runner import RunFailed, close_month, run_pipeline


def test_closing_a_month_issues_publishes_and_renders_it_under_the_month_close_job(demo_copy_cold):
    close_month(demo_copy_cold, "2026-10")
    assert (demo_copy_cold / "reports" / "2026-10" / "v1" / "statement.pdf").exists()
    with DagsterInstance.from_config(str(demo_copy_cold / "dagster")) as instance:
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


def test_a_run_with_nothing_new_skips_everything_and_a_new_delivery_reruns_only_its_month(demo_copy_cold, capsys):
    first = run_pipeline(demo_copy_cold)  # the copy has no Dagster history: every partition runs
    assert first.skipped == [] and ("", "publishing") in first.partitions
    again = run_pipeline(demo_copy_cold)
    assert again.partitions == [] and again.skipped == first.partitions
    assert "publishing: inputs unchanged since run" in capsys.readouterr().out

    # a new delivery of one month (its last row dropped): that partition, its month's split and the publish run
    export = demo_copy_cold / "exports" / "coreweave" / "2026-11" / "coreweave-focus-2026-11.csv"
    export.write_text("".join(export.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    changed = run_pipeline(demo_copy_cold)
    assert changed.partitions == [("2026-11", "focus"), ("2026-11", "allocation"), ("", "publishing")]
    assert ("2026-10", "allocation") in changed.skipped
    with closing(open_warehouse(demo_copy_cold)) as con:
        rows = con.execute(
            "SELECT count(*) FROM focus.costs WHERE ProviderName = 'CoreWeave' AND x_BillingMonth = DATE '2026-11-01'"
        ).fetchone()
    with duckdb.connect(str(demo_copy_cold / "analyst.duckdb"), read_only=True) as analyst:
        published = analyst.execute(
            "SELECT count(*) FROM focus.costs WHERE ProviderName = 'CoreWeave' AND x_BillingMonth = DATE '2026-11-01'"
        ).fetchone()
    assert rows == published

    # the replaced delivery's rows are still stored, invisible: the nightly vacuum keeps rows younger than its lease
    def stored_and_visible(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
        counts = con.execute("SELECT (SELECT count(*) FROM focus.cost_rows), (SELECT count(*) FROM focus.costs)")
        return counts.fetchone()  # type: ignore[return-value]

    with closing(open_warehouse(demo_copy_cold)) as con:
        stored, visible = stored_and_visible(con)
    assert stored == visible + rows[0] + 1  # the earlier CoreWeave 2026-11 delivery had one row more
    capsys.readouterr()
    assert main(["vacuum", "--home", str(demo_copy_cold), "--lease-minutes", "0"]) == 0
    assert capsys.readouterr().out.startswith(f"removed {rows[0] + 1:,} invisible rows (1 slices of 1 deliveries)")
    with closing(open_warehouse(demo_copy_cold)) as con:
        assert stored_and_visible(con) == (visible, visible)
        (left,) = con.execute("SELECT count(DISTINCT delivery_id) FROM meta.source_totals").fetchone()
        assert left == con.execute("SELECT count(DISTINCT delivery_id) FROM meta.slices").fetchone()[0]
    assert run_pipeline(demo_copy_cold).partitions == []  # nothing a reader sees changed


def test_an_unreachable_remote_source_fails_itself_not_the_night(demo_copy, monkeypatch, capsys):
    """One remote source that could not be synced ended the run before the local sources and telemetry loaded."""
    for name, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_MAX_ATTEMPTS": "1"}.items():
        monkeypatch.setenv(name, value)
    config = demo_copy / "gpuledger.toml"
    offline = (
        '\n[[sources]]\nname = "offline-cur2"\nformat = "aws-cur2"\n\n[sources.s3]\nbucket = "billing"\n'
        'prefix = "cur2"\nregion = "us-east-1"\nendpoint_url = "http://127.0.0.1:9"\n'  # nothing listens on port 9
    )
    config.write_text(config.read_text(encoding="utf-8") + offline, encoding="utf-8")
    export = demo_copy / "exports" / "coreweave" / "2026-11" / "coreweave-focus-2026-11.csv"
    export.write_text("".join(export.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", "--home", str(demo_copy)]) == 1
    out, err = capsys.readouterr()
    assert err.strip().splitlines()[-1].startswith("gpuledger: error: source 'offline-cur2' not synced")
    assert "loading focus 2026-11" in out and "publishing" in out  # the local source's new delivery went on
    with duckdb.connect(str(demo_copy / "analyst.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT count(*) FROM focus.costs WHERE ProviderName = 'CoreWeave'").fetchone()[0]
    with closing(open_warehouse(demo_copy)) as con:
        assert con.execute("SELECT count(*) FROM focus.costs WHERE ProviderName = 'CoreWeave'").fetchone()[0] == rows
    assert main(["status", "--home", str(demo_copy)]) == 1
    assert "source 'offline-cur2' not synced" in capsys.readouterr().out
