"""Pulling Azure Cost Management export runs from Blob Storage: a real Azurite on 127.0.0.1, started by the tests."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from azure.storage.blob import BlobServiceClient, ContainerClient, ContentSettings

from connectors.azure.sync import AzureExportConfig, sync_azure_export
from connectors.ledger import PART_SUFFIX
from gpuledger.gates.load import load_delivery
from gpuledger.warehouse.home import open_warehouse
from gpuledger_demo.azure_exports import AzureDemoSource, write_azure_demo_exports
from models.config import SourceConfig
from models.errors import InputError, RemoteError
from models.landing import LEDGER_FILE, read_ledger
from pipelines.cli import main
from pipelines.deliveries import deliveries_from_paths, discover
from tests.conftest import focus_rows_below, slice_totals
from tests.fixtures.fault_proxy import FaultProxy, fault_proxy
from tests.fixtures.paths import REPO

pytestmark = [pytest.mark.serial, pytest.mark.slow]

# Azurite's well-known development account (public, documented by Microsoft): never a real secret.
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
CONNECTION_ENV = "GPULEDGER_TEST_AZURE_STORAGE"
NOVEMBER = "20261101-20261130"


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Azurite blob server on a free port; yields its connection string."""
    binary = REPO / ".azurite/node_modules/.bin/azurite-blob"
    found = str(binary) if binary.exists() else shutil.which("azurite-blob")
    if found is None:
        pytest.fail("azurite-blob not found: run `make install-azurite` (npm azurite@3.37.0)", pytrace=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    location = tmp_path_factory.mktemp("azurite")
    command = [found, "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(location)]
    process = subprocess.Popen([*command, "--silent", "--skipApiVersionCheck"], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                pytest.fail(f"azurite-blob exited with {process.returncode}", pytrace=False)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("azurite-blob not listening after 30 s", pytrace=False)
                time.sleep(0.2)
        yield (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{port}/{ACCOUNT};"
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # Azurite waits for idle keep-alive connections to close
            process.kill()
            process.wait(timeout=10)


@pytest.fixture
def container(azurite: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ContainerClient]:
    """A fresh container; the connection string reaches the sync only through the environment variable."""
    monkeypatch.setenv(CONNECTION_ENV, azurite)
    client = BlobServiceClient.from_connection_string(azurite).create_container(f"exports-{uuid.uuid4().hex[:12]}")
    yield client
    client.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> list[AzureDemoSource]:
    return write_azure_demo_exports(tmp_path_factory.mktemp("demo"))


def config_for(container: ContainerClient, export_path: str, **kwargs: object) -> AzureExportConfig:
    return AzureExportConfig(
        name=export_path.rsplit("/", 1)[-1],
        container=container.container_name,
        export_path=export_path,
        connection_string_env=CONNECTION_ENV,
        **kwargs,
    )


def upload(container: ContainerClient, root: Path, files: list[Path]) -> None:
    """Upload files under ``root`` (a local container mirror) under the same names; parts before manifests."""
    for path in sorted(files, key=lambda p: p.name in ("manifest.json", "_manifest.json")):
        container.upload_blob(path.relative_to(root).as_posix(), path.read_bytes(), overwrite=True)


def upload_run(
    container: ContainerClient,
    export_path: str,
    run_id: str,
    blobs: dict[str, bytes],
    *,
    listed: list[str] | None = None,
) -> str:
    """A hand-written November run: its parts, then a manifest listing ``listed`` (default: the parts)."""
    folder = f"{export_path}/{NOVEMBER}/{run_id}"
    for name, data in blobs.items():
        container.upload_blob(f"{folder}/{name}", data, overwrite=True)
    manifest = {
        "exportConfig": {"exportName": export_path, "type": "ActualCost"},
        "runInfo": {"runId": run_id, "submittedTime": "2026-12-09T06:00:00Z"},
        "blobs": [{"blobName": name} for name in (listed or [f"{folder}/{n}" for n in blobs])],
    }
    container.upload_blob(f"{folder}/manifest.json", json.dumps(manifest).encode(), overwrite=True)
    return folder


def landed_files(landing: Path) -> list[Path]:
    return sorted(p for p in landing.rglob("*") if p.is_file()) if landing.exists() else []


def test_sync_lands_newest_runs_and_loads_the_same_focus_rows_as_importing_by_hand(container, demo, tmp_path):
    root = demo[0].container
    directory = demo[0].path.parent
    newest_november = {source.name: source.expected_totals[-1].run_id for source in demo}
    restating = [
        p for p in root.rglob("*") if p.is_file() and newest_november.get(p.parent.parent.parent.name) in p.parts
    ]
    assert len(restating) == 4  # one part + manifest per export
    upload(container, root, [p for p in root.rglob("*") if p.is_file() and p not in restating])
    configs = {s.name: config_for(container, s.path.relative_to(root).as_posix()) for s in demo}
    landing = tmp_path / "landing"
    con = open_warehouse(tmp_path / "home-sync")

    def sync_and_load() -> dict[str, list]:
        pulled = {name: sync_azure_export(config, landing).pulled for name, config in configs.items()}
        local = landing / container.container_name / directory.relative_to(root)
        for delivery in discover(SourceConfig("helios", "azure-cost-details", local)):
            load_delivery(con, delivery)
        return pulled

    first = sync_and_load()
    for name, pulled in first.items():
        assert [d.billing_period for d in pulled] == ["2026-10", "2026-11"]
        assert pulled[0].downloaded_files == len(pulled[0].files) == 2
        assert pulled[1].version != newest_november[name]  # the month-to-date run: the restating one is not up yet
    first_rows = focus_rows_below(con, landing / container.container_name)

    # A restating run of November arrives: only its files are pulled, the older run's are never read again.
    upload(container, root, restating)
    second = sync_and_load()
    for name, pulled in second.items():
        (delivery,) = pulled
        assert (delivery.billing_period, delivery.version) == ("2026-11", newest_november[name])
        assert delivery.downloaded_files == len(delivery.files) == 1
        assert delivery.bytes == delivery.downloaded_bytes > 0
        assert all(len(f.md5) == 32 and f.etag for f in delivery.files)
    synced_rows = focus_rows_below(con, landing / container.container_name)
    assert synced_rows != first_rows

    # Nothing new: nothing downloaded, the landed files and the ledger untouched.
    before = {p: p.stat().st_mtime_ns for p in landed_files(landing)}
    for config in configs.values():
        result = sync_azure_export(config, landing)
        assert (result.pulled, result.unchanged) == ((), ("20261001-20261031", NOVEMBER))
    assert {p: p.stat().st_mtime_ns for p in landed_files(landing)} == before
    assert [(e.source, e.billing_period) for e in read_ledger(landing)] == [
        *[(name, period) for name in configs for period in ("2026-10", "2026-11")],
        *[(name, "2026-11") for name in configs],
    ]

    hand = open_warehouse(tmp_path / "home-hand")
    for delivery in deliveries_from_paths(hand, [directory], "azure-cost-details"):
        load_delivery(hand, delivery)
    assert synced_rows == focus_rows_below(hand, root)
    con.close()
    hand.close()


def test_a_run_still_being_written_is_not_landed(container, tmp_path):
    config = config_for(container, "finops/gpu-actual")
    container.upload_blob(f"finops/gpu-actual/{NOVEMBER}/run-1/part_0_0001.csv.gz", b"partial", overwrite=True)
    result = sync_azure_export(config, tmp_path / "landing")
    assert (result.pulled, result.unchanged) == ((), ())
    assert landed_files(tmp_path / "landing") == []


@pytest.mark.parametrize(
    "outside",
    [
        "finops/other-export/20261101-20261130/run-1/part_0_0001.csv.gz",
        "finops/gpu-actual/20261101-20261130/../../other-export/secret.csv.gz",
        "finops/gpu-actual/20261001-20261031/run-0/part_0_0001.csv.gz",
    ],
)
def test_a_manifest_listing_a_blob_outside_the_export_prefix_is_refused(container, tmp_path, outside):
    config = config_for(container, "finops/gpu-actual")
    container.upload_blob(outside.replace("/../..", ""), b"not this export's", overwrite=True)
    listed = [f"finops/gpu-actual/{NOVEMBER}/run-1/part_0_0001.csv.gz", outside]
    folder = upload_run(container, "finops/gpu-actual", "run-1", {"part_0_0001.csv.gz": b"data"}, listed=listed)
    with pytest.raises(InputError, match="points outside the export prefix") as caught:
        sync_azure_export(config, tmp_path / "landing", month="2026-11")
    assert folder in str(caught.value)
    assert landed_files(tmp_path / "landing") == []


def test_a_corrupted_download_is_discarded_and_never_recorded(container, tmp_path, caplog):
    config = config_for(container, "finops/gpu-actual")
    folder = upload_run(container, "finops/gpu-actual", "run-1", {"part_0_0001.csv.gz": b"good bytes"})
    # The service's Content-MD5 says other bytes: every attempt arrives corrupt.
    blob = container.get_blob_client(f"{folder}/part_0_0001.csv.gz")
    blob.set_http_headers(ContentSettings(content_md5=bytearray(16)))
    with pytest.raises(RemoteError, match="download failed 3 times: the bytes do not match the blob's Content-MD5"):
        sync_azure_export(config, tmp_path / "landing")
    assert caplog.text.count("download attempt") == 3
    assert landed_files(tmp_path / "landing") == []  # no part file, no temp file, no manifest, no ledger

    # Once the blob is whole again, the same run lands.
    blob.upload_blob(b"good bytes", overwrite=True)
    (delivery,) = sync_azure_export(config, tmp_path / "landing").pulled
    assert [f.bytes for f in delivery.files] == [10]
    names = [p.name for p in landed_files(tmp_path / "landing")]
    assert sorted(names) == sorted([LEDGER_FILE, "manifest.json", "part_0_0001.csv.gz"])
    assert not any(PART_SUFFIX in n for n in names)


@pytest.fixture
def proxied(azurite: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    """Azurite behind the fault proxy: the sync's connection string points at the proxy."""
    port = int(azurite.rsplit("127.0.0.1:", 1)[1].split("/", 1)[0])
    with fault_proxy(port) as proxy:
        monkeypatch.setenv(CONNECTION_ENV, azurite.replace(f"127.0.0.1:{port}", proxy.url.removeprefix("http://")))
        yield proxy


def test_a_dropped_connection_mid_blob_is_retried_and_the_short_file_never_counts(container, proxied, tmp_path):
    data = bytes(range(256)) * 4096  # 1 MiB, so half of it is a real partial transfer
    folder = upload_run(container, "finops/gpu-actual", "run-1", {"part_0_0001.csv.gz": data})
    proxied.inject("GET", "part_0_0001.csv.gz", "truncate")
    (delivery,) = sync_azure_export(config_for(container, "finops/gpu-actual"), tmp_path / "landing").pulled
    assert [fault for fault, _ in proxied.fired] == ["truncate"]
    assert len([p for m, p in proxied.requests if m == "GET" and "part_0_0001" in p]) >= 2
    landed = tmp_path / "landing" / container.container_name / folder / "part_0_0001.csv.gz"
    assert landed.read_bytes() == data
    assert [(f.bytes, f.md5) for f in delivery.files] == [(len(data), hashlib.md5(data).hexdigest())]
    assert len(read_ledger(tmp_path / "landing")) == 1
    assert not any(PART_SUFFIX in p.name for p in landed_files(tmp_path / "landing"))


def test_a_throttled_listing_is_retried(container, proxied, tmp_path):
    upload_run(container, "finops/gpu-actual", "run-1", {"part_0_0001.csv.gz": b"data"})
    proxied.inject("GET", "comp=list", "throttle", times=2)
    (delivery,) = sync_azure_export(config_for(container, "finops/gpu-actual"), tmp_path / "landing").pulled
    assert [fault for fault, _ in proxied.fired] == ["throttle", "throttle"]
    assert [f.bytes for f in delivery.files] == [4]


def test_limits_are_checked_before_anything_is_downloaded(container, tmp_path):
    upload_run(container, "finops/gpu-actual", "run-1", {"part_0_0001.csv.gz": b"x" * 100, "part_0_0002.csv.gz": b"y"})
    with pytest.raises(InputError, match="more than max_file_bytes=50"):
        sync_azure_export(config_for(container, "finops/gpu-actual", max_file_bytes=50), tmp_path / "landing")
    with pytest.raises(InputError, match="2 parts, more than max_files=1"):
        sync_azure_export(config_for(container, "finops/gpu-actual", max_files=1), tmp_path / "landing")
    assert landed_files(tmp_path / "landing") == []


def test_missing_connection_string_names_the_variable(container, tmp_path, monkeypatch):
    monkeypatch.delenv(CONNECTION_ENV)
    with pytest.raises(RemoteError) as caught:
        sync_azure_export(config_for(container, "finops/gpu-actual"), tmp_path / "landing")
    assert str(caught.value) == (
        f"Azure export 'gpu-actual': environment variable {CONNECTION_ENV} (the storage connection string) is not set"
    )


def test_no_azure_credential_names_the_default_credential_chain(tmp_path, monkeypatch):
    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    config = AzureExportConfig(
        name="gpu", container="exports", export_path="finops/gpu-actual", account_url="https://127.0.0.1:9/devstore"
    )
    with pytest.raises(RemoteError) as caught:
        sync_azure_export(config, tmp_path / "landing")
    message = str(caught.value)
    assert "\n" not in message
    assert "no Azure credential found by DefaultAzureCredential" in message
    assert "az login" in message and "connection_string_env" in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_logs_and_errors_never_contain_the_account_key(container, azurite, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    folder = upload_run(container, "finops/gpu-actual", "run-1", {"part_0_0001.csv.gz": b"data"})
    sync_azure_export(config_for(container, "finops/gpu-actual"), tmp_path / "landing")
    container.upload_blob(f"{folder}/manifest.json", b'{"blobs": ["../x"]}', overwrite=True)
    with pytest.raises(InputError) as caught:
        sync_azure_export(config_for(container, "finops/gpu-actual"), tmp_path / "landing")
    key_parts = (ACCOUNT_KEY, ACCOUNT_KEY[:20], azurite)
    assert caplog.records
    assert not any(part in caplog.text or part in str(caught.value) for part in key_parts)
    assert not any(part in (tmp_path / "landing" / LEDGER_FILE).read_text() for part in key_parts)


def test_configured_export_pair_syncs_and_runs_like_an_import_by_hand(container, demo, tmp_path, capsys):
    root = demo[0].container
    upload(container, root, [p for p in root.rglob("*") if p.is_file()])
    directory = demo[0].path.parent.relative_to(root).as_posix()
    home = tmp_path / "home"
    home.mkdir()
    exports = ", ".join(f'"{source.name}"' for source in demo)
    (home / "gpuledger.toml").write_text(
        f'[[sources]]\nname = "mca"\nformat = "azure-cost-details"\n[sources.azure_blob]\n'
        f'container = "{container.container_name}"\ndirectory = "{directory}"\nexports = [{exports}]\n'
        f'connection_string_env = "{CONNECTION_ENV}"\n',
        encoding="utf-8",
    )
    assert main(["sync", "--home", str(home)]) == 0
    assert "mca: 4 new deliveries" in capsys.readouterr().out  # two exports x two months
    assert main(["run", "--home", str(home)]) == 0
    by_hand = tmp_path / "by-hand"
    assert main(["import", str(demo[0].path.parent), "--home", str(by_hand), "--format", "azure-cost-details"]) == 0
    assert slice_totals(home) == slice_totals(by_hand) != []
