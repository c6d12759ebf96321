"""Finding deliveries in folders: loose files of every format the loader reads, manifests never as data."""

from __future__ import annotations

import json

import pytest

from gpuledger.gates.load import load_delivery
from models.delivery import Delivery
from pipelines.deliveries import deliveries_from_paths
from tests.fixtures.gcp_cases import EVERY_CREDIT_BILLED, every_credit_type, write_jsonl


@pytest.fixture
def downloads(tmp_path):
    folder = tmp_path / "downloads"
    records = every_credit_type()
    for sub in ("a", "b"):
        (folder / sub).mkdir(parents=True)
    files = (
        write_jsonl(folder / "a" / "part-000.jsonl", records[:4]),
        write_jsonl(folder / "b" / "part-001.json.gz", records[4:]),
    )
    for name in ("manifest.json", "_manifest.json", "billing-Manifest.json", "a/exportManifest.json"):
        (folder / name).write_text(json.dumps({"blobs": []}), encoding="utf-8")
    return folder, files


@pytest.mark.parametrize("fmt", ["gcp-bq", "auto"])
def test_loose_json_lines_are_data_for_formats_reading_json(con, downloads, fmt):
    folder, files = downloads
    assert deliveries_from_paths(con, [folder], fmt) == [Delivery("gcp-bq", files)]
    (only,) = load_delivery(con, Delivery("gcp-bq", files)).slices
    assert only.billed_cost == EVERY_CREDIT_BILLED


def test_formats_without_json_leave_json_files_out(con, downloads, tmp_path):
    folder, _ = downloads
    csv = tmp_path / "downloads" / "cur.csv"
    csv.write_text("lineItem/UnblendedCost\n1\n", encoding="utf-8")
    assert deliveries_from_paths(con, [folder], "aws-cur1") == [Delivery("aws-cur1", (csv,))]
