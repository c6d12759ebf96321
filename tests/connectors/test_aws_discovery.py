"""AWS export discovery: the real boto3 clients against a wire-format stub of Data Exports and CUR, with the moto
S3 server (behind the fault proxy of the S3 sync tests) holding the deliveries."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from connectors.aws.discovery import discover_destination
from connectors.sync import LOCK_FILE, SourceSync, sync_source
from gpuledger_demo.aws_exports import DemoSource, write_demo_exports
from models.config import SourceConfig, load_config
from models.errors import InputError, RemoteError
from models.landing import LEDGER_FILE, read_ledger
from pipelines.deliveries import discover
from tests.connectors import test_aws_sync
from tests.fixtures.aws_billing_stub import AwsBillingStub

pytestmark = pytest.mark.serial

# The S3 sync tests' fixtures: moto's S3 server behind their fault proxy, dummy credentials, a fresh bucket.
proxy, aws_env, s3, bucket = test_aws_sync.proxy, test_aws_sync.aws_env, test_aws_sync.s3, test_aws_sync.bucket

NOW = datetime.now(UTC)
LONG_AGO = NOW - timedelta(days=3)


@pytest.fixture(scope="module")
def stub() -> Iterator[AwsBillingStub]:
    with AwsBillingStub(page_size=2) as started:
        yield started


@pytest.fixture
def billing(stub: AwsBillingStub, aws_env, monkeypatch: pytest.MonkeyPatch) -> AwsBillingStub:
    """The stub, emptied, as both APIs' endpoint (botocore's per-service variables win over AWS_ENDPOINT_URL)."""
    stub.reset()
    monkeypatch.setenv("AWS_ENDPOINT_URL_BCM_DATA_EXPORTS", stub.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL_COST_AND_USAGE_REPORT_SERVICE", stub.url)
    return stub


def _home(tmp_path: Path, name: str, fmt: str, s3_table: str) -> Path:
    home = tmp_path / f"home-{len(list(tmp_path.glob('home-*')))}"
    home.mkdir()
    text = f'[[sources]]\nname = "{name}"\nformat = "{fmt}"\n[sources.s3]\n{s3_table}\n'
    (home / "gpuledger.toml").write_text(text, encoding="utf-8")
    return home


def _source(home: Path) -> SourceConfig:
    (source,) = load_config(home).sources
    return source


def _sync(home: Path, month: str | None = None) -> SourceSync:
    return sync_source(_source(home), month)


def _demo(tmp_path: Path, s3, fmt: str) -> tuple[DemoSource, str]:
    """The demo export of ``fmt`` uploaded whole to its bucket (every period, every execution)."""
    demo = next(s for s in write_demo_exports(tmp_path / "demo") if s.format == fmt)
    bucket_root = demo.path.parents[1]
    s3.create_bucket(Bucket=bucket_root.name)
    test_aws_sync._upload(s3, bucket_root, [p for p in bucket_root.rglob("*") if p.is_file()])
    return demo, bucket_root.name


def _landed(landing: Path) -> dict[str, bytes]:
    skip = (LEDGER_FILE, LOCK_FILE)
    return {
        str(p.relative_to(landing)): p.read_bytes() for p in landing.rglob("*") if p.is_file() and p.name not in skip
    }


def _deliveries(landing: Path) -> list[tuple[object, ...]]:
    return [
        (e.billing_period, e.version, e.manifest, e.manifest_etag, [(f.name, f.bytes, f.md5) for f in e.files])
        for e in read_ledger(landing)
    ]


def _s3_lists(proxy_requests: list[tuple[str, str]]) -> list[str]:
    return [path for method, path in proxy_requests if method == "GET" and "list-type" in path]


# --- finding the destination by name ---------------------------------------------------------------------------------


def test_discovered_cur2_export_lands_what_the_explicit_bucket_lands(billing, s3, aws_env, tmp_path):
    cur2, bucket_name = _demo(tmp_path, s3, "aws-cur2")
    for other in ("finance-focus", "sandbox-cur2", "archive"):  # the export is on the second page
        billing.add_export(other, bucket="elsewhere", prefix="x")
    arn = billing.add_export(cur2.name, bucket=bucket_name, prefix="cur2")
    billing.add_execution(arn, "DELIVERY_SUCCESS", LONG_AGO)
    explicit = _home(tmp_path, cur2.name, "aws-cur2", f'bucket = "{bucket_name}"\nprefix = "cur2"')
    discovered = _home(tmp_path, cur2.name, "aws-cur2", "discover = true")
    assert _source(discovered).path == discovered / "landing" / cur2.name / cur2.name  # nothing landed yet

    by_bucket, by_name = _sync(explicit), _sync(discovered)

    assert [p.billing_period for p in by_name.pulled] == ["2026-10", "2026-11"]
    assert by_name == by_bucket
    assert billing.requests == ["ListExports", "ListExports", "GetExport"]  # two pages; nothing landed to compare
    explicit_landing, discovered_landing = explicit / "landing" / cur2.name, discovered / "landing" / cur2.name
    assert _deliveries(discovered_landing) == _deliveries(explicit_landing) != []
    assert _landed(discovered_landing) == _landed(explicit_landing)
    # Reloaded, the source's folder is where the definition's prefix put the export, and it reads the same.
    source = _source(discovered)
    assert source.path == discovered_landing / "cur2" / cur2.name
    found = [
        (d.billing_period, d.version, [f.relative_to(discovered_landing) for f in d.files]) for d in discover(source)
    ]
    expected = [
        (d.billing_period, d.version, [f.relative_to(explicit_landing) for f in d.files])
        for d in discover(_source(explicit))
    ]
    assert found == expected != []


def test_discovered_cur1_report_is_found_across_pages_and_synced(billing, s3, aws_env, tmp_path):
    cur1, bucket_name = _demo(tmp_path, s3, "aws-cur1")
    billing.add_report("finance-hourly", bucket="elsewhere")
    billing.add_report("finance-daily", bucket="elsewhere")
    billing.add_report(cur1.name, bucket=bucket_name, prefix="cur1", versioning="CREATE_NEW_REPORT")
    explicit = _home(
        tmp_path, "legacy", "aws-cur1", f'bucket = "{bucket_name}"\nprefix = "cur1"\nexport = "{cur1.name}"'
    )
    discovered = _home(tmp_path, "legacy", "aws-cur1", f'discover = true\nexport = "{cur1.name}"')

    by_bucket, by_name = _sync(explicit), _sync(discovered)

    assert [p.billing_period for p in by_name.pulled] == ["2026-10", "2026-11"]
    assert by_name == by_bucket
    assert billing.requests == ["DescribeReportDefinitions"] * 2  # two pages; CUR 1 has no executions to ask
    assert _deliveries(discovered / "landing" / "legacy") == _deliveries(explicit / "landing" / "legacy")
    assert _source(discovered).path == discovered / "landing" / "legacy" / "cur1" / cur1.name


@pytest.mark.parametrize(
    ("fmt", "table", "named"),
    [
        ("aws-cur2", "FOCUS_1_0_AWS", "format aws-focus"),
        ("aws-focus", "COST_AND_USAGE_REPORT", "format aws-cur2"),
        ("aws-cur2", "COST_OPTIMIZATION_RECOMMENDATIONS", "not read by gpuledger"),
    ],
)
def test_an_export_of_another_table_than_the_format_reads_is_refused(billing, aws_env, fmt, table, named):
    billing.add_export("helios", table=table)
    with pytest.raises(RemoteError) as refused:
        discover_destination("helios", fmt, "helios")
    message = str(refused.value)
    assert f"format {fmt}" in message and f"queries {table}" in message and named in message
    assert "\n" not in message


def test_focus_1_0_and_1_2_exports_are_both_aws_focus(billing, aws_env):
    billing.add_export("focus10", table="FOCUS_1_0_AWS", prefix="f10")
    billing.add_export("focus12", table="FOCUS_1_2_AWS", prefix="f12/")
    assert discover_destination("a", "aws-focus", "focus10").prefix == "f10"
    assert discover_destination("b", "aws-focus", "focus12").prefix == "f12"


@pytest.mark.parametrize(("fmt", "what"), [("aws-cur2", "Data Export"), ("aws-cur1", "Cost and Usage Report")])
def test_an_unknown_name_lists_the_names_found(billing, aws_env, fmt, what):
    for name in ("zeta", "alpha", "mid"):  # two pages
        billing.add_export(name)
        billing.add_report(name)
    with pytest.raises(RemoteError, match=rf"no {what} named 'helios' .*\(found: alpha, mid, zeta\)"):
        discover_destination("helios", fmt, "helios")


@pytest.mark.parametrize(
    ("s3_table", "key"),
    [
        ('discover = true\nbucket = "someone-elses"', "bucket"),
        ('discover = true\nprefix = "cur2/old"', "prefix"),
        ('discover = true\nbucket = "billing"\nprefix = "cur2"\nregion = "eu-west-1"', "region"),
    ],
)
def test_a_configured_destination_contradicting_the_definition_is_refused_before_s3(
    billing, aws_env, tmp_path, s3_table, key
):
    billing.add_export("helios", bucket="billing", prefix="cur2")
    home = _home(tmp_path, "helios", "aws-cur2", s3_table)
    with pytest.raises(RemoteError, match=rf"{key} '.*' contradicts the definition of 'helios', .*s3://billing/cur2"):
        _sync(home)
    assert aws_env.requests == []


def test_the_same_destination_configured_and_discovered_is_accepted(billing, aws_env):
    billing.add_export("helios", bucket="billing", prefix="cur2")
    destination = discover_destination("helios", "aws-cur2", "helios", bucket="billing", prefix="/cur2/")
    assert (destination.bucket, destination.prefix, destination.region) == ("billing", "cur2", "us-east-1")


@pytest.mark.parametrize(
    ("fmt", "definition", "refused"),
    [
        ("aws-cur2", {"output_format": "TEXT_OR_CSV", "compression": "ZIP"}, "TEXT_OR_CSV/ZIP"),
        ("aws-cur2", {"output_format": "PARQUET", "compression": "GZIP"}, "PARQUET/GZIP"),
        ("aws-cur1", {"output_format": "textORcsv", "compression": "ZIP"}, "textORcsv/ZIP"),
        ("aws-cur1", {"output_format": "Parquet", "compression": "Parquet", "artifacts": ["ATHENA"]}, "Athena"),
    ],
)
def test_deliveries_the_reader_cannot_open_are_refused(billing, aws_env, fmt, definition, refused):
    (billing.add_report if fmt == "aws-cur1" else billing.add_export)("helios", **definition)
    with pytest.raises(RemoteError, match=refused):
        discover_destination("helios", fmt, "helios")


@pytest.mark.parametrize(
    ("fmt", "definition"),
    [
        ("aws-cur2", {"output_format": "TEXT_OR_CSV", "compression": "GZIP"}),
        ("aws-cur1", {"output_format": "Parquet", "compression": "Parquet"}),
    ],
)
def test_gzipped_csv_and_parquet_deliveries_are_accepted(billing, aws_env, fmt, definition):
    (billing.add_report if fmt == "aws-cur1" else billing.add_export)("helios", **definition)
    assert discover_destination("helios", fmt, "helios").format == definition["output_format"]


# --- executions: S3 is listed only when something was delivered -----------------------------------------------------


def _put_execution(s3, bucket: str, execution: str) -> None:
    """A November delivery of export ``helios`` (under prefix ``cur2``): its data file, then its manifest."""
    root = "cur2/helios"
    key = f"{root}/data/BILLING_PERIOD=2026-11/{execution}/helios-00001.snappy.parquet"
    s3.put_object(Bucket=bucket, Key=key, Body=f"rows of {execution}".encode())
    manifest = {"executionId": execution, "dataFiles": [f"s3://{bucket}/{key}"]}
    s3.put_object(
        Bucket=bucket, Key=f"{root}/metadata/BILLING_PERIOD=2026-11/helios-Manifest.json", Body=json.dumps(manifest)
    )


def _synced_once(billing: AwsBillingStub, s3, bucket: str, tmp_path: Path) -> tuple[Path, str]:
    """A discovered source whose first execution is landed, and its export's ARN."""
    arn = billing.add_export("helios", bucket=bucket, prefix="cur2")
    billing.add_execution(arn, "DELIVERY_SUCCESS", LONG_AGO)
    _put_execution(s3, bucket, "e1")
    home = _home(tmp_path, "helios", "aws-cur2", "discover = true")
    assert [p.version for p in _sync(home).pulled] == ["e1"]
    return home, arn


