"""Azure Cost Management through ARM: the REAL CostManagementClient against a local ARM stub (HTTPS), export runs
and Cost Details report blobs in a real Azurite (started by test_azure_sync's fixture)."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import io
import json
import logging
import time
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from azure.core.credentials import AccessToken
from azure.storage.blob import BlobSasPermissions, ContainerClient, generate_blob_sas

from connectors.azure import costmanagement
from connectors.azure.costmanagement import (
    ArmSettings,
    CostDetailsConfig,
    sync_cost_details,
    sync_discovered_exports,
    sync_export_with_history,
)
from connectors.azure.exports import discover_export
from connectors.azure.sync import AzureExportConfig
from connectors.sync import LOCK_FILE
from gpuledger_demo.azure_exports import AzureDemoSource, write_azure_demo_exports
from models.config import load_config
from models.errors import InputError, RemoteError
from models.landing import LEDGER_FILE, read_ledger
from pipelines.cli import main
from pipelines.deliveries import discover
from tests.conftest import slice_totals
from tests.connectors import test_azure_sync
from tests.connectors.test_azure_sync import ACCOUNT, ACCOUNT_KEY, CONNECTION_ENV
from tests.fixtures.arm_stub import ArmStub

pytestmark = [pytest.mark.serial, pytest.mark.slow]

# Azurite, and a fresh container in it, from the Blob sync's tests (the connection string reaches the sync only
# through the environment variable CONNECTION_ENV).
azurite, container = test_azure_sync.azurite, test_azure_sync.container
SCOPE = "/providers/Microsoft.Billing/billingAccounts/1234567/billingProfiles/F7W4-NQLF-SZU-QNK"  # the rows' profile
SUBSCRIPTION = "subscriptions/5f2c3b9e-1d4a-4c1e-9a0b-6e7f8a9b0c1d"
NOVEMBER, OCTOBER = "20261101-20261130", "20261001-20261031"


class StaticToken:
    """A TokenCredential that always hands out the stub's token."""

    def __init__(self, token: str) -> None:
        self.token = token

    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken(self.token, int(time.time()) + 3600)


@pytest.fixture
def stub(tmp_path: Path) -> Iterator[ArmStub]:
    with ArmStub(tmp_path) as server:
        yield server


def arm(stub: ArmStub, **kwargs: float) -> ArmSettings:
    return ArmSettings(base_url=stub.url, connection_verify=str(stub.ca_file), poll_interval=0.01, **kwargs)


def landed(landing: Path) -> list[str]:
    return sorted(p.relative_to(landing).as_posix() for p in landing.rglob("*") if p.is_file())


# --- export run history and backfill --------------------------------------------------------------------------------


def upload_run(container: ContainerClient, range_name: str, run_id: str, submitted: str, data: bytes) -> str:
    """An ActualCost run of finops/gpu-actual: one part, then its manifest; the manifest's blob name."""
    folder = f"finops/gpu-actual/{range_name}/{run_id}"
    container.upload_blob(f"{folder}/part_0_0001.csv.gz", data, overwrite=True)
    manifest = {
        "exportConfig": {"exportName": "gpu-actual", "type": "ActualCost"},
        "runInfo": {"runId": run_id, "submittedTime": submitted},
        "blobs": [{"blobName": f"{folder}/part_0_0001.csv.gz", "byteCount": len(data)}],
    }
    container.upload_blob(f"{folder}/manifest.json", json.dumps(manifest).encode(), overwrite=True)
    return f"{folder}/manifest.json"


def export_config(container: ContainerClient) -> AzureExportConfig:
    return AzureExportConfig(
        name="helios", container=container.container_name, export_path="finops/gpu-actual",
        connection_string_env=CONNECTION_ENV,
    )  # fmt: skip


