"""Finding deliveries in folders: loose files of every format the loader reads, manifests never as data."""

from __future__ import annotations

import json
import shutil

import pytest

from gpuledger.gates.load import load_delivery
from models.delivery import Delivery
from models.errors import InputError
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


@pytest.mark.parametrize(
    ("export", "fmt", "looks_like", "formats"),
    [
        ("helios-billing-exports/cur2/helios-cur2", "aws-cur1", "an AWS Data Export", "aws-cur2, aws-focus or focus"),
        ("helios-legacy-billing/cur1/helios-legacy-cur", "aws-cur2", "an AWS CUR 1 report", "aws-cur1"),
        ("helios-gcp-billing/parquet", "aws-cur2", "a BigQuery billing export extract", "gcp-bq or gcp-focus"),
        (
            "heliosfinops/cost-exports/helios-mca",
            "gcp-bq",
            "an Azure Cost Management export",
            "azure-focus, azure-actual, azure-amortized, azure-cost-details or azure-legacy",
        ),
    ],
)
def test_a_format_the_folder_is_not_laid_out_in_is_refused_naming_what_it_looks_like(
    con, demo_home, export, fmt, looks_like, formats
):
    folder = demo_home / "exports" / export
    with pytest.raises(InputError) as refused:
        deliveries_from_paths(con, [folder], fmt)
    message = str(refused.value)
    assert message.startswith(f"{folder}: looks like {looks_like} (")
    assert message.endswith(f"which is no {fmt} delivery; pass --format {formats}, or leave it out")


@pytest.mark.parametrize(
    ("export", "fmt", "found_format"),
    [
        ("helios-billing-exports/cur2/helios-cur2", "aws-cur2", "aws-cur2"),
        ("helios-billing-exports/cur2/helios-cur2", "auto", "aws-cur2"),
        ("helios-legacy-billing/cur1/helios-legacy-cur", "aws-cur1", "aws-cur1"),
        ("helios-legacy-billing/cur1/helios-legacy-cur", "auto", "aws-cur1"),
    ],
)
def test_the_format_an_export_folder_is_laid_out_in_finds_its_deliveries(con, demo_home, export, fmt, found_format):
    found = deliveries_from_paths(con, [demo_home / "exports" / export], fmt)
    assert {d.billing_period for d in found} == {"2026-10", "2026-11"}
    assert {d.source_format for d in found} == {found_format}


def test_an_azure_export_without_manifests_is_azure_s_for_an_azure_format(con, demo_home, tmp_path):
    """A legacy export (files right in its range folders) looks like a CUR 1 report: an Azure format reads it."""
    export = tmp_path / "helios-actual-cost"
    demo_export = demo_home / "exports" / "heliosfinops" / "cost-exports" / "helios-mca" / export.name
    for range_folder in (p for p in demo_export.iterdir() if p.is_dir()):
        (export / range_folder.name).mkdir(parents=True)
        part = sorted(range_folder.rglob("part_0_0001.csv.gz"))[-1]
        shutil.copy(part, export / range_folder.name / part.name)
    found = deliveries_from_paths(con, [export], "azure-actual")
    assert {d.billing_period for d in found} == {"2026-10", "2026-11"}
    assert {d.source_format for d in found} == {"azure-actual"}
    with pytest.raises(InputError, match="looks like an AWS CUR 1 report"):
        deliveries_from_paths(con, [export], "aws-cur2")
