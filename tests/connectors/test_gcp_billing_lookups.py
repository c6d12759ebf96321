"""Cloud Billing lookups after a BigQuery sync: the real google-cloud-billing clients against a local REST stub."""

from __future__ import annotations

import datetime as dt
import json
import logging
import shutil
from contextlib import closing
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import duckdb
import google.auth
import pyarrow.parquet as pq
import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from google.type import money_pb2

from connectors.gcp.billing import BillingClients, money_to_decimal
from connectors.gcp.exports import discover, is_dataset
from connectors.gcp.sync import sync_gcp_export
from connectors.sync import SourceSync
from gpuledger.gates.load import load_delivery
from gpuledger.warehouse.home import open_warehouse
from gpuledger_demo.gcp_exports import BILLING_ACCOUNT
from models.config import load_config
from models.errors import InputError, RemoteError
from models.landing import read_ledger
from pipelines.cli import main
from tests.connectors.test_gcp_sync import DATASET, JOBS, NOW, PROJECT, client_for, config, demo, extracts, stub_with
from tests.fixtures.cloudbilling_stub import CatalogSku, CloudBillingStub, Tier, money

__all__ = ["demo"]  # the module-scoped demo export fixture, shared with the BigQuery sync tests

ACCOUNT_PATH = f"/v1/billingAccounts/{BILLING_ACCOUNT}"
PROJECTS = ["helios-llm", "helios-platform", "helios-research", "helios-speech", "helios-vision"]


def billing_stub(**kwargs: object) -> CloudBillingStub:
    stub = CloudBillingStub(**kwargs)  # type: ignore[arg-type]
    stub.add_account(BILLING_ACCOUNT, "Helios Research", PROJECTS)
    return stub


def clients_for(stub: CloudBillingStub) -> BillingClients:
    return BillingClients.connect(endpoint=stub.url, credentials=AnonymousCredentials())


def lookups_folder(landing: Path) -> Path:
    return landing / DATASET / "_billing"


def test_lookups_land_after_a_sync_and_the_export_reader_ignores_them(demo, tmp_path):
    landing = tmp_path / "landing"
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=20) as bq, billing_stub() as billing:
        result = sync_gcp_export(config(), landing, client=client_for(bq), billing=clients_for(billing), now=NOW)
        first_requests = list(billing.requests)
        before = {p: p.stat().st_mtime_ns for p in lookups_folder(landing).iterdir()}
        again = sync_gcp_export(config(), landing, client=client_for(bq), billing=clients_for(billing), now=NOW)
    assert [p.billing_period for p in result.pulled] == ["2026-10", "2026-11"]
    assert result.lookups is not None and result.lookups.warnings == ()
    # the project links came in three pages of two
    project_requests = [path for _, path in first_requests if path.startswith(f"{ACCOUNT_PATH}/projects")]
    assert len(project_requests) == 3
    assert "pageToken" not in project_requests[0] and "pageToken=2" in project_requests[1]
    assert "pageToken=4" in project_requests[2]
    assert result.lookups.linked_projects == tuple(PROJECTS)

    folder = lookups_folder(landing)
    assert sorted(p.name for p in folder.iterdir()) == ["accounts.json", "projects.json"]  # all rows had list cost
    accounts = json.loads((folder / "accounts.json").read_text())
    assert accounts == {
        "format": 1,
        "accounts": [
            {
                "account_id": BILLING_ACCOUNT,
                "display_name": "Helios Research",
                "open": True,
                "currency": "USD",
                "master_billing_account": "",
            }
        ],
    }
    projects = json.loads((folder / "projects.json").read_text())["projects"]
    assert [(p["project_id"], p["billing_account_id"], p["billing_enabled"]) for p in projects] == [
        (p, BILLING_ACCOUNT, True) for p in PROJECTS
    ]
    assert not list(landing.rglob("*.gpuledger-part"))
    # a repeated sync with unchanged answers rewrites nothing
    assert again.pulled == () and {p: p.stat().st_mtime_ns for p in folder.iterdir()} == before

    # the lookups are no export: the reader finds the same deliveries, none holding a lookup file
    dataset = result.export_folder
    with_lookups = discover(dataset, "gcp-bq", "helios-gcp")
    assert is_dataset(dataset) and [d.billing_period for d in with_lookups] == ["2026-10", "2026-11"]
    assert not any("_billing" in f.parts for d in with_lookups for f in d.files)
    shutil.rmtree(folder)
    assert discover(dataset, "gcp-bq", "helios-gcp") == with_lookups


