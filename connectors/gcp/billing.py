"""Cloud Billing lookups beside a landed BigQuery billing export: account names, project links, SKU list prices.

The export rows name a billing account only by its id and often carry no ``cost_at_list``; the Cloud Billing
API fills both gaps (google-cloud-billing's ``CloudBillingClient`` and ``CloudCatalogClient``, REST transport).
After a ``[sources.bigquery]`` sync lands its rows (``lookups = true``, the default), for every export table
folder of the landed dataset (``gcp_billing_export_[resource_]v1_<ACCOUNT>``, the account id with underscores):

- ``get_billing_account`` -> ``<dataset>/_billing/accounts.json`` (display name, open, currency);
- ``list_project_billing_info`` -> ``<dataset>/_billing/projects.json`` (project -> billing account links);
- for each month this sync landed whose rows lack ``cost_at_list`` (column absent or NULL): ``list_skus`` of the
  services of those rows, in the rows' currency -> ``<dataset>/_billing/sku_prices.parquet`` (the SKUs of those
  rows: first tier's unit price as an exact decimal, its start amount, the tier count, the price's effective
  time), which the GCP normalization joins (``gpuledger.normalize.gcp_billing``).

The ``_billing`` folder is no export table and its files no extract: the export reader never counts them. Each
file is written through a temp file and a rename (``connectors.ledger.write_atomically``), and only when its
content changes; an entry that could not be fetched keeps its previously landed value.

The lookups are optional: a refused or failing call never fails the row sync. It becomes one warning line (for
403, naming the missing permission: ``billing.accounts.get``, ``billing.resourceAssociations.list``), logged and
returned in :attr:`BillingLookups.warnings`. Credentials: Application Default Credentials, like the rows; a
warning quotes the API's own error message, never a credential.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from google.api_core import exceptions as api_exceptions
from google.auth import exceptions as auth_exceptions
from google.auth.credentials import Credentials
from google.cloud import billing_v1
from google.type import money_pb2

from connectors.gcp.exports import billing_account_from_table
from connectors.ledger import atomic_file, write_atomically
from models.gcp import LOOKUP_FOLDER, SKU_PRICES_FILE
from models.landing import LedgerEntry

log = logging.getLogger(__name__)

ACCOUNTS_FILE = "accounts.json"
PROJECTS_FILE = "projects.json"
_FORMAT = 1
_PERMISSIONS = {
    "get_billing_account": "billing.accounts.get (roles/billing.viewer on the billing account)",
    "list_project_billing_info": "billing.resourceAssociations.list (roles/billing.viewer on the billing account)",
    "list_skus": "none: enable the Cloud Billing API (cloudbilling.googleapis.com) in the credentials' project",
}
SKU_PRICE_SCHEMA = pa.schema(
    [
        ("sku_id", pa.string()),
        ("service_id", pa.string()),
        ("currency", pa.string()),
        ("usage_unit", pa.string()),
        ("usage_unit_description", pa.string()),
        ("unit_price", pa.decimal128(38, 9)),
        ("tier_start_amount", pa.float64()),
        ("tier_count", pa.int32()),
        ("effective_time", pa.timestamp("us", tz="UTC")),
    ]
)
_T = TypeVar("_T")


@dataclass(frozen=True)
class BillingClients:
    """The two Cloud Billing API clients; tests point them at a local stub with ``endpoint``."""

    billing: billing_v1.CloudBillingClient
    catalog: billing_v1.CloudCatalogClient

    @classmethod
    def connect(cls, *, endpoint: str | None = None, credentials: Credentials | None = None) -> BillingClients:
        """REST clients; ``credentials`` None means Application Default Credentials, ``endpoint`` None Google's."""
        options = {"api_endpoint": endpoint} if endpoint else None
        return cls(
            billing_v1.CloudBillingClient(transport="rest", credentials=credentials, client_options=options),
            billing_v1.CloudCatalogClient(transport="rest", credentials=credentials, client_options=options),
        )


