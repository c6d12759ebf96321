"""Pulling GCP billing export rows from BigQuery: the real google-cloud-bigquery client against a local REST stub."""

from __future__ import annotations

import datetime as dt
from contextlib import closing
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

from connectors.gcp.exports import discover
from connectors.gcp.sync import GcpExportConfig, sync_gcp_export
from gpuledger.gates.load import load_delivery
from gpuledger.warehouse.home import open_warehouse
from gpuledger_demo.gcp_exports import DETAILED_TABLE, STANDARD_TABLE, GcpDemoSource, write_gcp_demo_exports
from models.errors import InputError, RemoteError
from models.landing import read_ledger
from tests.fixtures.bigquery_stub import BigQueryStub
from tests.fixtures.fault_proxy import fault_proxy

pytestmark = [pytest.mark.serial, pytest.mark.slow]

PROJECT, DATASET, JOBS = "helios-billing", "billing_export", "helios-finops"
NOW = dt.datetime(2026, 12, 15, tzinfo=dt.UTC)
CORRECTION_FOLDER = "export_time=2026-12-09T03:00:00Z"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> GcpDemoSource:
    sources = write_gcp_demo_exports(tmp_path_factory.mktemp("gcp-demo"))
    return next(s for s in sources if s.detailed and s.file_format == "parquet")


def extracts(demo: GcpDemoSource, *, correction: bool) -> list[Path]:
    """The demo's Parquet parts: the rows BigQuery holds before (or only) the appended correction."""
    files = sorted(demo.path.rglob("*.parquet"))
    return [f for f in files if (CORRECTION_FOLDER in f.parts) == correction]


def stub_with(demo: GcpDemoSource, files: list[Path], rows_per_month: int | None = None) -> BigQueryStub:
    """The demo's detailed table (the client parses REST rows slowly: quick tests keep a few rows a month)."""
    stub = BigQueryStub(PROJECT, DATASET, page_size=4000 if rows_per_month is None else 40)
    stub.add_table(DETAILED_TABLE, files, rows_per_month=rows_per_month)
    stub.add_table(STANDARD_TABLE)  # same costs without resources: listed, never read
    stub.add_table("cloud_pricing_export")
    return stub


def client_for(stub: BigQueryStub) -> bigquery.Client:
    return bigquery.Client(project=JOBS, credentials=AnonymousCredentials(), client_options={"api_endpoint": stub.url})


def config(**changes: object) -> GcpExportConfig:
    return GcpExportConfig(**{"name": "helios-gcp", "project": PROJECT, "dataset": DATASET, "billing_project": JOBS,
                              **changes})  # fmt: skip


def sync(stub: BigQueryStub, landing: Path, **kwargs: object):
    return sync_gcp_export(kwargs.pop("cfg", config()), landing, client=client_for(stub), now=NOW, **kwargs)


