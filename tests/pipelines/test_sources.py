"""Observing the configured sources: a data version that changes exactly when what a source holds changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dagster import DataVersion

from models.config import SourceConfig, TelemetryConfig
from pipelines.sources import export_observation, export_source_key, telemetry_observation, telemetry_source_key


def _version(observation: object) -> DataVersion:
    version = getattr(observation, "data_version", None)
    assert isinstance(version, DataVersion)
    return version


def test_an_export_source_s_version_changes_with_a_new_or_rewritten_delivery(tmp_path: Path):
    source = SourceConfig(name="gpu-cloud", format="focus", path=tmp_path / "exports")
    october = tmp_path / "exports" / "2026-10" / "focus-2026-10.csv"
    october.parent.mkdir(parents=True)
    october.write_text("BilledCost\n1\n", encoding="utf-8")
    key = export_source_key(source.name)
    assert key.path == ["sources", "exports", "gpu_cloud"]
    first = export_observation(key, source)
    assert first.metadata["deliveries"] == 1 and first.metadata["billing_periods"] == ["2026-10"]
    assert _version(export_observation(key, source)) == _version(first)  # nothing changed
    november = tmp_path / "exports" / "2026-11" / "focus-2026-11.csv"
    november.parent.mkdir()
    november.write_text("BilledCost\n2\n", encoding="utf-8")
    second = export_observation(key, source)
    assert _version(second) != _version(first)
    os.utime(november, ns=(1, 1))  # a restatement rewrites a file in place
    assert _version(export_observation(key, source)) != _version(second)


def test_a_file_telemetry_source_is_versioned_by_its_files_and_a_metrics_server_is_not(tmp_path: Path):
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("job_id\n1\n", encoding="utf-8")
    files = TelemetryConfig(name="eks", kind="files", cluster="eks", paths={"jobs": jobs}, options={})
    first = telemetry_observation(telemetry_source_key(files.name), files)
    assert first.metadata["files"] == 1
    jobs.write_text("job_id\n1\n2\n", encoding="utf-8")
    assert _version(telemetry_observation(telemetry_source_key(files.name), files)) != _version(first)
    server = TelemetryConfig(
        name="dcgm", kind="prometheus", cluster="eks", paths={}, options={"url": "http://127.0.0.1:9090"}
    )
    observed = telemetry_observation(telemetry_source_key(server.name), server)
    assert observed.data_version is None and observed.metadata["url"] == "http://127.0.0.1:9090"


def test_a_source_moved_with_its_home_keeps_its_version(tmp_path: Path):
    home = tmp_path / "home"
    export = home / "exports" / "2026-10" / "focus-2026-10.csv"
    export.parent.mkdir(parents=True)
    export.write_text("BilledCost\n1\n", encoding="utf-8")
    (home / "jobs.csv").write_text("job_id\n1\n", encoding="utf-8")
    moved = tmp_path / "elsewhere" / "home"
    shutil.copytree(home, moved)  # modification times kept, as cp -a and a restore do

    def versions(root: Path) -> tuple[DataVersion, DataVersion]:
        source = SourceConfig(name="gpu-cloud", format="focus", path=root / "exports")
        files = TelemetryConfig(name="eks", kind="files", cluster="eks", paths={"jobs": root / "jobs.csv"}, options={})
        return (
            _version(export_observation(export_source_key(source.name), source)),
            _version(telemetry_observation(telemetry_source_key(files.name), files)),
        )

    assert versions(moved) == versions(home)
