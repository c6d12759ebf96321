"""Pulling AWS exports from S3: a real moto server on 127.0.0.1, behind a small proxy that injects faults."""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import logging
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from dagster import SkipReason, build_schedule_context, build_sensor_context
from moto.server import ThreadedMotoServer

from connectors.aws.sync import AwsExportConfig, sync_aws_export
from connectors.progress import show_progress
from connectors.sync import LOCK_FILE
from gpuledger.gates.load import load_delivery
from gpuledger.warehouse.home import open_warehouse
from gpuledger_demo.aws_exports import DemoSource, write_demo_exports
from models.config import SourceConfig
from models.errors import GpuledgerError, InputError, RemoteError
from models.landing import LEDGER_FILE, read_ledger
from pipelines.batches import ingestion_partition_key
from pipelines.cli import main
from pipelines.definitions import WarehouseResource, delivery_sensor, nightly, nightly_sync
from pipelines.deliveries import deliveries_from_paths, discover
from tests.conftest import focus_rows_below, slice_totals
from tests.fixtures.fault_proxy import FaultProxy, fault_proxy

pytestmark = [pytest.mark.serial, pytest.mark.slow]

SECRET = "wJalrXUtnFEMI-gpuledger-test-secret-K7MDENG"


@pytest.fixture(scope="module")
def proxy() -> Iterator[FaultProxy]:
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    with fault_proxy(moto.get_host_and_port()[1]) as started:
        yield started
    moto.stop()


@pytest.fixture
def aws_env(proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FaultProxy:
    """Dummy credentials and AWS_ENDPOINT_URL (read by botocore itself) pointing at the proxy; never real AWS."""
    proxy.reset()
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_ROLE_ARN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAGPULEDGERTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    return proxy


@pytest.fixture
def s3(aws_env: FaultProxy):
    return boto3.client("s3")


@pytest.fixture
def bucket(s3) -> str:
    name = f"billing-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


def _cur1(bucket: str, **limits: int) -> AwsExportConfig:
    return AwsExportConfig(name="legacy", bucket=bucket, prefix="cur", export="helios", kind="cur1", **limits)


def _put_cur1_period(s3, bucket: str, assembly: str, files: dict[str, bytes], keys: list[str] | None = None) -> None:
    """A CUR 1 assembly of ``files`` (name -> bytes) for 2026-11 and the period manifest naming it."""
    folder = "cur/helios/20261101-20261201"
    for name, data in files.items():
        s3.put_object(Bucket=bucket, Key=f"{folder}/{assembly}/{name}", Body=data)
    manifest = {
        "assemblyId": assembly,
        "account": "012345678901",
        "reportKeys": keys if keys is not None else [f"{folder}/{assembly}/{name}" for name in files],
    }
    s3.put_object(Bucket=bucket, Key=f"{folder}/helios-Manifest.json", Body=json.dumps(manifest).encode())


def _landed_files(landing: Path) -> list[str]:
    return sorted(str(p.relative_to(landing)) for p in landing.rglob("*") if p.is_file())


def test_first_sync_lands_the_manifested_files_and_records_them(s3, bucket, tmp_path):
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"one" * 1000, "helios-2.csv.gz": b"two"})
    s3.put_object(Bucket=bucket, Key="cur/helios/20261101-20261201/stale/helios-1.csv.gz", Body=b"old")
    landing = tmp_path / "landing"

    result = sync_aws_export(_cur1(bucket), landing)

    assert result.export_folder == landing / "cur" / "helios"
    assert _landed_files(landing) == [
        LEDGER_FILE,
        "cur/helios/20261101-20261201/a1/helios-1.csv.gz",
        "cur/helios/20261101-20261201/a1/helios-2.csv.gz",
        "cur/helios/20261101-20261201/helios-Manifest.json",
    ]
    (delivery,) = result.pulled
    assert (delivery.provider, delivery.source, delivery.export) == ("aws", "legacy", "helios")
    assert (delivery.billing_period, delivery.version) == ("2026-11", "a1")
    assert delivery.manifest == "cur/helios/20261101-20261201/helios-Manifest.json"
    assert (delivery.downloaded_files, delivery.bytes, delivery.rows) == (2, 3003, None)
    assert [(f.name, f.bytes, f.md5) for f in delivery.files] == [
        ("cur/helios/20261101-20261201/a1/helios-1.csv.gz", 3000, hashlib.md5(b"one" * 1000).hexdigest()),
        ("cur/helios/20261101-20261201/a1/helios-2.csv.gz", 3, hashlib.md5(b"two").hexdigest()),
    ]
    assert all(f.etag.strip('"') for f in delivery.files)
    assert read_ledger(landing) == [delivery]