def test_without_a_new_successful_delivery_s3_is_not_listed(billing, s3, bucket, aws_env, tmp_path):
    home, arn = _synced_once(billing, s3, bucket, tmp_path)
    billing.add_execution(arn, "DELIVERY_FAILURE", NOW)
    billing.add_execution(arn, "QUERY_IN_PROCESS", NOW)
    _put_execution(s3, bucket, "e2")  # in S3, but no execution says it was delivered
    aws_env.reset()

    result = _sync(home)

    assert (result.pulled, result.unchanged) == ((), ("2026-11",))
    assert aws_env.requests == []  # not one S3 request
    assert billing.requests[-1] == "ListExecutions"
    assert [e.version for e in read_ledger(home / "landing" / "helios")] == ["e1"]
    assert _sync(home, "2026-10").unchanged == ()  # a month never landed is listed, not assumed unchanged
    assert _s3_lists(aws_env.requests) != []


def test_a_new_successful_delivery_is_pulled(billing, s3, bucket, aws_env, tmp_path):
    home, arn = _synced_once(billing, s3, bucket, tmp_path)
    _put_execution(s3, bucket, "e2")
    billing.add_execution(arn, "DELIVERY_SUCCESS", NOW + timedelta(seconds=1))
    aws_env.reset()

    result = _sync(home)

    assert [(p.billing_period, p.version, p.files) for p in result.pulled] == [("2026-11", "e2", 1)]
    assert _s3_lists(aws_env.requests) != []
    assert (home / "landing/helios/cur2/helios/data/BILLING_PERIOD=2026-11/e2/helios-00001.snappy.parquet").exists()
    assert _source(home).path == home / "landing/helios/cur2/helios"