@dataclass(frozen=True)
class BillingAccountInfo:
    account_id: str
    """``01A2B3-C4D5E6-F7A8B9``."""
    display_name: str
    open: bool
    currency: str
    master_billing_account: str
    """The reseller's parent account (``billingAccounts/...``) of a subaccount, else empty."""


@dataclass(frozen=True)
class ProjectLink:
    project_id: str
    billing_account_id: str
    billing_enabled: bool


@dataclass(frozen=True)
class BillingLookups:
    """What one sync's lookups landed (the whole current lookup files) and what they could not fetch."""

    accounts: tuple[BillingAccountInfo, ...]
    projects: tuple[ProjectLink, ...]
    sku_prices: int
    """SKU prices fetched by this sync."""
    warnings: tuple[str, ...]

    @property
    def linked_projects(self) -> tuple[str, ...]:
        """Projects billed to the landed accounts (billing enabled), sorted."""
        return tuple(sorted({p.project_id for p in self.projects if p.billing_enabled}))


def land_lookups(
    name: str,
    export_folder: Path,
    landing_dir: Path,
    pulled: Sequence[LedgerEntry],
    clients: BillingClients | None = None,
    *,
    timeout: float = 60.0,
) -> BillingLookups:
    """Fetch and land the lookups of the dataset folder ``export_folder`` after a sync landed ``pulled``.

    ``name`` is the source's (for messages). ``clients`` None: REST clients with Application Default Credentials.
    """
    folder = export_folder / LOOKUP_FOLDER
    lookups = _Lookups(name, timeout)
    accounts = _landed_accounts(export_folder)
    if clients is None and accounts:
        clients = lookups.call("connect", "Cloud Billing API", BillingClients.connect)
    if clients is None or not accounts:
        return BillingLookups(_read_accounts(folder), _read_projects(folder), 0, tuple(lookups.warnings))
    client = clients.billing
    fetched_accounts: dict[str, BillingAccountInfo] = {}
    fetched_links: dict[str, list[ProjectLink]] = {}
    for account in accounts:
        resource = f"billingAccounts/{account}"
        found = lookups.call(
            "get_billing_account", resource, lambda r=resource: client.get_billing_account(name=r, timeout=timeout)
        )
        if found is not None:
            fetched_accounts[account] = _account(account, found)
        links = lookups.call("list_project_billing_info", resource, lambda r=resource: _links(client, r, timeout))
        if links is not None:
            fetched_links[account] = links
    account_rows = _merge_accounts(folder, fetched_accounts)
    project_rows = _merge_projects(folder, fetched_links)
    priced = _land_sku_prices(lookups, clients.catalog, folder, landing_dir, pulled, timeout)
    return BillingLookups(account_rows, project_rows, priced, tuple(lookups.warnings))


class _Lookups:
    """Runs each API call, turning a failure into one warning line (the row sync has already succeeded)."""

    def __init__(self, name: str, timeout: float) -> None:
        self.name = name
        self.timeout = timeout
        self.warnings: list[str] = []

    def call(self, method: str, resource: str, run: Callable[[], _T]) -> _T | None:
        try:
            return run()
        except (api_exceptions.Forbidden, api_exceptions.Unauthorized) as exc:
            needs = _PERMISSIONS.get(method, "Cloud Billing API access")
            self.warn(f"{method} {resource} refused (HTTP {exc.code}: {exc.message}); it needs {needs}")
        except api_exceptions.GoogleAPICallError as exc:
            self.warn(f"{method} {resource} failed (HTTP {exc.code}: {exc.message})")
        except api_exceptions.RetryError as exc:
            self.warn(f"{method} {resource} still failing after retries ({type(exc.cause).__name__})")
        except (auth_exceptions.DefaultCredentialsError, auth_exceptions.RefreshError) as exc:
            self.warn(f"no usable Google credentials for the {resource} ({type(exc).__name__})")
        except auth_exceptions.TransportError:
            self.warn(f"{method} {resource}: cannot reach Google")
        return None

    def warn(self, text: str) -> None:
        line = f"GCP export {self.name!r}: billing lookups: {text}; the rows are landed, lookups skipped"
        log.warning("%s", line)
        self.warnings.append(line)


