"""Azure export runs in a local mirror of the storage container: newest complete run per period, pairs, refusals."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path

import pytest

from connectors.azure import exports
from gpuledger.gates.load import accept_delivery, load_delivery
from models.config import SourceConfig
from models.errors import InputError
from pipelines.deliveries import deliveries_from_paths, discover
from tests.conftest import focus_snapshot
from tests.fixtures.azure_cases import (
    EA_ACTUAL_TOTAL,
    EA_AMORTIZED_TOTAL,
    EA_HEADER,
    ENROLLMENT,
    LEGACY_HEADER,
    LEGACY_TOTAL,
    ea_actual,
    ea_amortized,
    legacy_rows,
    write_csv,
)

JANUARY = "20260101-20260131"
SCOPE = f"/providers/Microsoft.Billing/billingAccounts/{ENROLLMENT}"


def write_run(
    root: Path,
    export: str,
    rows: list[dict[str, str]],
    *,
    run_id: str,
    submitted: str,
    export_type: str,
    date_range: str = JANUARY,
    run_time: str | None = "202602010600",
    manifest_name: str = "manifest.json",
    header: list[str] = EA_HEADER,
) -> Path:
    """One export run laid out like the container: data parts plus the manifest written last."""
    run_folder = root / export / date_range / (run_time or "") / run_id
    data = write_csv(run_folder / "part_0_0001.csv.gz", rows, header)
    blob = "/".join(p for p in ("exports", export, date_range, run_time or "", run_id, data.name) if p)
    type_key = "type" if manifest_name == "manifest.json" else "exportType"
    manifest = {
        "exportConfig": {
            "exportName": export,
            "resourceId": f"{SCOPE}/providers/Microsoft.CostManagement/exports/{export}",
            type_key: export_type,
            "granularity": "Daily",
        },
        "deliveryConfig": {"partitionData": True, "dataOverwriteBehavior": "CreateNewReport", "fileFormat": "Csv"},
        "runInfo": {"executionType": "Scheduled", "submittedTime": submitted, "runId": run_id},
        "blobCount": 1,
        "blobs": [{"blobName": blob, "byteCount": data.stat().st_size}],
    }
    (run_folder / manifest_name).write_text(json.dumps(manifest), encoding="utf-8")
    return run_folder


def _ea_pair(root: Path, *, run: str, submitted: str, h100_cost: str = "2359.68") -> None:
    actual, amortized = ea_actual(), ea_amortized()
    actual[0]["CostInBillingCurrency"] = amortized[0]["CostInBillingCurrency"] = h100_cost
    write_run(root, "gpu-actual", actual, run_id=f"{run}-a", submitted=submitted, export_type="ActualCost")
    write_run(root, "gpu-amortized", amortized, run_id=f"{run}-m", submitted=submitted, export_type="AmortizedCost")


def _totals(con) -> list[tuple[object, ...]]:
    return con.execute(
        "SELECT BillingAccountId, BillingCurrency, sum(BilledCost), sum(EffectiveCost), count(DISTINCT x_DeliveryId)"
        " FROM focus.costs GROUP BY ALL"
    ).fetchall()


def test_newest_complete_run_wins_and_only_manifest_files_count(tmp_path):
    root = tmp_path / "exports"
    write_run(
        root, "gpu-actual", ea_actual(), run_id="run-1", submitted="2026-02-01T06:00:00Z", export_type="ActualCost"
    )
    newer = write_run(
        root,
        "gpu-actual",
        ea_actual()[:3],
        run_id="run-2",
        submitted="2026-02-02T06:00:00Z",
        export_type="ActualCost",
        run_time="202602020600",
    )
    write_csv(newer / "part_9_9999.csv.gz", ea_actual(), EA_HEADER)  # not in the manifest
    in_progress = root / "gpu-actual" / JANUARY / "202602030600" / "run-3"
    write_csv(in_progress / "part_0_0001.csv.gz", ea_actual(), EA_HEADER)  # no manifest yet
    (delivery,) = exports.discover(root / "gpu-actual", "azure-actual", "gpu")
    assert delivery.files == (newer / "part_0_0001.csv.gz",)
    assert (delivery.source_format, delivery.billing_period, delivery.version) == ("azure-actual", "2026-01", "run-2")
    assert (delivery.billing_account_id, delivery.manifest, delivery.source_name) == (
        ENROLLMENT,
        newer / "manifest.json",
        "gpu",
    )


def test_legacy_partitioned_manifest_and_manifestless_exports(tmp_path):
    root = tmp_path / "exports"
    run = write_run(
        root,
        "old-amortized",
        ea_amortized(),
        run_id="guid-1",
        submitted="2026-02-01T00:00:00Z",
        export_type="AmortizedCost",
        run_time=None,
        manifest_name="_manifest.json",
    )
    (delivery,) = exports.discover(root / "old-amortized", "azure-amortized")
    assert delivery.files == (run / "part_0_0001.csv.gz",)
    range_folder = root / "usage" / "20251201-20251231"
    # one file per run, named by a guid: the last modified is the newest run
    latest = write_csv(range_folder / "usage_1111.csv", legacy_rows(), LEGACY_HEADER)
    earlier = write_csv(range_folder / "usage_2222.csv", legacy_rows()[:1], LEGACY_HEADER)
    os.utime(latest, (2_000_000_000, 2_000_000_000))
    os.utime(earlier, (1_000_000_000, 1_000_000_000))
    (legacy,) = exports.discover(root / "usage", "azure-legacy")
    assert (legacy.files, legacy.billing_period, legacy.version) == ((latest,), "2025-12", "usage_1111.csv")


def test_actual_and_amortized_exports_pair_by_name(tmp_path):
    root = tmp_path / "exports"
    _ea_pair(root, run="r1", submitted="2026-02-01T06:00:00Z")
    # February: only the actual export has run so far
    write_run(
        root,
        "gpu-actual",
        ea_actual(),
        run_id="feb",
        submitted="2026-03-01T06:00:00Z",
        export_type="ActualCost",
        date_range="20260201-20260228",
    )
    (delivery,) = exports.discover(root, "azure-cost-details", "gpu")
    assert delivery.source_format == "azure-cost-details"
    assert [f.parts[-5] for f in delivery.files] == ["gpu-actual", "gpu-amortized"]
    assert (delivery.billing_period, delivery.version) == ("2026-01", "r1-a+r1-m")


def test_export_type_must_match_the_configured_format(tmp_path):
    root = tmp_path / "exports"
    write_run(root, "gpu", ea_amortized(), run_id="r", submitted="2026-02-01T06:00:00Z", export_type="AmortizedCost")
    with pytest.raises(InputError, match="holds amortized cost") as caught:
        exports.discover(root / "gpu", "azure-actual")
    assert caught.value.column == "exportConfig.type"


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        ("exports/gpu/20260101-20260131/202602010600/r/part_7.csv.gz", "does not exist"),
        ("exports/gpu/20260101-20260131/../../secrets.csv", "outside the export folder"),
    ],
)
def test_manifest_blobs_must_exist_inside_the_export(tmp_path, blob, message):
    run = write_run(
        tmp_path, "gpu", ea_actual(), run_id="r", submitted="2026-02-01T06:00:00Z", export_type="ActualCost"
    )
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["blobs"] = [{"blobName": blob}]
    (run / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InputError, match=message) as caught:
        exports.discover(tmp_path / "gpu", "azure-actual")
    assert caught.value.file == str(run / "manifest.json")


def test_truncated_download_is_refused(tmp_path):
    run = write_run(
        tmp_path, "gpu", ea_actual(), run_id="r", submitted="2026-02-01T06:00:00Z", export_type="ActualCost"
    )
    part = run / "part_0_0001.csv.gz"
    part.write_bytes(part.read_bytes()[:-10])
    with pytest.raises(InputError, match="incomplete download"):
        exports.discover(tmp_path / "gpu", "azure-actual")


def test_blob_urls_and_custom_ranges(tmp_path):
    run = write_run(
        tmp_path, "gpu", ea_actual(), run_id="r", submitted="2026-02-01T06:00:00Z", export_type="ActualCost"
    )
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["blobs"][0]["blobName"] = (
        "https://acct.blob.core.windows.net/cost/exports/gpu/20260101-20260131/202602010600/r/part_0_0001.csv.gz"
    )
    (run / "manifest.json").write_text(json.dumps(manifest))
    write_run(
        tmp_path,
        "gpu",
        ea_actual(),
        run_id="custom",
        submitted="2026-02-05T06:00:00Z",
        export_type="ActualCost",
        date_range="20260110-20260120",
    )
    # a custom range would replace the whole month with part of it: skipped
    (delivery,) = exports.discover(tmp_path / "gpu", "azure-actual")
    assert delivery.files == (run / "part_0_0001.csv.gz",)


def test_dataset_of_a_file(tmp_path):
    run = write_run(tmp_path, "daily", ea_actual(), run_id="r", submitted="2026-02-01T06:00:00Z", export_type="Usage")
    assert exports.dataset_of_file(run / "part_0_0001.csv.gz") == "actual"
    assert exports.dataset_of_file(tmp_path / "x" / "AmortizedCost_2026.csv") == "amortized"
    with pytest.raises(InputError, match="actual or amortized"):
        exports.dataset_of_file(tmp_path / "x" / "costs.csv")


# --- end to end: configured source, loader, CLI paths ----------------------------------------------------------


def test_configured_pair_loads_and_a_newer_run_replaces_the_slice(con, tmp_path):
    root = tmp_path / "exports"
    _ea_pair(root, run="r1", submitted="2026-02-01T06:00:00Z")
    source = SourceConfig("azure-ea", "azure-cost-details", root)
    (first,) = discover(source)
    load_delivery(con, first)
    assert _totals(con) == [(ENROLLMENT, "USD", EA_ACTUAL_TOTAL, EA_AMORTIZED_TOTAL, 1)]
    before = focus_snapshot(con)
    (same,) = discover(source)
    assert load_delivery(con, same).unchanged and focus_snapshot(con) == before
    # the next day's runs restate January: they replace it, never add to it
    _ea_pair(root, run="r2", submitted="2026-02-02T06:00:00Z", h100_cost="2000")
    (newer,) = discover(source)
    assert newer.version == "r2-a+r2-m"
    load_delivery(con, newer)
    delta = Decimal("359.68")
    assert _totals(con) == [(ENROLLMENT, "USD", EA_ACTUAL_TOTAL - delta, EA_AMORTIZED_TOTAL - delta, 1)]


def test_empty_restatement_of_an_enrollment_empties_its_month(con, tmp_path):
    root = tmp_path / "exports"
    write_run(root, "ea", ea_actual(), run_id="r1", submitted="2026-02-01T06:00:00Z", export_type="ActualCost")
    (delivery,) = exports.discover(root / "ea", "azure-actual")
    load_delivery(con, delivery)
    write_run(root, "ea", [], run_id="r2", submitted="2026-02-02T06:00:00Z", export_type="ActualCost", run_time="2")
    (empty,) = exports.discover(root / "ea", "azure-actual")
    assert empty.version == "r2"
    before = focus_snapshot(con)
    held = load_delivery(con, empty)  # an empty run of a month with charges waits for a person
    assert [h.reason for h in held.holds] == ["empty_slice"] and focus_snapshot(con) == before
    accept_delivery(con, held.delivery_id)
    assert not load_delivery(con, empty).held
    assert focus_snapshot(con).num_rows == 0


def test_cli_paths_find_azure_exports(con, tmp_path):
    root = tmp_path / "exports"
    _ea_pair(root, run="r1", submitted="2026-02-01T06:00:00Z")
    (pair,) = deliveries_from_paths(con, [root], "azure-cost-details")
    assert pair.version == "r1-a+r1-m"
    (single,) = deliveries_from_paths(con, [root / "gpu-amortized"], "azure-amortized")
    assert single.version == "r1-m"
    # auto cannot tell actual from amortized cost details, and says which formats to pass
    with pytest.raises(InputError, match="pass --format azure-actual or azure-amortized"):
        deliveries_from_paths(con, [root / "gpu-actual"], "auto")
    legacy = write_csv(tmp_path / "dl" / "usage.csv", legacy_rows(), LEGACY_HEADER)
    (loose,) = deliveries_from_paths(con, [legacy], "auto")
    assert loose.source_format == "azure-legacy"
    load_delivery(con, loose)
    assert _totals(con)[0][2:4] == (LEGACY_TOTAL, LEGACY_TOTAL)


def test_cli_import_of_a_paired_export_folder(tmp_path, capsys):
    from pipelines.cli import main

    root = tmp_path / "exports"
    _ea_pair(root, run="r1", submitted="2026-02-01T06:00:00Z")
    home = tmp_path / "home"
    assert main(["import", "--home", str(home), "--format", "azure-cost-details", str(root)]) == 0
    out = capsys.readouterr().out
    assert "azure-cost-details:12345678:2026-01:r1-a+r1-m" in out
    assert f"{EA_ACTUAL_TOTAL}" in out.replace("0000000", "")
    assert main(["import", "--home", str(home), str(root / "gpu-actual")]) == 1
    assert "pass --format azure-actual or azure-amortized" in capsys.readouterr().err