def test_an_unhealthy_export_warns_on_one_line_and_still_syncs(billing, s3, bucket, aws_env, tmp_path, caplog):
    arn = billing.add_export("helios", bucket=bucket, status="UNHEALTHY", reason="INSUFFICIENT_PERMISSION")
    billing.add_execution(arn, "DELIVERY_SUCCESS", LONG_AGO)
    _put_execution(s3, bucket, "e1")
    home = _home(tmp_path, "helios", "aws-cur2", "discover = true")

    with caplog.at_level(logging.WARNING, logger="connectors.aws.discovery"):
        result = _sync(home)

    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "'helios' is UNHEALTHY (INSUFFICIENT_PERMISSION)" in warning and "\n" not in warning
    assert [p.version for p in result.pulled] == ["e1"]


def test_a_healthy_export_does_not_warn(billing, aws_env, caplog):
    billing.add_export("helios")
    with caplog.at_level(logging.WARNING):
        discover_destination("helios", "aws-cur2", "helios")
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


# --- the APIs' errors ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("operation", "kind", "status"),
    [("ListExports", "ThrottlingException", 400), ("GetExport", "InternalServerException", 500)],
)
def test_throttling_and_server_errors_are_retried(billing, aws_env, operation, kind, status):
    billing.add_export("helios")
    billing.fail_next(operation, kind, status)
    assert discover_destination("helios", "aws-cur2", "helios").bucket == "billing"
    assert billing.requests.count(operation) == 2