def test_second_sync_downloads_nothing(s3, bucket, tmp_path, aws_env):
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"x" * 100})
    landing = tmp_path / "landing"
    sync_aws_export(_cur1(bucket), landing)
    aws_env.reset()

    again = sync_aws_export(_cur1(bucket), landing)

    assert (again.pulled, again.unchanged) == ((), ("2026-11",))
    assert aws_env.gets() == []
    assert len(read_ledger(landing)) == 1


def test_changed_manifest_downloads_only_the_files_not_landed_yet(s3, bucket, tmp_path, aws_env):
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"first"})
    landing = tmp_path / "landing"
    (first,) = sync_aws_export(_cur1(bucket), landing).pulled
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"first", "helios-2.csv.gz": b"second"})
    aws_env.reset()

    (second,) = sync_aws_export(_cur1(bucket), landing).pulled

    assert [p for p in aws_env.gets() if ".csv.gz" in p] == [
        f"/{bucket}/cur/helios/20261101-20261201/a1/helios-2.csv.gz"
    ]
    assert (second.downloaded_files, len(second.files), second.downloaded_bytes) == (1, 2, 6)
    assert second.files[0] == first.files[0]  # carried over from the ledger, MD5 included
    assert second.files[1].md5 == hashlib.md5(b"second").hexdigest()
    assert read_ledger(landing) == [first, second]


def test_overwrite_mode_report_replaces_the_same_keys_and_is_pulled_again(s3, bucket, tmp_path, aws_env):
    """OVERWRITE_REPORT versioning: every refresh writes the same keys (no assembly folder) and a new manifest."""
    folder = "cur/helios/20261101-20261201"
    key = f"{folder}/helios-1.csv.gz"
    landing = tmp_path / "landing"
    for assembly, body in (("a1", b"version-1"), ("a2", b"version-2")):  # same size, other bytes: only the ETag tells
        s3.put_object(Bucket=bucket, Key=key, Body=body)
        manifest = {"assemblyId": assembly, "account": "012345678901", "reportKeys": [key]}
        s3.put_object(Bucket=bucket, Key=f"{folder}/helios-Manifest.json", Body=json.dumps(manifest).encode())
        (delivery,) = sync_aws_export(_cur1(bucket), landing).pulled
        assert (delivery.version, delivery.downloaded_files) == (assembly, 1)
        assert (landing / key).read_bytes() == body
        assert delivery.files[0].md5 == hashlib.md5(body).hexdigest()
    assert [e.version for e in read_ledger(landing)] == ["a1", "a2"]
    assert sync_aws_export(_cur1(bucket), landing).pulled == ()


def test_data_folder_without_manifest_is_not_a_delivery(s3, bucket, tmp_path):
    s3.put_object(Bucket=bucket, Key="cur/helios/20261201-20270101/a1/helios-1.csv.gz", Body=b"partial")
    config = AwsExportConfig(name="cur2", bucket=bucket, prefix="cur", export="helios", kind="data-export")
    s3.put_object(Bucket=bucket, Key="cur/helios/data/BILLING_PERIOD=2026-12/e1/helios-00001.snappy.parquet", Body=b"p")
    landing = tmp_path / "landing"

    assert sync_aws_export(_cur1(bucket), landing).pulled == ()
    assert sync_aws_export(config, landing).pulled == ()
    assert _landed_files(landing) == []


