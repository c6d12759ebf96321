"""The generated Azure sample exports: container layout, manifests, determinism, and MCA cost details quirks."""

from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from gpuledger_demo.azure_exports import COLUMNS, AzureDemoSource, write_azure_demo_exports

pytestmark = pytest.mark.serial

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
CONTAINER = "heliosfinops/cost-exports"
ACTUAL, AMORTIZED = "helios-mca/helios-actual-cost", "helios-mca/helios-amortized-cost"
RANGES = {"2026-10": "20261001-20261031", "2026-11": "20261101-20261130"}
DATE = re.compile(r"(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01])/2026|(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01])/2027")
DATE_COLUMNS = (
    "billingPeriodEndDate",
    "billingPeriodStartDate",
    "servicePeriodEndDate",
    "servicePeriodStartDate",
    "date",
    "exchangeRateDate",
)
EUR_PER_USD = {"2026-10": Decimal("0.9215"), "2026-11": Decimal("0.9342")}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, list[AzureDemoSource]]:
    root = tmp_path_factory.mktemp("azure")
    return root, write_azure_demo_exports(root)


@pytest.fixture(scope="module")
def root(demo) -> Path:
    return demo[0]


@pytest.fixture(scope="module")
def sources(demo) -> dict[str, AzureDemoSource]:
    return {source.dataset: source for source in demo[1]}


def _relative_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _manifests(root: Path) -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_text(encoding="utf-8"))) for p in sorted(root.rglob("manifest.json"))]


def _newest(root: Path, export: str) -> dict[str, dict]:
    """Billing period folder -> the newest run's manifest, chosen as a reader must: by submittedTime."""
    runs: dict[str, list[dict]] = defaultdict(list)
    for path, manifest in _manifests(root / CONTAINER / export):
        runs[path.parent.parent.name].append(manifest)
    return {period: max(ms, key=lambda m: m["runInfo"]["submittedTime"]) for period, ms in runs.items()}


def _blobs(root: Path, manifest: dict) -> list[Path]:
    return [root / CONTAINER / blob["blobName"] for blob in manifest["blobs"]]


def _rows(files: list[Path]) -> list[dict[str, str]]:
    """Rows as text through DuckDB (every column VARCHAR), whose reader strips the BOM."""
    with duckdb.connect() as con:
        relation = con.read_csv([str(f) for f in files], header=True, all_varchar=True)
        assert relation.columns == list(COLUMNS)
        # an empty cell reads as NULL: back to the empty text the file holds
        return [{c: v or "" for c, v in zip(COLUMNS, row, strict=True)} for row in relation.fetchall()]


def _current(root: Path, export: str, period: str) -> list[dict[str, str]]:
    return _rows(_blobs(root, _newest(root, export)[RANGES[period]]))


def _cost(rows: list[dict[str, str]], column: str = "costInBillingCurrency") -> Decimal:
    return sum((Decimal(r[column] or "0") for r in rows), Decimal(0))


# --- layout and manifests ----------------------------------------------------------------------


def test_layout_matches_the_storage_container(root, demo):
    files = sorted(UUID.sub("<run>", f) for f in _relative_files(root))
    expected = ["_expected_totals_azure.json"]
    for export in (ACTUAL, AMORTIZED):
        for period, runs, parts in (("2026-10", 1, 2), ("2026-11", 2, 1)):
            folder = f"{CONTAINER}/{export}/{RANGES[period]}/<run>"
            for _ in range(runs):
                expected += [f"{folder}/manifest.json"] + [
                    f"{folder}/part_0_{n:04d}.csv.gz" for n in range(1, parts + 1)
                ]
    assert files == sorted(expected)
    actual, amortized = demo[1]
    assert (actual.name, actual.format, actual.dataset) == ("helios-actual-cost", "azure-actual", "ActualCost")
    assert (amortized.name, amortized.format, amortized.dataset) == (
        "helios-amortized-cost",
        "azure-amortized",
        "AmortizedCost",
    )
    for source, export in ((actual, ACTUAL), (amortized, AMORTIZED)):
        assert source.provider == "azure"
        assert source.path == root / CONTAINER / export
        assert source.container == root / CONTAINER
        assert re.fullmatch(rf"{UUID.pattern}:{UUID.pattern}_2019-05-31", source.billing_account_id)
        assert re.fullmatch(r"[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{3}-[A-Z2-7]{3}", source.billing_profile_id)
    assert sum(p.stat().st_size for p in root.rglob("*")) < 1_000_000