def test_only_runs_the_history_reports_completed_are_pulled(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops")
    good = upload_run(container, NOVEMBER, "run-ok", "2026-12-01T06:00:00Z", b"completed run")
    # Newer, with parts and a manifest in Blob, but ARM says it failed (and another is still in progress).
    upload_run(container, NOVEMBER, "run-failed", "2026-12-02T06:00:00Z", b"failed run")
    upload_run(container, OCTOBER, "run-busy", "2026-12-02T07:00:00Z", b"still running")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-ok", "Completed", manifest_file=f"{container.container_name}/{good}")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-failed", "Failed")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-busy", "InProgress")
    landing = tmp_path / "landing"

    result = sync_export_with_history(
        export_config(container), SUBSCRIPTION, landing, arm=arm(stub), credential=StaticToken(stub.token)
    )

    assert [(d.billing_period, d.version) for d in result.pulled] == [("2026-11", "run-ok")]
    prefix = f"{container.container_name}/finops/gpu-actual"
    assert landed(landing) == [
        LEDGER_FILE, f"{prefix}/{NOVEMBER}/run-ok/manifest.json", f"{prefix}/{NOVEMBER}/run-ok/part_0_0001.csv.gz"
    ]  # fmt: skip
    assert (landing / prefix / NOVEMBER / "run-ok/part_0_0001.csv.gz").read_bytes() == b"completed run"
    assert [method for method, _ in stub.requests] == ["GET", "GET"]  # the export, then its run history