@pytest.mark.parametrize(
    "key",
    [
        "cur/helios/20261101-20261201/../../../secrets/helios-1.csv.gz",
        "cur/other/20261101-20261201/a1/helios-1.csv.gz",
        "s3://someone-elses-bucket/cur/helios/20261101-20261201/a1/helios-1.csv.gz",
        "/etc/passwd",
    ],
)
def test_manifest_key_outside_the_export_prefix_is_rejected(s3, bucket, tmp_path, key):
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"fine"}, keys=[key])
    landing = tmp_path / "landing"
    with pytest.raises(InputError, match="points outside the export prefix") as caught:
        sync_aws_export(_cur1(bucket), landing)
    assert caught.value.file == f"s3://{bucket}/cur/helios/20261101-20261201/helios-Manifest.json"
    assert _landed_files(landing) == []


def test_downloads_are_drawn_on_a_terminal(s3, bucket, tmp_path):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"x" * 3000})
    screen = Terminal()
    with show_progress(screen):
        sync_aws_export(_cur1(bucket), tmp_path / "landing")
    frames = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue()).split("\r")
    key = f"s3://{bucket}/cur/helios/20261101-20261201/a1/helios-1.csv.gz"
    assert any(frame.startswith(key) and "100%" in frame for frame in frames)


def test_file_count_and_size_limits_stop_before_any_download(s3, bucket, tmp_path, aws_env):
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"a" * 10, "helios-2.csv.gz": b"b" * 5000})
    landing = tmp_path / "landing"
    with pytest.raises(InputError, match="over the limit of 1"):
        sync_aws_export(_cur1(bucket, max_files=1), landing)
    with pytest.raises(InputError, match="over the per-file limit of 4096") as caught:
        sync_aws_export(_cur1(bucket, max_file_bytes=4096), landing)
    assert caught.value.file.endswith("helios-2.csv.gz")
    assert _landed_files(landing) == []
    assert not [path for path in aws_env.gets() if ".csv.gz" in path]


def test_dropped_connection_is_retried_and_the_short_file_never_counts(s3, bucket, tmp_path, aws_env):
    data = bytes(range(256)) * 400
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": data})
    landing = tmp_path / "landing"

    aws_env.inject("GET", "helios-1.csv.gz", "truncate", times=3)
    with pytest.raises(RemoteError, match=r"helios-1\.csv\.gz: download failed after 3 attempt"):
        sync_aws_export(_cur1(bucket), landing)
    assert len(aws_env.fired) == 3
    assert _landed_files(landing) == []  # no part file, no manifest, no ledger

    aws_env.reset()
    aws_env.inject("GET", "helios-1.csv.gz", "truncate", times=1)
    (delivery,) = sync_aws_export(_cur1(bucket), landing).pulled
    assert len(aws_env.fired) == 1
    assert (landing / "cur/helios/20261101-20261201/a1/helios-1.csv.gz").read_bytes() == data
    assert delivery.downloaded_files == 1


def test_throttling_is_retried_with_backoff(s3, bucket, tmp_path, aws_env):
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"data"})
    aws_env.inject("GET", "helios-1.csv.gz", "throttle", times=1)
    aws_env.inject("GET", "list-type=2", "throttle", times=1)

    (delivery,) = sync_aws_export(_cur1(bucket), tmp_path / "landing").pulled

    assert [fault for fault, _ in aws_env.fired] == ["throttle", "throttle"]
    assert delivery.downloaded_files == 1