def focus_totals(con) -> list[tuple]:
    rows = con.execute(
        "SELECT BillingAccountId, strftime(BillingPeriodStart, '%Y-%m-%dT%H:%MZ'), sum(BilledCost),"
        " sum(EffectiveCost), count(*) FROM focus.costs GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert rows
    return rows


def loaded_totals(home: Path, folder: Path, period: str | None = None) -> list[tuple]:
    """FOCUS totals after loading the deliveries (of ``period``) found in ``folder`` into the warehouse at ``home``."""
    with closing(open_warehouse(home)) as con:
        for delivery in discover(folder, "gcp-bq", "helios-gcp"):
            if period in (None, delivery.billing_period):
                load_delivery(con, delivery)
        return focus_totals(con)


def landed_files(landing: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in landing.rglob("*") if p.is_file()}


def test_first_sync_lands_both_invoice_months_and_loads_like_the_extracts_by_hand(demo, tmp_path):
    landing = tmp_path / "landing"
    with stub_with(demo, [*extracts(demo, correction=False), *extracts(demo, correction=True)]) as stub:
        result = sync(stub, landing)
    october, november = result.pulled
    assert (october.billing_period, november.billing_period) == ("2026-10", "2026-11")
    assert november.version == "2026-12-08T21:14:09.318207Z"  # the appended correction's export time
    assert result.unchanged == ()
    assert result.export_folder == landing / DATASET
    table = result.export_folder / DETAILED_TABLE
    assert sorted(p.relative_to(table).as_posix() for p in table.rglob("*.parquet")) == [
        f"invoice_month=202610/export_time={october.version}/part-00000.parquet",
        f"invoice_month=202611/export_time={november.version}/part-00000.parquet",
    ]
    assert not list(landing.rglob("_writing-*"))
    for entry in result.pulled:
        assert (entry.provider, entry.source, entry.export) == (
            "gcp",
            "helios-gcp",
            f"{PROJECT}.{DATASET}.{table.name}",
        )
        assert entry.rows and entry.bytes == sum(f.bytes for f in entry.files) > 0
        assert all(len(f.md5) == 32 for f in entry.files) and entry.manifest_etag
    assert read_ledger(landing) == list(result.pulled)
    # explicit columns, one query per month, the standard table never read
    row_queries = stub.row_queries()
    assert len(row_queries) == 2 and all("*" not in q and "`export_time`" in q for q in row_queries)
    assert not any(STANDARD_TABLE in q for q in stub.queries)
    assert "`seller_name`" in row_queries[0] and "`_PARTITIONTIME`" not in row_queries[0]

    synced = loaded_totals(tmp_path / "home-sync", result.export_folder)
    assert len(synced) == 2
    assert synced == loaded_totals(tmp_path / "home-hand", demo.path)


def test_nothing_new_queries_no_rows_and_lands_nothing(demo, tmp_path):
    landing = tmp_path / "landing"
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=100) as stub:
        assert [p.rows for p in sync(stub, landing).pulled] == [100, 100]
        before, queries = landed_files(landing), len(stub.queries)
        again = sync(stub, landing)
        assert stub.queries[queries:] and not any(q in stub.row_queries() for q in stub.queries[queries:])
    assert again.pulled == ()
    assert again.unchanged == (f"{DETAILED_TABLE}/2026-10", f"{DETAILED_TABLE}/2026-11")
    assert landed_files(landing) == before


def test_appended_rows_land_alone_in_a_new_folder_and_are_not_counted_twice(demo, tmp_path):
    landing = tmp_path / "landing"
    home = tmp_path / "home-sync"
    with stub_with(demo, extracts(demo, correction=False)) as stub:
        first = sync(stub, landing, month="2026-11")
        assert [p.billing_period for p in first.pulled] == ["2026-11"]  # October is not asked for
        assert len(stub.row_queries()) == 1
        before = loaded_totals(home, first.export_folder)
        stub.append(DETAILED_TABLE, extracts(demo, correction=True))
        second = sync(stub, landing, month="2026-11")
        assert "@previous" in stub.row_queries()[-1]
    (appended,) = second.pulled
    assert (appended.billing_period, appended.rows) == ("2026-11", 2)
    assert appended.version == "2026-12-08T21:14:09.318207Z"
    november = second.export_folder / DETAILED_TABLE / "invoice_month=202611"
    assert sorted(p.name for p in november.iterdir()) == [f"export_time={first.pulled[0].version}",
                                                          f"export_time={appended.version}"]  # fmt: skip
    assert [(p.billing_period, p.rows) for p in read_ledger(landing)] == [("2026-11", 12909), ("2026-11", 2)]

    after = loaded_totals(home, second.export_folder)  # the same warehouse: November's slice is replaced
    assert after != before and len(after) == 1
    assert after == loaded_totals(tmp_path / "home-hand", demo.path, "2026-11")


def test_a_throttled_request_is_retried(demo, tmp_path):
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=100) as stub:
        stub.fail_next(1, 429, "rateLimitExceeded")
        result = sync(stub, tmp_path / "landing", month="2026-10")
        assert [p.billing_period for p in result.pulled] == ["2026-10"]
        assert stub.requests[0] == stub.requests[1]  # the refused tables.list, then its retry