def test_an_export_delivering_elsewhere_is_refused(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops-old")
    upload_run(container, NOVEMBER, "run-ok", "2026-12-01T06:00:00Z", b"data")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-ok", "Completed")
    with pytest.raises(RemoteError) as caught:
        sync_export_with_history(
            export_config(container), SUBSCRIPTION, tmp_path / "landing", arm=arm(stub),
            credential=StaticToken(stub.token),
        )  # fmt: skip
    message = str(caught.value)
    assert f"delivers to {container.container_name}/finops-old" in message
    assert f"configured for {container.container_name}/finops" in message
    assert landed(tmp_path / "landing") == []


def test_backfill_runs_the_export_waits_for_completed_and_pulls_the_month(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops")
    stub.run_statuses = ["Queued", "InProgress", "InProgress", "Completed"]
    written: list[str] = []

    def write_run(export: str, run: dict[str, object]) -> None:  # Azure writes the run's blobs, then says Completed
        written.append(upload_run(container, OCTOBER, str(run["name"]), "2026-12-09T08:00:00Z", b"backfilled"))
        run["properties"]["manifestFile"] = written[-1]  # type: ignore[index]

    stub.on_run_completed = write_run
    result = sync_export_with_history(
        export_config(container), SUBSCRIPTION, tmp_path / "landing", month="2026-10", backfill=True,
        arm=arm(stub), credential=StaticToken(stub.token),
    )  # fmt: skip

    assert stub.executed == [{"timePeriod": {"from": "2026-10-01T00:00:00Z", "to": "2026-10-31T00:00:00Z"}}]
    (run_id,) = [run["name"] for run in stub.runs[f"{SUBSCRIPTION}/gpu-actual".lower()]]
    assert [(d.billing_period, d.version) for d in result.pulled] == [("2026-10", run_id)]
    history_reads = [path for _, path in stub.requests if "/runHistory" in path]
    assert len(history_reads) == 1 + 4 + 1  # before execute, one per status, then the history filter
    assert written and (tmp_path / "landing" / container.container_name / written[0]).is_file()


# --- the destination discovered from the export's definition ---------------------------------------------------------


def discovered_home(home: Path, table: str, fmt: str = "azure-actual") -> Path:
    """A gpuledger.toml whose azure_blob source names its export and scope but not where it delivers."""
    home.mkdir(exist_ok=True)
    (home / "gpuledger.toml").write_text(
        f'[[sources]]\nname = "helios"\nformat = "{fmt}"\n[sources.azure_blob]\nscope = "{SUBSCRIPTION}"\n'
        f'connection_string_env = "{CONNECTION_ENV}"\n{table}\n',
        encoding="utf-8",
    )
    return home


def sync_discovered(stub: ArmStub, landing: Path, exports: tuple[str, ...] = ("gpu-actual",), **kwargs: object):
    return sync_discovered_exports(
        "helios", SUBSCRIPTION, exports, landing, connection_string_env=CONNECTION_ENV, arm=arm(stub),
        credential=StaticToken(stub.token), **kwargs,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_discovered_destination_syncs_the_same_files_as_an_explicit_one(container, stub, tmp_path, monkeypatch):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "/finops/", account=ACCOUNT)
    good = upload_run(container, NOVEMBER, "run-ok", "2026-12-01T06:00:00Z", b"completed run")
    upload_run(container, OCTOBER, "run-failed", "2026-12-02T06:00:00Z", b"failed run")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-ok", "Completed", manifest_file=f"{container.container_name}/{good}")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-failed", "Failed")
    home = discovered_home(tmp_path / "home", 'export = "gpu-actual"')
    (source,) = load_config(home).sources
    assert source.remote is not None and source.remote.container is None
    landing = source.remote.landing
    assert source.path == landing / "gpu-actual" and discover(source) == []  # not synced: no ARM call to load it
    assert stub.requests == []

    # Through `gpuledger sync`, with the ARM settings and token of the stub.
    discovered = costmanagement.sync_discovered_exports
    monkeypatch.setattr(costmanagement, "sync_discovered_exports", lambda *args, **kwargs: discovered(
        *args, **kwargs, arm=arm(stub), credential=StaticToken(stub.token)))  # fmt: skip
    assert main(["sync", "--home", str(home)]) == 0
    explicit = tmp_path / "explicit"
    by_hand = sync_export_with_history(
        export_config(container), SUBSCRIPTION, explicit, arm=arm(stub), credential=StaticToken(stub.token)
    )

    assert [n for n in landed(landing) if n != LOCK_FILE] == landed(explicit) != [LEDGER_FILE]
    for name in landed(explicit):
        if name != LEDGER_FILE:
            assert (landing / name).read_bytes() == (explicit / name).read_bytes()
    assert (
        [(e.export, e.manifest, e.version) for e in read_ledger(landing)]
        == [(e.export, e.manifest, e.version) for e in read_ledger(explicit)]
        == [("finops/gpu-actual", good, "run-ok")]
    )
    (source,) = load_config(home).sources  # the folder the newest landed run is in: the explicit source's
    assert source.path == landing / container.container_name / "finops/gpu-actual"
    assert source.path.relative_to(landing) == by_hand.export_folder.relative_to(explicit)
    assert [d.version for d in discover(source)] == ["run-ok"]
    assert [p.split("?")[0].rsplit("/", 1)[-1] for _, p in stub.requests[:2]] == ["gpu-actual", "runHistory"]

    # Synced again: the same mirror, nothing new.
    result = sync_discovered(stub, landing)
    assert [(r.export_folder, r.pulled, r.unchanged) for r in result] == [(source.path, (), (NOVEMBER,))]


@pytest.mark.parametrize("discovered", [True, False], ids=["discovered", "explicit"])
def test_an_export_arm_does_not_know_is_refused_with_the_names_at_the_scope(container, stub, tmp_path, discovered):
    for name in ("gpu-amortized", "gpu-actual"):
        stub.add_export(SUBSCRIPTION, name, container.container_name, "finops", account=ACCOUNT)
    stub.add_export(f"{SUBSCRIPTION}/resourceGroups/ml", "ml-actual", container.container_name, "ml")
    stub.add_export(SCOPE, "billing-actual", container.container_name, "billing")
    with pytest.raises(RemoteError) as caught:
        if discovered:
            sync_discovered(stub, tmp_path / "landing", ("gpu-actul",))
        else:
            config = AzureExportConfig(
                name="helios", container=container.container_name, export_path="finops/gpu-actul",
                connection_string_env=CONNECTION_ENV,
            )  # fmt: skip
            sync_export_with_history(
                config, SUBSCRIPTION, tmp_path / "landing", arm=arm(stub), credential=StaticToken(stub.token)
            )
    assert str(caught.value) == (
        f"Azure export 'gpu-actul' at {SUBSCRIPTION}: Cost Management has no export of that name at the scope"
        " (exports there: gpu-actual, gpu-amortized): fix the export name in gpuledger.toml"
    )
    assert caught.value.__cause__ is None
    assert [p.split("?")[0].rsplit("/", 1)[-1] for _, p in stub.requests] == ["gpu-actul", "exports"]
    assert not (tmp_path / "landing").exists()


def test_a_configured_container_contradicting_the_definition_is_refused(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops", account=ACCOUNT)
    upload_run(container, NOVEMBER, "run-ok", "2026-12-01T06:00:00Z", b"data")
    stub.add_run(SUBSCRIPTION, "gpu-actual", "run-ok", "Completed")
    with pytest.raises(RemoteError) as caught:
        sync_discovered(stub, tmp_path / "landing", container="exports-old")
    assert str(caught.value) == (
        f"Azure export 'gpu-actual' at {SUBSCRIPTION}: ARM says the export delivers to"
        f" {container.container_name}/finops, but the source is configured for exports-old/finops: fix container in"
        " gpuledger.toml (or leave container and directory out to take them from ARM)"
    )
    with pytest.raises(RemoteError, match=r"configured for .*/finance: fix directory"):
        sync_discovered(stub, tmp_path / "landing", directory="finance/")
    assert not (tmp_path / "landing").exists()
    # The ones the definition gives are accepted, with or without slashes.
    (result,) = sync_discovered(stub, tmp_path / "landing", container=container.container_name, directory="/finops")
    assert [d.version for d in result.pulled] == ["run-ok"]


def test_the_definition_storage_account_must_be_the_configured_one(container, stub, tmp_path, monkeypatch):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops")  # in account helioscost
    with pytest.raises(RemoteError) as caught:
        sync_discovered(stub, tmp_path / "landing")
    assert str(caught.value) == (
        f"Azure export 'gpu-actual' at {SUBSCRIPTION}: the export delivers to storage account 'helioscost', but the"
        f" source reads account '{ACCOUNT}': fix account_url or connection_string_env"
    )
    assert [m for m, _ in stub.requests] == ["GET"]  # refused before the run history is read

    # A SAS-token destination names its account in storageAccount; account_url gives the configured one.
    stub.add_export(SUBSCRIPTION, "gpu-sas", container.container_name, "finops", account=ACCOUNT, by_resource_id=False)
    export = stub.exports[f"{SUBSCRIPTION}/gpu-sas".lower()]
    assert "resourceId" not in export["properties"]["deliveryInfo"]["destination"]
    with pytest.raises(RemoteError, match="delivers to storage account 'devstoreaccount1', but the source reads"
                       " account 'helioscost'"):  # fmt: skip
        sync_discovered_exports(
            "helios", SUBSCRIPTION, ("gpu-sas",), tmp_path / "landing", account_url="https://helioscost.blob.core.windows.net",
            arm=arm(stub), credential=StaticToken(stub.token),
        )  # fmt: skip
    with pytest.raises(RemoteError, match="account behind account_url or the connection string cannot be told"):
        sync_discovered_exports(
            "helios", SUBSCRIPTION, ("gpu-sas",), tmp_path / "landing", account_url="https://costs.helios.example",
            arm=arm(stub), credential=StaticToken(stub.token),
        )  # fmt: skip
    del export["properties"]["deliveryInfo"]["destination"]["storageAccount"]
    with pytest.raises(RemoteError, match="ARM names no storage account for the export's destination"):
        sync_discovered(stub, tmp_path / "landing", ("gpu-sas",))
    monkeypatch.delenv(CONNECTION_ENV)
    with pytest.raises(RemoteError, match=f"environment variable {CONNECTION_ENV} .* is not set"):
        sync_discovered(stub, tmp_path / "landing", ("gpu-sas",))
    assert not (tmp_path / "landing").exists()


@pytest.mark.parametrize(
    ("url", "account"),
    [
        ("https://helioscost.blob.core.windows.net", "helioscost"),
        ("https://HeliosCost.blob.core.windows.net/", "helioscost"),
        ("https://helioscost.privatelink.blob.core.windows.net", "helioscost"),
        ("https://helioscost.blob.core.chinacloudapi.cn", "helioscost"),
        ("http://127.0.0.1:10000/devstoreaccount1", "devstoreaccount1"),
        ("http://azurite:10000/devstoreaccount1", "devstoreaccount1"),
        ("https://costs.helios.example", None),
        ("https://costs.helios.example/exports", None),
    ],
)
def test_the_storage_account_of_an_account_url(url, account):
    assert costmanagement._configured_account("helios", url, None) == account


def test_the_exports_of_a_pair_must_deliver_to_one_folder(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops", account=ACCOUNT)
    stub.add_export(SUBSCRIPTION, "gpu-amortized", container.container_name, "finops-amortized", account=ACCOUNT,
                    kind="AmortizedCost")  # fmt: skip
    with pytest.raises(RemoteError) as caught:
        sync_discovered(stub, tmp_path / "landing", ("gpu-actual", "gpu-amortized"))
    assert str(caught.value) == (
        f"Azure export 'gpu-amortized' at {SUBSCRIPTION}: delivers to {container.container_name}/finops-amortized,"
        f" but 'gpu-actual' to {container.container_name}/finops: the exports of one source must share a folder"
    )


def test_container_and_directory_are_optional_only_with_a_scope(tmp_path):
    home = discovered_home(tmp_path / "a", 'exports = ["gpu-actual", "gpu-amortized"]', "azure-cost-details")
    (source,) = load_config(home).sources
    assert source.path == home / "landing/helios/gpu-actual"  # absent until a first sync
    home = discovered_home(tmp_path / "b", 'export = "gpu-actual"\ncontainer = "exports"')
    (source,) = load_config(home).sources
    assert source.remote is not None and source.remote.container == "exports"
    assert source.path == home / "landing/helios/gpu-actual"
    blob = 'export = "gpu-actual"\nconnection_string_env = "X"'
    for table, key in ((f'directory = "finops"\n{blob}', "container"), (f'container = "exports"\n{blob}', "directory")):
        with pytest.raises(InputError) as caught:
            load_config(write_config(tmp_path / key, "azure-actual", "azure_blob", table))
        assert f"{key!r} is required (or set 'scope' to take it from the export's definition)" in str(caught.value)
        assert caught.value.column == f"azure_blob.{key}"


@pytest.mark.parametrize("status", ["Failed", "Timeout"])
def test_a_backfill_run_that_fails_is_a_clear_error(container, stub, tmp_path, status):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops")
    stub.run_statuses = ["InProgress", status]
    stub.run_error = {"code": "ExportRunFailed", "message": "The storage account\nrefused the write."}
    with pytest.raises(RemoteError) as caught:
        sync_export_with_history(
            export_config(container), SUBSCRIPTION, tmp_path / "landing", month="2026-10", backfill=True,
            arm=arm(stub), credential=StaticToken(stub.token),
        )  # fmt: skip
    message = str(caught.value)
    assert f"for 2026-10 ended {status}: ExportRunFailed The storage account refused the write." in message
    assert "\n" not in message and caught.value.__cause__ is None
    assert landed(tmp_path / "landing") == []


def test_a_backfill_that_never_completes_stops_at_the_bounded_wait(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops")
    stub.run_statuses = ["InProgress"]
    started = time.monotonic()
    with pytest.raises(RemoteError, match=r"did not complete within 0.2 s"):
        sync_export_with_history(
            export_config(container), SUBSCRIPTION, tmp_path / "landing", month="2026-10", backfill=True,
            arm=arm(stub, max_wait=0.2), credential=StaticToken(stub.token),
        )  # fmt: skip
    assert time.monotonic() - started < 5


def test_arm_http_errors_are_one_line_with_status_and_code(container, stub, tmp_path):
    stub.add_export(SUBSCRIPTION, "gpu-actual", container.container_name, "finops")
    stub.fail_next("_export", 403, "AuthorizationFailed")
    with pytest.raises(RemoteError) as caught:
        sync_export_with_history(
            export_config(container), SUBSCRIPTION, tmp_path / "landing", arm=arm(stub),
            credential=StaticToken(stub.token),
        )  # fmt: skip
    assert str(caught.value) == (
        f"Azure export 'gpu-actual' at {SUBSCRIPTION}: Cost Management answered HTTP 403 AuthorizationFailed:"
        " needs Cost Management Reader at the scope (Cost Management Contributor to run an export)"
    )


def test_no_credential_names_the_default_credential_chain(tmp_path, monkeypatch):
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    config = CostDetailsConfig(name="helios", scope=SCOPE, source_format="azure-actual")
    with pytest.raises(RemoteError) as caught:
        sync_cost_details(config, tmp_path / "landing", month="2026-11", today=dt.date(2026, 12, 5))
    message = str(caught.value)
    assert "no Azure credential found by DefaultAzureCredential's chain" in message and "az login" in message
    assert "\n" not in message and caught.value.__cause__ is None


# --- the Cost Details API ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[AzureDemoSource]:
    return write_azure_demo_exports(tmp_path_factory.mktemp("demo"))


def demo_reports(demo: list[AzureDemoSource]) -> dict[tuple[str, str], list[bytes]]:
    """(metric, YYYY-MM) -> the newest run's parts, uncompressed, as the report's blobs (each with the header)."""
    return {
        (source.dataset, str(delivery.billing_period)): [gzip.decompress(p.read_bytes()) for p in delivery.files]
        for source in demo
        for delivery in discover_export(source.path, source.format)
    }


def csv_cost(blobs: list[bytes]) -> Decimal:
    rows = [row for blob in blobs for row in csv.DictReader(io.StringIO(blob.decode("utf-8-sig")))]
    return sum((Decimal(row["costInBillingCurrency"]) for row in rows), Decimal(0))


class ReportStorage:
    """Uploads report blobs to Azurite and links them with a real read-only SAS (its ``sig`` is the secret)."""

    def __init__(self, service: ContainerClient) -> None:
        self.container = service
        self.links: list[str] = []

    def link(self, data: bytes) -> tuple[str, int]:
        name = f"{dt.date.today():%Y%m%d}/{uuid.uuid4()}"  # as the API names them: no extension
        blob = self.container.upload_blob(name, data)
        sas = generate_blob_sas(
            ACCOUNT, self.container.container_name, name, account_key=ACCOUNT_KEY,
            permission=BlobSasPermissions(read=True), expiry=dt.datetime.now(dt.UTC) + dt.timedelta(hours=1),
        )  # fmt: skip
        self.links.append(f"{blob.url}?{sas}")
        return self.links[-1], len(data)


def serve_reports(stub: ArmStub, storage: ReportStorage, reports: dict[tuple[str, str], list[bytes]]) -> None:
    stub.report_blobs = lambda metric, start, end: [storage.link(b) for b in reports[(metric, start[:7])]]


def cost_details(stub: ArmStub, fmt: str = "azure-cost-details", **kwargs: object) -> CostDetailsConfig:
    return CostDetailsConfig(name="helios", scope=SCOPE, source_format=fmt, arm=arm(stub), **kwargs)  # type: ignore[arg-type]


def test_cost_details_land_as_export_runs_the_reader_loads_and_unchanged_reports_are_not_landed_again(
    container, stub, demo, tmp_path
):
    reports = demo_reports(demo)
    storage = ReportStorage(container)
    serve_reports(stub, storage, reports)
    stub.report_polls = 2
    home = tmp_path / "home"
    home.mkdir()
    (home / "gpuledger.toml").write_text(
        f'[[sources]]\nname = "helios"\nformat = "azure-cost-details"\n'
        f'[sources.azure_cost_details]\nscope = "{SCOPE}"\nmonths_back = 1\n',
        encoding="utf-8",
    )
    (source,) = load_config(home).sources
    landing = source.remote.landing
    token = StaticToken(stub.token)

    first = sync_cost_details(cost_details(stub, months_back=1), landing, credential=token, today=dt.date(2026, 11, 20))

    assert first.export_folder == source.path
    assert [(d.export, d.billing_period) for d in first.pulled] == [
        ("cost-details/ActualCost", "2026-10"), ("cost-details/AmortizedCost", "2026-10"),
        ("cost-details/ActualCost", "2026-11"), ("cost-details/AmortizedCost", "2026-11"),
    ]  # fmt: skip
    assert [(s.lstrip("/"), b["metric"], b["timePeriod"]) for s, b in stub.reports] == [
        (SCOPE.lstrip("/"), "ActualCost", {"start": "2026-10-01", "end": "2026-10-31"}),
        (SCOPE.lstrip("/"), "AmortizedCost", {"start": "2026-10-01", "end": "2026-10-31"}),
        (SCOPE.lstrip("/"), "ActualCost", {"start": "2026-11-01", "end": "2026-11-20"}),  # the month so far
        (SCOPE.lstrip("/"), "AmortizedCost", {"start": "2026-11-01", "end": "2026-11-20"}),
    ]
    assert any(len(d.files) > 1 for d in first.pulled)
    for delivery in first.pulled:
        parts = [f"part_0_{n:04d}.csv" for n in range(1, len(delivery.files) + 1)]
        assert [f.name.rsplit("/", 1)[-1] for f in delivery.files] == parts
        metric = delivery.export.rsplit("/", 1)[-1]
        assert [(landing / f.name).read_bytes() for f in delivery.files] == reports[(metric, delivery.billing_period)]

    # The normal import path reads the landed folder like an export container.
    assert main(["import", str(source.path), "--home", str(home), "--format", "azure-cost-details"]) == 0
    totals = {(month, billed, effective) for _, month, _, billed, effective in slice_totals(home)}
    expected = {
        (month, csv_cost(reports[("ActualCost", month)]), csv_cost(reports[("AmortizedCost", month)]))
        for month in ("2026-10", "2026-11")
    }
    assert len(totals) == 2
    for month, billed, effective in totals:
        (want,) = [e for e in expected if e[0] == month]
        assert abs(Decimal(billed) - want[1]) < Decimal("0.001"), month
        assert abs(Decimal(effective) - want[2]) < Decimal("0.001"), month
    by_hand = tmp_path / "by-hand"
    assert main(["import", str(demo[0].path.parent), "--home", str(by_hand), "--format", "azure-cost-details"]) == 0
    assert slice_totals(home) == slice_totals(by_hand)

    # Regenerated with the same content: nothing new landed or recorded.
    before = landed(landing)
    second = sync_cost_details(
        cost_details(stub, months_back=1), landing, credential=token, today=dt.date(2026, 11, 20)
    )
    assert second.pulled == ()
    assert second.unchanged == (
        f"ActualCost {OCTOBER}", f"AmortizedCost {OCTOBER}", f"ActualCost {NOVEMBER}", f"AmortizedCost {NOVEMBER}"
    )  # fmt: skip
    assert landed(landing) == before
    assert len(read_ledger(landing)) == 4

    # A restated November: a new run that the reader takes as the newest.
    first_part = reports[("ActualCost", "2026-11")][0]
    reports[("ActualCost", "2026-11")][0] = first_part[: first_part.rstrip(b"\r\n").rfind(b"\n") + 1]  # a row less
    third = sync_cost_details(
        cost_details(stub, "azure-actual"), landing, month="2026-11", credential=token, today=dt.date(2026, 12, 2)
    )
    (delivery,) = third.pulled
    assert delivery.downloaded_files == 1
    newest = discover_export(landing / "cost-details" / "ActualCost", "azure-actual")
    assert [d.version for d in newest if d.billing_period == "2026-11"] == [delivery.version]


def test_throttled_report_request_is_retried_after_the_retry_after(container, stub, demo, tmp_path):
    serve_reports(stub, ReportStorage(container), demo_reports(demo))
    stub.fail_next("_generate", 429, "429", retry_after="1")
    started = time.monotonic()
    result = sync_cost_details(
        cost_details(stub, "azure-actual"), tmp_path / "landing", month="2026-11",
        credential=StaticToken(stub.token), today=dt.date(2026, 12, 5),
    )  # fmt: skip
    assert time.monotonic() - started >= 1.0
    assert [path.split("?")[0].rsplit("/", 1)[-1] for m, path in stub.requests if m == "POST"] == [
        "generateCostDetailsReport", "generateCostDetailsReport"
    ]  # fmt: skip
    assert [(d.export, d.billing_period) for d in result.pulled] == [("cost-details/ActualCost", "2026-11")]


@pytest.mark.parametrize("month", ["2025-11", "2027-01"])
def test_months_the_api_does_not_serve_are_refused_before_any_call(stub, tmp_path, month):
    with pytest.raises(InputError) as caught:
        sync_cost_details(
            cost_details(stub), tmp_path / "landing", month=month, credential=StaticToken(stub.token),
            today=dt.date(2026, 12, 5),
        )  # fmt: skip
    too_old = "older than the Cost Details API serves (13 months: 2025-12 onwards)"
    expected = too_old if month < "2026" else "has not started yet"
    assert expected in str(caught.value)
    assert stub.requests == []
    with pytest.raises(InputError, match="'months_back' must be 0 to 12"):
        cost_details(stub, months_back=13)


def test_sas_signature_and_bearer_token_never_reach_logs_errors_or_files(container, stub, demo, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    storage = ReportStorage(container)
    reports = demo_reports(demo)
    serve_reports(stub, storage, reports)
    landing = tmp_path / "landing"
    config = cost_details(stub, "azure-actual")
    token = StaticToken(stub.token)
    sync_cost_details(config, landing, month="2026-11", credential=token, today=dt.date(2026, 12, 5))

    def deleted(metric: str, start: str, end: str) -> list[tuple[str, int]]:  # a link whose blob is gone
        link, size = storage.link(b"x")
        container.delete_blob(urlparse(link).path.split("/", 3)[3])
        return [(link, size)]

    stub.report_blobs = deleted
    with pytest.raises(RemoteError) as caught:
        sync_cost_details(config, landing, month="2026-10", credential=token, today=dt.date(2026, 12, 5))

    raw = [dict(pair.split("=", 1) for pair in urlparse(link).query.split("&"))["sig"] for link in storage.links]
    signatures = [*raw, *(parse_qs(urlparse(link).query)["sig"][0] for link in storage.links)]
    assert len(raw) >= 2 and all(len(s) > 20 for s in signatures)
    public = storage.links[-1].split("?")[0]
    assert f"{public}: the storage service answered HTTP 404 BlobNotFound" in str(caught.value)
    assert any(r.name.startswith("azure.core") for r in caplog.records)
    assert any(r.name.startswith("urllib3") and "/devstoreaccount1/" in r.getMessage() for r in caplog.records)
    written = "".join(p.read_text(errors="replace") for p in landing.rglob("*.json"))
    for secret in (*signatures, stub.token):
        for text in (caplog.text, str(caught.value), written):
            assert secret not in text


# --- configuration and command line -----------------------------------------------------------------------------------


def write_config(home: Path, fmt: str, kind: str, table: str) -> Path:
    home.mkdir(exist_ok=True)
    (home / "gpuledger.toml").write_text(
        f'[[sources]]\nname = "helios"\nformat = "{fmt}"\n[sources.{kind}]\n{table}\n', encoding="utf-8"
    )
    return home


def test_configuration_of_the_scope_and_the_cost_details_kind(tmp_path):
    blob = 'container = "exports"\ndirectory = "finops"\nexport = "gpu-actual"\naccount_url = "https://a.blob.core.windows.net"'
    (source,) = load_config(
        write_config(tmp_path / "a", "azure-actual", "azure_blob", f'{blob}\nscope = "{SCOPE}"')
    ).sources
    assert source.remote is not None and source.remote.scope == SCOPE
    (source,) = load_config(
        write_config(tmp_path / "b", "azure-amortized", "azure_cost_details", f'scope = "{SCOPE}"')
    ).sources
    assert source.path == tmp_path / "b/landing/helios/cost-details/AmortizedCost"
    with pytest.raises(InputError, match="'months_back' must be at most 12"):
        load_config(
            write_config(tmp_path / "c", "azure-actual", "azure_cost_details", f'scope = "{SCOPE}"\nmonths_back = 13')
        )
    with pytest.raises(InputError, match="'scope' is required"):
        load_config(write_config(tmp_path / "d", "azure-actual", "azure_cost_details", "months_back = 1"))


def test_backfill_needs_a_month_and_a_scoped_azure_source(tmp_path, capsys):
    home = write_config(tmp_path / "home", "azure-actual", "azure_blob",
                        'container = "exports"\ndirectory = "finops"\nexport = "gpu-actual"\n'
                        'connection_string_env = "GPULEDGER_UNSET"')  # fmt: skip
    assert main(["sync", "--home", str(home), "--source", "helios", "--backfill"]) == 2
    assert "--backfill needs --source NAME and --month YYYY-MM" in capsys.readouterr().err
    assert main(["sync", "--home", str(home), "--source", "helios", "--month", "2026-10", "--backfill"]) == 1
    assert "source 'helios': --backfill needs an Azure source with a scope" in capsys.readouterr().err