def test_throttling_past_the_attempt_limit_is_one_clear_error(s3, bucket, tmp_path, aws_env):
    aws_env.inject("GET", "list-type=2", "throttle", times=10)
    with pytest.raises(RemoteError, match="ListObjectsV2 refused: SlowDown") as caught:
        sync_aws_export(_cur1(bucket, max_attempts=2), tmp_path / "landing")
    assert "\n" not in str(caught.value)


def test_missing_credentials_name_the_credential_chain(aws_env, monkeypatch, tmp_path):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(RemoteError) as caught:
        sync_aws_export(_cur1("any-bucket"), tmp_path / "landing")
    message = str(caught.value)
    assert "no AWS credentials found by boto3's default credential chain" in message
    assert "AWS_ACCESS_KEY_ID" in message and "AWS_PROFILE" in message
    assert "\n" not in message
    assert isinstance(caught.value, GpuledgerError)  # the CLI prints these as one line, no traceback


def test_logs_and_errors_never_contain_the_secret_key(s3, bucket, tmp_path, aws_env, caplog):
    caplog.set_level(logging.DEBUG)  # botocore's own debug logging included
    _put_cur1_period(s3, bucket, "a1", {"helios-1.csv.gz": b"data"})
    aws_env.inject("GET", "helios-1.csv.gz", "throttle", times=1)
    sync_aws_export(_cur1(bucket), tmp_path / "landing")
    aws_env.inject("GET", "list-type=2", "throttle", times=10)
    with pytest.raises(RemoteError) as caught:
        sync_aws_export(_cur1(bucket, max_attempts=2), tmp_path / "landing")
    assert "botocore" in caplog.text  # the capture did see the SDK's requests
    assert SECRET not in caplog.text
    assert SECRET not in str(caught.value)
    assert SECRET not in (tmp_path / "landing" / LEDGER_FILE).read_text()


# --- end to end: the demo's exports, restated, synced, loaded == the same files imported by hand --------------------


def _upload(s3, bucket_root: Path, paths: list[Path]) -> None:
    """Put files of a local bucket mirror under their keys."""
    for path in sorted(paths):
        s3.put_object(Bucket=bucket_root.name, Key=path.relative_to(bucket_root).as_posix(), Body=path.read_bytes())


def _stage_first_execution(bucket_root: Path, manifest_path: Path, version_field: str, files_field: str) -> list[Path]:
    """Rewrite the period's manifest as its earlier one (the demo keeps only the newest); the newest's data files."""
    manifest = json.loads(manifest_path.read_text())
    newest = manifest[version_field]
    (listed,) = manifest[files_field]
    key = listed.removeprefix(f"s3://{bucket_root.name}/")
    period_folder = (bucket_root / key).parents[1]
    (older,) = [p.name for p in period_folder.iterdir() if p.is_dir() and p.name != newest]
    manifest_path.write_text(
        json.dumps(dict(manifest, **{version_field: older, files_field: [listed.replace(newest, older)]}))
    )
    return sorted(p for p in (period_folder / newest).rglob("*") if p.is_file())