def test_permission_denied_is_one_warning_line_and_the_rows_still_land(demo, tmp_path, caplog):
    landing = tmp_path / "landing"
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=20) as bq, billing_stub() as billing:
        billing.denied.add(ACCOUNT_PATH)  # the account and its project links
        with caplog.at_level(logging.WARNING, logger="connectors.gcp.billing"):
            result = sync_gcp_export(config(), landing, client=client_for(bq), billing=clients_for(billing), now=NOW)
        logged = [r.getMessage() for r in caplog.records if r.name == "connectors.gcp.billing"]
        assert not lookups_folder(landing).exists()  # nothing fetched, nothing written
        billing.denied.clear()
        billing.denied.add(f"{ACCOUNT_PATH}/projects")  # the account alone is readable
        partly = sync_gcp_export(config(), landing, client=client_for(bq), billing=clients_for(billing), now=NOW)
    assert [p.billing_period for p in result.pulled] == ["2026-10", "2026-11"]
    assert read_ledger(landing) == list(result.pulled)
    assert result.lookups is not None
    account_warning, projects_warning = result.lookups.warnings
    assert "get_billing_account" in account_warning and "billing.accounts.get" in account_warning
    assert "HTTP 403" in account_warning and "the rows are landed" in account_warning
    assert "billing.resourceAssociations.list" in projects_warning
    assert all("\n" not in w for w in result.lookups.warnings)
    assert logged == list(result.lookups.warnings)

    assert partly.lookups is not None and len(partly.lookups.warnings) == 1
    assert "billing.resourceAssociations.list" in partly.lookups.warnings[0]
    assert [a.display_name for a in partly.lookups.accounts] == ["Helios Research"]
    assert sorted(p.name for p in lookups_folder(landing).iterdir()) == ["accounts.json"]


def test_lookups_off_calls_no_billing_api(demo, tmp_path):
    landing = tmp_path / "landing"
    with stub_with(demo, extracts(demo, correction=False), rows_per_month=5) as bq, billing_stub() as billing:
        result = sync_gcp_export(
            config(lookups=False), landing, client=client_for(bq), billing=clients_for(billing), now=NOW
        )
    assert result.pulled and result.lookups is None
    assert billing.requests == [] and not lookups_folder(landing).exists()


def _without_list_cost(demo, folder: Path) -> Path:
    """The demo's extract with no cost_at_list column, as older or partner exports send it."""
    files = [str(f) for f in extracts(demo, correction=False)]
    target = folder / "no-list-cost.parquet"
    duckdb.execute(
        f"COPY (SELECT * EXCLUDE (cost_at_list) FROM read_parquet($files)) TO '{target}' (FORMAT parquet)",
        {"files": files},
    )
    return target


def _catalog(rows: list[tuple[str, str, str]]) -> tuple[dict[str, list[CatalogSku]], set[str]]:
    """A catalog entry for every (service, SKU, pricing unit) of the rows, with chosen tier shapes; and the SKUs
    whose entry has no single list rate for the rows."""
    catalog: dict[str, list[CatalogSku]] = {}
    no_rate: set[str] = set()
    for index, (service, sku, unit) in enumerate(sorted(rows)):
        tiers: tuple[Tier, ...] = (Tier(0, str(index % 3), 125_000_000 * (index % 8)),)
        description = unit
        if index == 1:  # a free first tier: no single list rate
            tiers = (Tier(0, "0", 0), Tier(100, "2", 500_000_000))
            no_rate.add(sku)
        elif index == 2:  # volume tiers: the first (undiscounted) rate is the list rate
            tiers = (Tier(0, "3", 250_000_000), Tier(1000, "2", 0))
        elif index == 3:  # priced per another unit than the rows': no rate
            description = "tebibyte"
            no_rate.add(sku)
        catalog.setdefault(service, []).append(CatalogSku(sku, f"u{index}", description, tiers))
    return catalog, no_rate


def _focus(home: Path, dataset: Path) -> tuple[list[tuple], list[tuple]]:
    """(totals per account and period, every charge row's list pricing) after loading the dataset folder."""
    with closing(open_warehouse(home)) as con:
        for delivery in discover(dataset, "gcp-bq", "helios-gcp"):
            load_delivery(con, delivery)
        totals = con.execute(
            "SELECT BillingAccountId, BillingPeriodStart, sum(BilledCost), sum(EffectiveCost), sum(ListCost), count(*)"
            " FROM focus.costs GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        rows = con.execute(
            "SELECT x_SourceLineItemId, SkuId, ChargeCategory, PricingQuantity, PricingUnit, ListUnitPrice, ListCost,"
            " BilledCost FROM focus.costs WHERE SkuId IS NOT NULL ORDER BY ALL"
        ).fetchall()
    return totals, rows