def test_throttled_executions_are_retried_too(billing, s3, bucket, aws_env, tmp_path):
    home, _ = _synced_once(billing, s3, bucket, tmp_path)
    billing.fail_next("ListExecutions", "ThrottlingException")
    assert _sync(home).unchanged == ("2026-11",)
    assert billing.requests[-2:] == ["ListExecutions"] * 2


def test_a_refused_call_is_one_line_naming_the_source_and_the_call(billing, aws_env):
    billing.fail_next("ListExports", "AccessDeniedException")
    with pytest.raises(RemoteError) as refused:
        discover_destination("helios", "aws-cur2", "helios")
    assert (
        str(refused.value)
        == "source 'helios': AWS Data Exports ListExports refused: AccessDeniedException Rate exceeded"
    )
    assert billing.requests == ["ListExports"]  # not retried


def test_missing_credentials_name_the_credential_chain(billing, aws_env, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(RemoteError, match="no AWS credentials found by boto3's default credential chain"):
        discover_destination("helios", "aws-cur2", "helios")
    assert billing.requests == []


# --- configuration ---------------------------------------------------------------------------------------------------


def test_discover_makes_the_bucket_optional_and_keeps_a_configured_prefix(tmp_path):
    home = _home(tmp_path, "helios", "aws-focus", 'discover = true\nprefix = "focus/"\nexport = "helios-focus"')
    source = _source(home)
    assert source.remote is not None and source.remote.discover is True
    assert source.path == home / "landing" / "helios" / "focus" / "helios-focus"


@pytest.mark.parametrize(
    ("s3_table", "column"),
    [("discover = false", "s3.bucket"), ('discover = "yes"\nbucket = "b"', "s3.discover"), ("", "s3.bucket")],
)
def test_discover_is_a_boolean_and_without_it_the_bucket_is_required(tmp_path, s3_table, column):
    home = _home(tmp_path, "helios", "aws-cur2", s3_table)
    with pytest.raises(InputError) as refused:
        load_config(home)
    assert refused.value.column == column