def test_synced_restatement_loads_the_same_focus_rows_as_importing_by_hand(s3, aws_env, tmp_path):
    demo = write_demo_exports(tmp_path / "demo")
    cur2, cur1 = (next(s for s in demo if s.format == fmt) for fmt in ("aws-cur2", "aws-cur1"))
    configs = {
        cur2.name: AwsExportConfig(
            name=cur2.name, bucket=cur2.path.parents[1].name, prefix="cur2", export=cur2.name, kind="data-export"
        ),
        cur1.name: AwsExportConfig(
            name=cur1.name, bucket=cur1.path.parents[1].name, prefix="cur1", export=cur1.name, kind="cur1"
        ),
    }
    november = {
        cur2.name: (
            cur2.path / "metadata/BILLING_PERIOD=2026-11/helios-cur2-Manifest.json",
            "executionId",
            "dataFiles",
        ),
        cur1.name: (cur1.path / "20261101-20261201/helios-legacy-cur-Manifest.json", "assemblyId", "reportKeys"),
    }

    # Stage 1: November's first execution is the current one; the restating one does not exist yet.
    staged = tmp_path / "staged"
    shutil.copytree(tmp_path / "demo", staged)
    restating: dict[str, list[Path]] = {}
    for name, (manifest_path, version_field, files_field) in november.items():
        bucket_root = staged / configs[name].bucket
        newest = _stage_first_execution(
            bucket_root, staged / manifest_path.relative_to(tmp_path / "demo"), version_field, files_field
        )
        restating[name] = [tmp_path / "demo" / p.relative_to(staged) for p in newest]
        s3.create_bucket(Bucket=bucket_root.name)
        _upload(s3, bucket_root, [p for p in bucket_root.rglob("*") if p.is_file() and p not in newest])

    landing = tmp_path / "landing"
    sync_con = open_warehouse(tmp_path / "home-sync")

    def sync_and_load() -> dict[str, list]:
        pulled = {}
        for name, config in configs.items():
            result = sync_aws_export(config, landing / config.bucket)
            pulled[name] = result.pulled
            fmt = "aws-cur2" if config.kind == "data-export" else "aws-cur1"
            for delivery in discover(SourceConfig(name, fmt, result.export_folder)):
                load_delivery(sync_con, delivery)
        return pulled

    first = sync_and_load()
    assert {name: sorted(d.billing_period for d in pulled) for name, pulled in first.items()} == {
        cur2.name: ["2026-10", "2026-11"],  # 2026-12 has data but no manifest
        cur1.name: ["2026-10", "2026-11"],
    }
    assert not (landing / configs[cur2.name].bucket / "cur2/helios-cur2/data/BILLING_PERIOD=2026-12").exists()
    first_rows = focus_rows_below(sync_con, landing)

    # Stage 2: the restating execution arrives, data first, then its manifest overwrites the period's.
    for name, (manifest_path, _, _) in november.items():
        _upload(s3, tmp_path / "demo" / configs[name].bucket, restating[name])
        _upload(s3, tmp_path / "demo" / configs[name].bucket, [manifest_path])
    aws_env.reset()
    second = sync_and_load()

    for pulled in second.values():
        (delivery,) = pulled
        assert delivery.billing_period == "2026-11"
        assert delivery.downloaded_files == len(delivery.files) == 1
        assert all(".." not in f.name for f in delivery.files)
    downloaded = [p for p in aws_env.gets() if not p.endswith("-Manifest.json")]
    assert len(downloaded) == 2  # the two restating files, nothing already landed
    synced_rows = focus_rows_below(sync_con, landing)
    assert synced_rows != first_rows

    hand_con = open_warehouse(tmp_path / "home-hand")
    for delivery in deliveries_from_paths(hand_con, [cur2.path, cur1.path], "auto"):
        load_delivery(hand_con, delivery)
    assert synced_rows == focus_rows_below(hand_con, tmp_path / "demo")
    sync_con.close()
    hand_con.close()


def _configured_cur2_home(s3, tmp_path: Path) -> tuple[DemoSource, Path]:
    """The demo's CUR 2.0 bucket uploaded whole, and a home whose only source is it, as [sources.s3]."""
    demo = write_demo_exports(tmp_path / "demo")
    cur2 = next(s for s in demo if s.format == "aws-cur2")
    bucket_root = cur2.path.parents[1]
    s3.create_bucket(Bucket=bucket_root.name)
    _upload(s3, bucket_root, [p for p in bucket_root.rglob("*") if p.is_file()])
    home = tmp_path / "home"
    home.mkdir()
    (home / "gpuledger.toml").write_text(
        f'[[sources]]\nname = "{cur2.name}"\nformat = "aws-cur2"\n'
        f'[sources.s3]\nbucket = "{bucket_root.name}"\nprefix = "cur2"\n',
        encoding="utf-8",
    )
    return cur2, home