@pytest.mark.slow
def test_sku_list_prices_fill_list_cost_where_the_export_lacks_it(demo, tmp_path):
    landing = tmp_path / "landing"
    source = _without_list_cost(demo, tmp_path)
    rows = duckdb.execute(
        "SELECT DISTINCT service.id, sku.id, usage.pricing_unit FROM read_parquet($f)", {"f": str(source)}
    ).fetchall()
    catalog, no_rate = _catalog(rows)
    with stub_with(demo, [source], rows_per_month=60) as bq, billing_stub(page_size=3) as billing:
        billing.skus = catalog
        result = sync_gcp_export(config(), landing, client=client_for(bq), billing=clients_for(billing), now=NOW)
    assert result.lookups is not None and result.lookups.warnings == ()
    # one listing per service of the rows, in the rows' currency
    listed = billing.skus_requests()
    services = {r[0] for r in rows}
    assert {p.split("/")[3] for p in listed} == services and all("currencyCode=USD" in p for p in listed)

    prices = pq.read_table(lookups_folder(landing) / "sku_prices.parquet").to_pylist()
    landed_skus = duckdb.execute(
        "SELECT DISTINCT sku.id FROM read_parquet($f)",
        {"f": [str(landing / f.name) for e in result.pulled for f in e.files]},
    ).fetchall()
    assert sorted(p["sku_id"] for p in prices) == sorted(s for (s,) in landed_skus)  # only the SKUs of the rows
    by_sku = {s.sku_id: s for entries in catalog.values() for s in entries}
    for price in prices:
        sku = by_sku[price["sku_id"]]
        assert price["unit_price"] == money(sku.tiers[0]) and price["tier_count"] == len(sku.tiers)
        assert (price["currency"], price["usage_unit"], price["tier_start_amount"]) == ("USD", sku.usage_unit, 0)

    dataset = result.export_folder
    deliveries = discover(dataset, "gcp-bq", "helios-gcp")
    assert len(deliveries) == 2 and not any("_billing" in f.parts for d in deliveries for f in d.files)
    priced_totals, priced_rows = _focus(tmp_path / "home-priced", dataset)
    (lookups_folder(landing) / "sku_prices.parquet").unlink()
    plain_totals, plain_rows = _focus(tmp_path / "home-plain", dataset)
    # list prices never change billed money: BilledCost and EffectiveCost totals are exactly the same
    assert [t[:4] for t in priced_totals] == [t[:4] for t in plain_totals]
    assert all(isinstance(t[2], Decimal) for t in priced_totals)
    assert [t[4] for t in priced_totals] != [t[4] for t in plain_totals]

    rates = {p["sku_id"]: p["unit_price"] for p in prices}
    filled = fallback = 0
    for priced, plain in zip(priced_rows, plain_rows, strict=True):
        line, sku, category, quantity, unit, list_unit_price, list_cost, billed = priced
        assert plain[:5] == priced[:5] and plain[7] == billed
        if category == "Usage" and quantity and unit != "Units" and sku in rates and sku not in no_rate:
            rate = rates[sku]
            assert list_unit_price == rate, line
            assert list_cost == (quantity * rate).quantize(Decimal("1e-10"), ROUND_HALF_UP), line
            filled += 1
        else:
            assert (list_unit_price, list_cost) == (plain[5], plain[6]), line  # today's fallback: ListCost = cost
            fallback += 1
    assert filled and fallback
    assert {r[1] for r in priced_rows} & no_rate  # the sample reaches SKUs without a single rate


@pytest.mark.parametrize(
    ("units", "nanos", "expected"),
    [
        (1, 500_000_000, "1.5"),
        (0, 1, "0.000000001"),
        (0, 999_999_999, "0.999999999"),
        (9_223_372_036_854_775_807, 999_999_999, "9223372036854775807.999999999"),
        (-1, -500_000_000, "-1.5"),
        (3, 0, "3"),
    ],
)
def test_money_units_and_nanos_are_exact(units, nanos, expected):
    assert money_to_decimal(money_pb2.Money(currency_code="USD", units=units, nanos=nanos)) == Decimal(expected)