def test_a_connection_dropped_mid_page_is_retried_and_lands_the_same_rows(demo, tmp_path):
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=100) as stub:
        clean = sync(stub, tmp_path / "clean", month="2026-10")
        with fault_proxy(int(stub.url.rsplit(":", 1)[1])) as proxy:
            proxy.inject("GET", "/queries/", "truncate")
            client = bigquery.Client(project=JOBS, credentials=AnonymousCredentials(),
                                     client_options={"api_endpoint": proxy.url})  # fmt: skip
            dropped = sync_gcp_export(config(), tmp_path / "dropped", client=client, now=NOW, month="2026-10")
        assert [fault for fault, _ in proxy.fired] == ["truncate"]
    (first,), (second,) = clean.pulled, dropped.pulled
    assert (second.rows, second.billing_period) == (first.rows, first.billing_period) == (100, "2026-10")
    tables = [pq.read_table(tmp_path / name / f.name) for name, entry in (("clean", first), ("dropped", second))
              for f in entry.files]  # fmt: skip
    assert tables[0].equals(tables[1])


def test_failures_that_persist_and_refusals_are_one_clear_line(demo, tmp_path):
    landing = tmp_path / "landing"
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=100) as stub:
        stub.fail_next(1000, 503, "backendError")
        with pytest.raises(RemoteError, match=r"still failing after 1 s of retries") as failed:
            sync(stub, landing, cfg=config(retry_deadline=1))
        assert failed.value.__cause__ is None and failed.value.__suppress_context__
        stub.clear_failures()
        stub.fail_next(1, 403, "accessDenied")
        with pytest.raises(RemoteError, match=r"roles/bigquery.dataViewer.*roles/bigquery.jobUser"):
            sync(stub, landing)
        with pytest.raises(RemoteError, match=r"not found"):
            sync(stub, landing, cfg=config(table=STANDARD_TABLE))
        with pytest.raises(InputError, match=r"max_rows=10"):
            sync(stub, landing, cfg=config(max_rows=10))
    assert not landing.exists() or not list(landing.rglob("*.parquet"))
    assert read_ledger(landing) == []


def test_missing_application_default_credentials_name_the_chain(tmp_path, monkeypatch):
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud"))  # no application_default_credentials.json
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # not on Google Cloud: no metadata server to ask
    with pytest.raises(RemoteError) as missing:
        sync_gcp_export(config(), tmp_path / "landing", now=NOW)
    message = str(missing.value)
    assert "Application Default Credentials" in message and "GOOGLE_APPLICATION_CREDENTIALS" in message
    assert "gcloud auth application-default login" in message and "\n" not in message
    assert missing.value.__cause__ is None


@pytest.mark.parametrize(
    ("changes", "column"),
    [
        ({"table": "gcp_billing_export_focus_01A2B3_C4D5E6_F7A8B9"}, "table"),
        ({"table": "cloud_pricing_export"}, "table"),
        ({"project": "Not A Project"}, "project"),
        ({"dataset": "a.b"}, "dataset"),
        ({"months_back": -1}, "months_back"),
        ({"max_rows": 0}, "max_rows"),
    ],
)
def test_config_is_validated(changes, column):
    with pytest.raises(InputError) as refused:
        config(**changes)
    assert refused.value.column == column


def test_month_must_be_yyyy_mm(tmp_path):
    with pytest.raises(InputError, match="YYYY-MM"):
        sync_gcp_export(config(), tmp_path, month="202611", client=object())  # type: ignore[arg-type]


def test_a_crash_while_writing_leaves_no_extract_and_no_ledger_entry(demo, tmp_path, monkeypatch):
    landing = tmp_path / "landing"

    def crash(*args, **kwargs):
        raise OSError("disk full")

    with stub_with(demo, extracts(demo, correction=False), rows_per_month=100) as stub:
        with monkeypatch.context() as patched:
            patched.setattr("connectors.gcp.sync.pq.write_table", crash)
            with pytest.raises(OSError, match="disk full"):
                sync(stub, landing)
        assert [p for p in landing.rglob("*") if p.is_file()] == []
        assert not list(landing.rglob("_writing-*")) and read_ledger(landing) == []
        assert [p.billing_period for p in sync(stub, landing).pulled] == ["2026-10", "2026-11"]