def test_configured_s3_source_syncs_and_runs_like_an_import_by_hand(s3, aws_env, tmp_path, capsys):
    cur2, home = _configured_cur2_home(s3, tmp_path)
    assert main(["sync", "--home", str(home), "--month", "2026-11"]) == 0
    assert f"{cur2.name}: 1 new delivery" in capsys.readouterr().out
    assert main(["sync", "--home", str(home)]) == 0  # October now; November already landed
    out = capsys.readouterr().out
    assert f"{cur2.name}: 1 new delivery" in out and "already landed: 2026-11" in out
    assert main(["run", "--home", str(home)]) == 0
    by_hand = tmp_path / "by-hand"
    assert main(["import", str(cur2.path), "--home", str(by_hand), "--format", "aws-cur2"]) == 0
    assert slice_totals(home) == slice_totals(by_hand) != []
    capsys.readouterr()
    assert main(["status", "--home", str(home)]) == 0
    (line,) = [row for row in capsys.readouterr().out.splitlines() if row.startswith(cur2.name)]
    # source, format, from, pulled at and its period, deliveries pulled, loaded, newest period, loaded at
    assert line.split()[1:3] == ["aws-cur2", "s3"] and line.split()[4:8] == ["2026-10", "2", "2", "2026-11"]


def test_delivery_sensor_requests_the_partitions_of_what_it_landed_once(s3, aws_env, tmp_path):
    cur2, home = _configured_cur2_home(s3, tmp_path)
    sensor = delivery_sensor(cur2.name)
    resources = {"warehouse": WarehouseResource(home=str(home))}
    first = sensor(build_sensor_context(resources=resources))
    assert [(r.job_name, r.partition_key) for r in first.run_requests] == [
        ("focus_ingestion", ingestion_partition_key("2026-10", "aws")),
        ("focus_ingestion", ingestion_partition_key("2026-11", "aws")),
    ]  # one batch: the barrier requests the split and the publish after them (tests/pipelines/test_batches.py)
    assert [r.partition_keys for r in first.dynamic_partitions_requests] == [["2026-10", "2026-11"]]
    assert len({r.run_key for r in first.run_requests}) == 2
    again = sensor(build_sensor_context(cursor=first.cursor, resources=resources))
    assert again.run_requests == [] and again.cursor == first.cursor


def test_nightly_schedule_syncs_every_source_and_the_sensor_requests_what_landed(s3, aws_env, tmp_path):
    cur2, home = _configured_cur2_home(s3, tmp_path)
    (request,) = nightly.evaluate_tick(build_schedule_context()).run_requests
    assert (nightly.job_name, nightly.execution_timezone, nightly.default_status.value) == (
        "nightly_sync", "UTC", "RUNNING")  # fmt: skip
    resources = {"warehouse": WarehouseResource(home=str(home))}
    result = nightly_sync.execute_in_process(run_config=request.run_config, resources=resources)
    assert result.success
    assert [p.billing_period for p in read_ledger(home / "landing" / cur2.name)] == ["2026-10", "2026-11"]
    tick = delivery_sensor(cur2.name)(build_sensor_context(resources=resources))
    assert [r.partition_key for r in tick.run_requests if r.job_name == "focus_ingestion"] == [
        ingestion_partition_key("2026-10", "aws"),
        ingestion_partition_key("2026-11", "aws"),
    ]


def test_a_sensor_tick_during_a_sync_skips_instead_of_failing(s3, aws_env, tmp_path):
    cur2, home = _configured_cur2_home(s3, tmp_path)
    landing = home / "landing" / cur2.name
    resources = {"warehouse": WarehouseResource(home=str(home))}
    landing.mkdir(parents=True)
    with open(landing / LOCK_FILE, "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        tick = delivery_sensor(cur2.name)(build_sensor_context(resources=resources))
    assert isinstance(tick, SkipReason) and "another sync of it is running" in (tick.skip_message or "")
    assert read_ledger(landing) == []