def _landed_accounts(export_folder: Path) -> list[str]:
    """Billing account ids of the export table folders landed in the dataset folder."""
    if not export_folder.is_dir():
        return []
    return sorted(
        {a for p in export_folder.iterdir() if p.is_dir() and (a := billing_account_from_table(p.name)) is not None}
    )


def _account(account: str, found: billing_v1.BillingAccount) -> BillingAccountInfo:
    master = found.master_billing_account.removeprefix("billingAccounts/")
    return BillingAccountInfo(account, found.display_name, bool(found.open_), found.currency_code, master)


def _links(client: billing_v1.CloudBillingClient, resource: str, timeout: float) -> list[ProjectLink]:
    """Every project linked to the account; the pager follows ``nextPageToken``."""
    return [
        ProjectLink(i.project_id, i.billing_account_name.removeprefix("billingAccounts/"), bool(i.billing_enabled))
        for i in client.list_project_billing_info(name=resource, timeout=timeout)
    ]


def _read_json(path: Path, key: str) -> list[dict[str, Any]]:
    """The entries of a landed lookup file; a missing or unreadable one counts as empty (it is rewritten)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return list(document[key]) if document.get("format") == _FORMAT else []
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def _read_accounts(folder: Path) -> tuple[BillingAccountInfo, ...]:
    rows = _read_json(folder / ACCOUNTS_FILE, "accounts")
    try:
        return tuple(BillingAccountInfo(**row) for row in rows)
    except TypeError:
        return ()


def _read_projects(folder: Path) -> tuple[ProjectLink, ...]:
    rows = _read_json(folder / PROJECTS_FILE, "projects")
    try:
        return tuple(ProjectLink(**row) for row in rows)
    except TypeError:
        return ()


def _write_json(path: Path, key: str, rows: Iterable[Any]) -> None:
    """Rewrite ``path`` atomically, and only when its content changes (a repeated sync touches nothing)."""
    data = (json.dumps({"format": _FORMAT, key: [asdict(r) for r in rows]}, indent=1) + "\n").encode()
    if not (path.is_file() and path.read_bytes() == data):
        write_atomically(path, data)


def _merge_accounts(folder: Path, fetched: dict[str, BillingAccountInfo]) -> tuple[BillingAccountInfo, ...]:
    merged = {a.account_id: a for a in _read_accounts(folder)} | fetched
    rows = tuple(merged[k] for k in sorted(merged))
    if fetched:
        _write_json(folder / ACCOUNTS_FILE, "accounts", rows)
    return rows


def _merge_projects(folder: Path, fetched: dict[str, list[ProjectLink]]) -> tuple[ProjectLink, ...]:
    """The landed links, with every fetched account's links replaced by what the API lists now."""
    kept = [p for p in _read_projects(folder) if p.billing_account_id not in fetched]
    rows = tuple(sorted([*kept, *(p for links in fetched.values() for p in links)], key=lambda p: p.project_id))
    if fetched:
        _write_json(folder / PROJECTS_FILE, "projects", rows)
    return rows


def money_to_decimal(money: money_pb2.Money) -> Decimal:
    """``google.type.Money`` as an exact decimal: units + nanos x 10^-9 (both carry the sign)."""
    with localcontext() as exact:
        exact.prec = 40  # int64 units (19 digits) + 9 decimals never round
        return Decimal(money.units) + Decimal(money.nanos).scaleb(-9)


_SKUS = (
    "SELECT DISTINCT service.id, currency, sku.id FROM read_parquet($files, union_by_name = true)"
    " WHERE service.id IS NOT NULL AND currency IS NOT NULL AND sku.id IS NOT NULL"
)
# the rows without a list price; files lacking the column lack it on every row (_SKUS)
_UNPRICED_SKUS = _SKUS + " AND cost_at_list IS NULL"