def test_manifests_list_exactly_the_written_parts(root):
    listed = set()
    for path, manifest in _manifests(root):
        run = manifest["runInfo"]
        assert list(manifest) == [
            "manifestVersion",
            "byteCount",
            "blobCount",
            "dataRowCount",
            "exportConfig",
            "deliveryConfig",
            "runInfo",
            "blobs",
        ]
        export = manifest["exportConfig"]["exportName"]
        assert path.parent.name == run["runId"] and path.parent.parent.parent.name == export
        assert manifest["exportConfig"]["type"] == {"helios-actual-cost": "ActualCost"}.get(export, "AmortizedCost")
        assert manifest["exportConfig"]["resourceId"].endswith(f"/providers/Microsoft.CostManagement/exports/{export}")
        assert manifest["deliveryConfig"]["dataOverwriteBehavior"] == "CreateNewReport"
        assert (manifest["deliveryConfig"]["fileFormat"], manifest["deliveryConfig"]["rootFolderPath"]) == (
            "Csv",
            "helios-mca",
        )
        start, end = path.parent.parent.name.split("-")
        assert (run["startDate"], run["endDate"]) == (
            f"{start[:4]}-{start[4:6]}-{start[6:]}T00:00:00",
            f"{end[:4]}-{end[4:6]}-{end[6:]}T00:00:00",
        )
        assert manifest["blobCount"] == len(manifest["blobs"])
        for blob, file in zip(manifest["blobs"], _blobs(root, manifest), strict=True):
            assert file.parent == path.parent
            assert blob["byteCount"] == file.stat().st_size
            assert blob["dataRowCount"] == len(_rows([file]))
            listed.add(file)
        assert manifest["byteCount"] == sum(b["byteCount"] for b in manifest["blobs"])
        assert manifest["dataRowCount"] == sum(b["dataRowCount"] for b in manifest["blobs"])
    assert listed == set(root.rglob("*.csv.gz"))


def test_same_seed_same_bytes(root, tmp_path):
    again = tmp_path / "again"
    write_azure_demo_exports(again)
    assert _relative_files(again) == _relative_files(root)
    for relative in _relative_files(root):
        assert (again / relative).read_bytes() == (root / relative).read_bytes(), relative


# --- totals --------------------------------------------------------------------------------------


def test_expected_totals_equal_a_resum_of_the_newest_runs(root, sources):
    con = duckdb.connect()
    sidecar = json.loads((root / "_expected_totals_azure.json").read_text(encoding="utf-8"))
    for dataset, export in (("ActualCost", ACTUAL), ("AmortizedCost", AMORTIZED)):
        files = [str(f) for manifest in _newest(root, export).values() for f in _blobs(root, manifest)]
        period = "strftime(strptime(billingPeriodStartDate, '%m/%d/%Y'), '%Y-%m')"
        resum = con.execute(
            f"""SELECT billingAccountId, billingProfileId, {period}, billingCurrency,
                   sum(CAST(costInBillingCurrency AS DECIMAL(38, 10))), count(*)
                FROM read_csv(?, header = true, all_varchar = true) GROUP BY ALL ORDER BY ALL""",
            [files],
        ).fetchall()
        source = sources[dataset]
        expected = [
            (t.billing_account_id, t.billing_profile_id, t.billing_period, t.currency, t.cost, t.rows)
            for t in source.expected_totals
        ]
        assert resum == expected
        assert [t.run_id for t in source.expected_totals] == [
            _newest(root, export)[RANGES[p]]["runInfo"]["runId"] for p in ("2026-10", "2026-11")
        ]
        assert [
            (s["billing_period"], Decimal(s["cost"]), s["rows"], s["run_id"])
            for s in sidecar
            if s["dataset"] == dataset
        ] == [(t.billing_period, t.cost, t.rows, t.run_id) for t in source.expected_totals]


def test_actual_and_amortized_split_the_reservation(root):
    for period in RANGES:
        actual, amortized = _current(root, ACTUAL, period), _current(root, AMORTIZED, period)
        rate = EUR_PER_USD[period]
        purchases = [r for r in actual if r["chargeType"] == "Purchase" and r["pricingModel"] == "Reservation"]
        assert [(r["date"], Decimal(r["costInBillingCurrency"])) for r in purchases] == (
            [("10/05/2026", 62 * 8760 * rate)] if period == "2026-10" else []
        )
        assert purchases == [] or purchases[0]["frequency"] == "OneTime"
        assert not [r for r in amortized if r["chargeType"] == "Purchase" and r["pricingModel"] == "Reservation"]
        assert not [r for r in actual if r["chargeType"] == "UnusedReservation"]
        for rows in (actual, amortized):
            marketplace = [r for r in rows if r["publisherType"] == "Marketplace"]
            assert [(r["chargeType"], r["frequency"], r["costInPricingCurrency"]) for r in marketplace] == [
                ("Purchase", "Recurring", "4500")
            ]
            assert {r["billingCurrency"] for r in rows} == {"EUR"} and {r["pricingCurrency"] for r in rows} == {"USD"}
            assert {r["pricingModel"] for r in rows} == {"OnDemand", "Spot", "Reservation"}
            for r in rows:
                assert r["exchangeRatePricingToBilling"] == str(rate)
                drift = Decimal(r["costInBillingCurrency"]) - Decimal(r["costInPricingCurrency"]) * rate
                assert abs(drift) <= Decimal("1e-10"), r
        covered = defaultdict(Decimal)
        for r in amortized:
            if r["pricingModel"] == "Reservation":
                assert r["effectivePrice"] == "62" and r["benefitId"].startswith("/providers/Microsoft.Capacity/")
                covered[r["date"]] += Decimal(r["quantity"])
        assert set(covered.values()) == {Decimal(24)}, "each day the reservation is used or unused, 24 hours in all"
        actual_covered = [r for r in actual if r["pricingModel"] == "Reservation" and r["chargeType"] == "Usage"]
        assert actual_covered and {r["costInBillingCurrency"] for r in actual_covered} == {"0"}
        assert all(Decimal(r["paygCostInBillingCurrency"]) > 0 for r in actual_covered)


