"""What makes a partition stale beyond its own inputs and the code (tests/gpuledger/warehouse/test_fingerprints.py);
what does not: the home's place (a home moved, copied or restored elsewhere with its run history skips what it did)."""

from __future__ import annotations

import os
import shutil
from contextlib import closing
from pathlib import Path

import pytest
from dagster import DagsterInstance

from gpuledger.warehouse.home import open_warehouse
from models.config import load_config
from pipelines.deliveries import deliveries_for
from pipelines.inputs import allocation_inputs, ingestion_inputs
from pipelines.runner import run_pipeline


def _home_with_a_delivery(home: Path) -> Path:
    (home / "gpuledger.toml").parent.mkdir(parents=True)
    (home / "gpuledger.toml").write_text(
        '[[sources]]\nname = "cw"\nformat = "focus"\npath = "exports"\n', encoding="utf-8"
    )
    export = home / "exports" / "2026-10" / "focus-2026-10.csv"
    export.parent.mkdir(parents=True)
    export.write_text("BilledCost\n1\n", encoding="utf-8")
    return home


def _ingestion(home: Path) -> str:
    return ingestion_inputs(home, "2026-10", "focus", deliveries_for(home, "focus"), [])


def test_a_copied_home_has_its_fingerprints_unless_it_shares_its_run_history_with_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home = _home_with_a_delivery(tmp_path / "home")
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(home, copy, symlinks=True)  # modification times kept, as cp -a and a restore do
    assert _ingestion(copy) == _ingestion(home)
    # one $DAGSTER_HOME for both: a run of one must not make the other skip (its warehouse may lack the delivery)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "shared-dagster"))
    assert _ingestion(copy) != _ingestion(home)


@pytest.mark.parametrize(
    ("change", "reloads"),
    [
        ('[teams.accounts]\n"123" = "renamed-team"\n', False),
        ("[allocation]\nidle_threshold = 0.2\n", False),
        ('[reporting]\ncurrency = "EUR"\n', False),
        ('[[sources]]\nname = "aws"\nformat = "aws-cur2"\npath = "aws"\n', False),  # another provider's
        ('[[sources]]\nname = "oci"\nformat = "focus"\npath = "oci"\n', True),  # the provider's own
        ("[ingest]\nstrict = true\n", True),
        ("[months.close_after_days]\nfocus = 3\n", True),
        ("[something_new]\nkey = 1\n", True),  # unknown: counted, a skip must never be wrong
    ],
)
def test_a_load_is_stale_only_when_what_loading_reads_of_the_configuration_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str, reloads: bool
):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home = _home_with_a_delivery(tmp_path / "home")
    for folder in ("aws", "oci"):  # the export folders of the sources a change adds
        (home / folder).mkdir()
    before = _ingestion(home)
    with (home / "gpuledger.toml").open("a", encoding="utf-8") as config:
        config.write(change)
    assert (_ingestion(home) != before) is reloads


def test_a_rewritten_telemetry_file_makes_every_month_s_split_stale_and_a_moved_home_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home = _home_with_a_delivery(tmp_path / "home")
    with (home / "gpuledger.toml").open("a", encoding="utf-8") as config:
        config.write('[[telemetry]]\nname = "lab"\nkind = "files"\ncluster = "c1"\njobs = "telemetry/jobs.csv"\n')
    jobs = home / "telemetry" / "jobs.csv"
    jobs.parent.mkdir()
    jobs.write_text("job_id,account,nodes,gpu_count,start,end,state\n", encoding="utf-8")

    def split_inputs(at: Path) -> str | None:
        with closing(open_warehouse(at)) as con:
            return allocation_inputs(con, at, load_config(at), "2026-10")

    before = split_inputs(home)
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(home, copy, symlinks=True)  # modification times kept, as cp -a and a restore do
    assert split_inputs(copy) == before
    stat = jobs.stat()
    os.utime(jobs, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # the same export written again
    assert split_inputs(home) != before


def test_a_home_copied_with_its_run_history_skips_everything_it_already_did(
    demo_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    settled = run_pipeline(demo_copy)  # the demo's month close published last, from these inputs: nothing is new
    assert settled.partitions == []
    every = sorted(settled.skipped)
    assert len(every) == 4 * 2 + 2 + 1  # the demo's providers and months, each month's split, the publish
    copy = tmp_path / "restored" / "gpuledger-home"
    shutil.copytree(demo_copy, copy, symlinks=True)  # modification times kept, as cp -a and a restore do
    with DagsterInstance.from_config(str(copy / "dagster")) as instance:
        runs_before = instance.get_runs_count()
    capsys.readouterr()
    copied = run_pipeline(copy)
    assert copied.partitions == [] and sorted(copied.skipped) == every
    printed = capsys.readouterr().out.splitlines()
    assert [line for line in printed if line.endswith(" ...")] == []  # nothing observed, loaded, split or published
    assert len([line for line in printed if line.endswith(", skipped")]) == len(every)
    with DagsterInstance.from_config(str(copy / "dagster")) as instance:
        assert instance.get_runs_count() == runs_before