def _unpriced(landing_dir: Path, pulled: Sequence[LedgerEntry]) -> dict[tuple[str, str], set[str]]:
    """(service id, currency) -> SKU ids of the landed rows without ``cost_at_list`` (column absent or NULL)."""
    wanted: dict[tuple[str, str], set[str]] = {}
    with duckdb.connect() as con:
        for entry in pulled:
            files = [str(landing_dir / f.name) for f in entry.files if f.name.endswith(".parquet")]
            if not files:
                continue
            names = set(pq.read_schema(files[0]).names)
            if not {"service", "sku", "currency"} <= names:
                continue
            query = _UNPRICED_SKUS if "cost_at_list" in names else _SKUS
            rows = con.execute(query, {"files": files}).fetchall()
            for service, currency, sku in rows:
                wanted.setdefault((str(service), str(currency)), set()).add(str(sku))
    return wanted


def _sku_rows(service: str, currency: str, skus: Iterable[billing_v1.Sku], wanted: set[str]) -> list[dict[str, Any]]:
    """One row per wanted SKU: the first tier of its newest price (by effective time)."""
    rows = []
    for sku in skus:
        if sku.sku_id not in wanted or not sku.pricing_info:
            continue
        info = max(sku.pricing_info, key=lambda p: p.effective_time)
        tiers = sorted(info.pricing_expression.tiered_rates, key=lambda t: t.start_usage_amount)
        if not tiers:
            continue
        first = tiers[0]
        rows.append(
            {
                "sku_id": sku.sku_id,
                "service_id": service,
                "currency": first.unit_price.currency_code or currency,
                "usage_unit": info.pricing_expression.usage_unit,
                "usage_unit_description": info.pricing_expression.usage_unit_description,
                "unit_price": money_to_decimal(first.unit_price),
                "tier_start_amount": first.start_usage_amount,
                "tier_count": len(tiers),
                "effective_time": info.effective_time,
            }
        )
    return rows


def _land_sku_prices(
    lookups: _Lookups,
    catalog: billing_v1.CloudCatalogClient,
    folder: Path,
    landing_dir: Path,
    pulled: Sequence[LedgerEntry],
    timeout: float,
) -> int:
    """Fetch the list prices the pulled rows lack; merge them into ``sku_prices.parquet``. Returns prices fetched."""
    fetched: list[dict[str, Any]] = []
    for (service, currency), wanted in sorted(_unpriced(landing_dir, pulled).items()):
        parent = f"services/{service}"

        def listed(parent: str = parent, currency: str = currency) -> list[billing_v1.Sku]:
            request = billing_v1.ListSkusRequest(parent=parent, currency_code=currency)
            return list(catalog.list_skus(request=request, timeout=timeout))

        skus = lookups.call("list_skus", f"{parent} ({currency})", listed)
        if skus is not None:
            fetched.extend(_sku_rows(service, currency, skus, wanted))
    if not fetched:
        return 0
    path = folder / SKU_PRICES_FILE
    new = pa.Table.from_pylist(fetched, schema=SKU_PRICE_SCHEMA)
    if path.is_file():
        old = pq.read_table(path, schema=SKU_PRICE_SCHEMA)
        keys = {(r["sku_id"], r["currency"]) for r in fetched}
        keep = [i for i, r in enumerate(old.select(["sku_id", "currency"]).to_pylist())
                if (r["sku_id"], r["currency"]) not in keys]  # fmt: skip
        new = pa.concat_tables([old.take(keep), new])
    new = new.sort_by([("service_id", "ascending"), ("sku_id", "ascending"), ("currency", "ascending")])
    with atomic_file(path) as out:
        pq.write_table(new, out, compression="zstd")
    log.info("%s: landed %d SKU list prices in %s", lookups.name, len(fetched), path)
    return len(fetched)
