"""Finding complete deliveries in a local mirror of the export bucket."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from connectors.aws.exports import discover_cur1, discover_data_export
from models.errors import InputError
from tests.fixtures.cur_cases import every_line_item_type, write_cur1_csv


def _cur1_period(report: Path, assembly: str, keys: list[str] | None = None) -> Path:
    period = report / "20261101-20261201"
    data = write_cur1_csv(period / assembly / "helios-1.csv.gz", every_line_item_type())
    manifest = {
        "assemblyId": assembly,
        "account": "012345678901",
        "billingPeriod": {"start": "20261101T000000.000Z", "end": "20261201T000000.000Z"},
        "reportKeys": keys if keys is not None else [f"cur/helios/20261101-20261201/{assembly}/helios-1.csv.gz"],
    }
    (period / "helios-Manifest.json").write_text(json.dumps(manifest))
    return data


def test_cur1_manifest_names_the_current_assembly_only(tmp_path):
    report = tmp_path / "bucket" / "cur" / "helios"
    _cur1_period(report, "old-assembly")
    newest = _cur1_period(report, "new-assembly")
    (delivery,) = discover_cur1(report)
    assert delivery.files == (newest,)
    assert (delivery.billing_period, delivery.billing_account_id, delivery.version) == (
        "2026-11",
        "012345678901",
        "new-assembly",
    )


def test_period_without_manifest_is_not_a_delivery(tmp_path):
    report = tmp_path / "helios"
    write_cur1_csv(report / "20261201-20270101" / "a1" / "helios-1.csv.gz", every_line_item_type())
    assert discover_cur1(report) == []


def test_manifest_naming_a_missing_file_is_an_error_naming_the_manifest(tmp_path):
    report = tmp_path / "helios"
    _cur1_period(report, "a1", keys=["cur/helios/20261101-20261201/a1/helios-2.csv.gz"])
    with pytest.raises(InputError, match="does not exist") as caught:
        discover_cur1(report)
    assert caught.value.file.endswith("helios-Manifest.json")


@pytest.mark.parametrize("key", ["cur/helios/../../etc/passwd", "/etc/passwd", "elsewhere/file.csv.gz"])
def test_manifest_keys_outside_the_export_are_rejected(tmp_path, key):
    report = tmp_path / "helios"
    _cur1_period(report, "a1", keys=[key])
    with pytest.raises(InputError, match="outside the export folder"):
        discover_cur1(report)


def test_data_export_uses_the_period_manifest_and_its_execution(tmp_path):
    export = tmp_path / "cur2" / "helios-cur2"
    for execution in ("exec-1", "exec-2"):
        write_cur1_csv(export / "data" / "BILLING_PERIOD=2026-11" / execution / "helios-cur2-00001.csv.gz", [])
    write_cur1_csv(export / "data" / "BILLING_PERIOD=2026-12" / "helios-cur2-00001.csv.gz", [])
    manifest_dir = export / "metadata" / "BILLING_PERIOD=2026-11"
    manifest_dir.mkdir(parents=True)
    (manifest_dir / "helios-cur2-Manifest.json").write_text(
        json.dumps(
            {
                "executionId": "exec-2",
                "exportArn": "arn:aws:bcm-data-exports:us-east-1:012345678901:export/helios-cur2-1234",
                "dataFiles": [
                    "s3://bucket/cur2/helios-cur2/data/BILLING_PERIOD=2026-11/exec-2/helios-cur2-00001.csv.gz"
                ],
            }
        )
    )
    (delivery,) = discover_data_export(export, "aws-cur2")
    assert delivery.files == (export / "data" / "BILLING_PERIOD=2026-11" / "exec-2" / "helios-cur2-00001.csv.gz",)
    assert (delivery.billing_period, delivery.billing_account_id, delivery.version) == (
        "2026-11",
        "012345678901",
        "exec-2",
    )