def test_november_is_restated_by_a_second_run(root):
    for export in (ACTUAL, AMORTIZED):
        runs = [m for p, m in _manifests(root / CONTAINER / export) if p.parent.parent.name == RANGES["2026-11"]]
        first, second = sorted(runs, key=lambda m: m["runInfo"]["submittedTime"])
        assert (first["runInfo"]["executionType"], second["runInfo"]["executionType"]) == ("Scheduled", "Manual")
        old, new = _rows(_blobs(root, first)), _rows(_blobs(root, second))
        assert {r["invoiceId"] for r in old} == {""} and len({r["invoiceId"] for r in new}) == 1
        assert re.fullmatch(r"G\d{9}", new[0]["invoiceId"])
        assert max(r["date"] for r in old) == "11/29/2026" and max(r["date"] for r in new) == "11/30/2026"
        assert len(new) > len(old) and _cost(new) > _cost(old)


# --- quirks --------------------------------------------------------------------------------------


def test_csv_quirks(root):
    for path in sorted(root.rglob("*.csv.gz")):
        raw = gzip.decompress(path.read_bytes())
        assert raw.startswith(b"\xef\xbb\xbfinvoiceId,previousInvoiceId,billingAccountId,")
        crlf = raw.count(b"\r\n")
        assert crlf == (raw.count(b"\n") if "helios-actual-cost" in path.as_posix() else 0)
        # brace-less tags, quoted as CSV does: quotes doubled inside a quoted cell
        assert b',"""team"": ""vision"",""project"": ""detector-v9""",' in raw
    rows = _current(root, ACTUAL, "2026-10") + _current(root, AMORTIZED, "2026-11")
    for r in rows:
        for column in DATE_COLUMNS:
            assert DATE.fullmatch(r[column]), (column, r[column])
        # the billing period end is inclusive: the month's last day
        assert r["billingPeriodEndDate"] in ("10/31/2026", "11/30/2026")
        tags = json.loads("{" + r["tags"] + "}")
        assert not r["tags"].startswith("{") and all(isinstance(v, str) for v in tags.values())
        if r["meterCategory"] == "Virtual Machines" and r["chargeType"] == "Usage":
            info = json.loads(r["additionalInfo"])
            assert info["ServiceType"].startswith("Standard_N") and info["VCPUs"] in (24, 96)
    assert {"team": "vision", "project": "detector-v9"} in [json.loads("{" + r["tags"] + "}") for r in rows]
    assert {"owner": ""} in [json.loads("{" + r["tags"] + "}") for r in rows]
    assert any(r["tags"] == "" for r in rows)


def test_resource_ids_and_checkpoints(root, sources):
    source = sources["ActualCost"]
    rows = _current(root, ACTUAL, "2026-10")
    ids = {r["ResourceId"] for r in rows}
    assert set(source.vm_resource_ids) == {
        "llm-h100-01",
        "llm-h100-02",
        "res-a100-01",
        "vis-a100-01",
        "vis-a100-spot-01",
        "speech-a100-01",
    }
    for name, rid in source.vm_resource_ids.items():
        assert re.fullmatch(
            rf"/subscriptions/{UUID.pattern}/resourceGroups/rg-[a-z]+-gpu/providers/Microsoft.Compute/virtualMachines/{name}",
            rid,
        )
        assert rid in ids
    vms = [r for r in rows if r["ResourceId"] in source.vm_resource_ids.values() and r["meterCategory"] != "Bandwidth"]
    sizes = {json.loads(r["additionalInfo"])["ServiceType"] for r in vms}
    assert sizes == {"Standard_ND96isr_H100_v5", "Standard_NC24ads_A100_v4", "Standard_NC96ads_A100_v4"}
    [checkpoints] = source.checkpoint_resource_ids
    assert checkpoints.endswith("/providers/Microsoft.Storage/storageAccounts/heliosckptazure")
    # the same storage account, spelled in lower case on its bandwidth rows: ARM ids vary in case
    storage = {r["meterCategory"]: r["ResourceId"] for r in rows if r["ResourceId"].lower() == checkpoints.lower()}
    assert storage == {"Storage": checkpoints, "Bandwidth": checkpoints.lower()}
    assert any("helios-ckpt-azure" in r["tags"] for r in rows if r["ResourceId"] == checkpoints)