def test_big_units_on_the_wire_land_exactly(tmp_path, demo):
    """units travel as an int64 string: 123456789012 units + 5 nanos must land without float rounding."""
    landing = tmp_path / "landing"
    source = _without_list_cost(demo, tmp_path)
    rows = duckdb.execute(
        "SELECT DISTINCT service.id, sku.id, usage.pricing_unit FROM read_parquet($f)", {"f": str(source)}
    ).fetchall()
    big = (Tier(0, "123456789012", 5),)
    with stub_with(demo, [source], rows_per_month=3) as bq, billing_stub() as billing:
        for service, sku, unit in rows:
            billing.skus.setdefault(service, []).append(CatalogSku(sku, "u", unit, big))
        sync_gcp_export(config(), landing, client=client_for(bq), billing=clients_for(billing), now=NOW)
    prices = pq.read_table(lookups_folder(landing) / "sku_prices.parquet").to_pylist()
    assert prices and {p["unit_price"] for p in prices} == {Decimal("123456789012.000000005")}


SECRET_TOKEN = "ya29.stub-SECRET-access-token-0123456789"
REFRESH_TOKEN = "1//stub-SECRET-refresh-token"
CLIENT_SECRET = "stub-SECRET-client-secret"


def test_the_gcp_connectors_never_log_a_credential(demo, tmp_path, monkeypatch, caplog):
    key_file = tmp_path / "adc.json"
    key_file.write_text(
        json.dumps(
            {
                "type": "authorized_user",
                "client_id": "stub-client.apps.googleusercontent.com",
                "client_secret": CLIENT_SECRET,
                "refresh_token": REFRESH_TOKEN,
            }
        )
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    credentials, _ = google.auth.default()  # the fake file's secrets, held by the credentials
    # a current access token: no refresh (Google's token endpoint is unreachable); google-auth keeps naive UTC
    credentials.token = SECRET_TOKEN
    credentials.expiry = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(hours=1)
    with billing_stub() as billing:
        billing.denied.add(f"{ACCOUNT_PATH}/projects")  # an error text carrying the request's context
        with stub_with(demo, extracts(demo, correction=False), rows_per_month=5) as bq, caplog.at_level(logging.DEBUG):
            client = bigquery.Client(project=JOBS, credentials=credentials, client_options={"api_endpoint": bq.url})
            clients = BillingClients.connect(endpoint=billing.url, credentials=credentials)
            result = sync_gcp_export(config(), tmp_path / "landing", client=client, billing=clients, now=NOW)
            bq.fail_next(1, 403, "accessDenied")
            with pytest.raises(RemoteError) as refused:
                sync_gcp_export(config(), tmp_path / "landing", client=client, billing=clients, now=NOW)
        assert f"Bearer {SECRET_TOKEN}" in billing.authorizations  # the token really was used
    assert result.pulled and result.lookups is not None and result.lookups.warnings
    assert any(r.levelno == logging.DEBUG for r in caplog.records)  # DEBUG logging was on
    texts = [caplog.text, str(refused.value), *result.lookups.warnings, *(repr(r.args) for r in caplog.records)]
    for secret in (SECRET_TOKEN, REFRESH_TOKEN, CLIENT_SECRET):
        assert not any(secret in text for text in texts), secret
    assert PROJECT in str(refused.value)


GCP_SOURCE = '[[sources]]\nname = "gcp"\nformat = "gcp-bq"\n[sources.bigquery]\nproject = "p"\ndataset = "billing"\n'


def test_lookups_is_a_boolean_option_of_a_bigquery_source(tmp_path):
    (tmp_path / "gpuledger.toml").write_text(GCP_SOURCE + "lookups = false\n")
    (source,) = load_config(tmp_path).sources
    assert source.remote is not None and source.remote.lookups is False
    (tmp_path / "gpuledger.toml").write_text(GCP_SOURCE + 'lookups = "no"\n')
    with pytest.raises(InputError, match="true or false") as refused:
        load_config(tmp_path)
    assert refused.value.column == "bigquery.lookups"
    with pytest.raises(InputError) as refused:
        config(lookups="yes")
    assert refused.value.column == "lookups"


def test_sync_warns_of_linked_projects_no_team_covers(tmp_path, monkeypatch, capsys):
    (tmp_path / "gpuledger.toml").write_text(
        GCP_SOURCE + '[teams]\naccounts = { "helios-llm" = "llm", "helios-vision" = "vision" }\n'
    )
    warning = "GCP export 'gcp': billing lookups: list_skus services/X (USD) failed (HTTP 500: boom); ..."

    def synced(source, month=None, **kwargs):
        return SourceSync(source.name, (), (), (warning,), ("helios-llm", "helios-research", "helios-vision"))

    monkeypatch.setattr("connectors.sync.sync_source", synced)
    assert main(["sync", "--home", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"  warning: {warning}" in out
    assert "  warning: linked project(s) with no team in [teams] accounts: helios-research" in out
