"""A stub of the Cloud Billing REST API v1 on 127.0.0.1 for the GCP lookup tests -- a stub of the wire format only.

It answers exactly the calls ``connectors.gcp.billing`` makes through google-cloud-billing's real
``CloudBillingClient`` and ``CloudCatalogClient`` with ``transport="rest"``:

- ``GET /v1/billingAccounts/{id}``: a ``BillingAccount`` (``name``, ``open``, ``displayName``, ``currencyCode``);
- ``GET /v1/billingAccounts/{id}/projects``: ``{"projectBillingInfo": [...], "nextPageToken"}``, ``page_size``
  links a page, continued with ``pageToken``;
- ``GET /v1/services/{id}/skus?currencyCode=...``: ``{"skus": [...], "nextPageToken"}`` with
  ``pricingInfo[].pricingExpression.tieredRates[].unitPrice`` as ``google.type.Money`` (``units`` an int64 *string*,
  ``nanos`` a number), every price in the requested currency;
- errors as ``{"error": {"code", "message", "status"}}`` (403 ``PERMISSION_DENIED``, 404 ``NOT_FOUND``).

Every request's method, path and ``Authorization`` header are recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from stub_server import StubServer

_STATUS = {403: "PERMISSION_DENIED", 404: "NOT_FOUND", 400: "INVALID_ARGUMENT"}


@dataclass(frozen=True)
class Tier:
    """One tiered rate: usage from ``start`` on costs ``units`` + ``nanos`` / 1e9 per usage unit."""

    start: float
    units: str
    nanos: int


@dataclass(frozen=True)
class CatalogSku:
    sku_id: str
    usage_unit: str
    usage_unit_description: str
    tiers: tuple[Tier, ...]
    effective_time: str = "2026-10-01T07:00:00Z"
    description: str = "stub SKU"


@dataclass
class CloudBillingStub(StubServer):
    """Billing accounts, their project links and the service catalog; ``with CloudBillingStub() as stub``."""

    page_size: int = 2
    """Project links and SKUs per page."""
    accounts: dict[str, dict[str, Any]] = field(default_factory=dict)
    projects: dict[str, list[str]] = field(default_factory=dict)
    skus: dict[str, list[CatalogSku]] = field(default_factory=dict)
    denied: set[str] = field(default_factory=set)
    """Path prefixes (``/v1/billingAccounts/X/projects``) answered 403 PERMISSION_DENIED."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(method, path with query string) of every request, in order."""
    authorizations: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._serve(_handler(self))

    def add_account(self, account: str, display_name: str, projects: list[str], *, open_: bool = True) -> None:
        self.accounts[account] = {
            "name": f"billingAccounts/{account}",
            "open": open_,
            "displayName": display_name,
            "masterBillingAccount": "",
            "currencyCode": "USD",
        }
        self.projects[account] = projects

    def skus_requests(self) -> list[str]:
        return [path for method, path in self.requests if "/skus" in path]

    # -- the API -------------------------------------------------------------------------------

    def handle(self, method: str, url: str) -> tuple[int, dict[str, Any]]:
        parsed = urlparse(url)
        query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        path = parsed.path
        if any(path.startswith(prefix) for prefix in self.denied):
            return _error(403, f"The caller does not have permission ({path})")
        parts = path.strip("/").split("/")
        if method != "GET" or parts[:1] != ["v1"]:
            return _error(400, f"stub: unsupported {method} {path}")
        if parts[1:2] == ["billingAccounts"] and len(parts) == 3:
            account = self.accounts.get(parts[2])
            return (200, account) if account else _error(404, f"billingAccounts/{parts[2]} not found")
        if parts[1:2] == ["billingAccounts"] and len(parts) == 4 and parts[3] == "projects":
            return self._projects(parts[2], query)
        if parts[1:2] == ["services"] and len(parts) == 4 and parts[3] == "skus":
            return self._skus(parts[2], query)
        return _error(400, f"stub: no route {path}")

    def _page(self, items: list[Any], query: dict[str, str]) -> tuple[list[Any], str]:
        start = int(query.get("pageToken") or 0)
        end = start + self.page_size
        return items[start:end], str(end) if end < len(items) else ""

    def _projects(self, account: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if account not in self.projects:
            return _error(404, f"billingAccounts/{account} not found")
        page, token = self._page(self.projects[account], query)
        links = [
            {
                "name": f"projects/{project}/billingInfo",
                "projectId": project,
                "billingAccountName": f"billingAccounts/{account}",
                "billingEnabled": True,
            }
            for project in page
        ]
        return 200, {"projectBillingInfo": links, "nextPageToken": token}

    def _skus(self, service: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if service not in self.skus:
            return _error(404, f"services/{service} not found")
        currency = query.get("currencyCode") or "USD"
        page, token = self._page(self.skus[service], query)
        return 200, {"skus": [_sku(service, s, currency) for s in page], "nextPageToken": token}


def _sku(service: str, sku: CatalogSku, currency: str) -> dict[str, Any]:
    rates = [
        {"startUsageAmount": t.start, "unitPrice": {"currencyCode": currency, "units": t.units, "nanos": t.nanos}}
        for t in sku.tiers
    ]
    return {
        "name": f"services/{service}/skus/{sku.sku_id}",
        "skuId": sku.sku_id,
        "description": sku.description,
        "category": {"serviceDisplayName": "stub", "resourceFamily": "Compute", "usageType": "OnDemand"},
        "serviceRegions": ["us-central1"],
        "pricingInfo": [
            {
                "effectiveTime": sku.effective_time,
                "summary": "",
                "pricingExpression": {
                    "usageUnit": sku.usage_unit,
                    "usageUnitDescription": sku.usage_unit_description,
                    "displayQuantity": 1,
                    "tieredRates": rates,
                },
                "currencyConversionRate": 1,
            }
        ],
        "serviceProviderName": "Google",
    }


def money(tier: Tier) -> Decimal:
    """The price a tier states, computed independently of the connector (for expected values)."""
    return Decimal(tier.units) + Decimal(tier.nanos) / Decimal(10**9)


def _handler(stub: CloudBillingStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            stub.requests.append((method, self.path))
            stub.authorizations.append(self.headers.get("Authorization"))
            status, document = stub.handle(method, self.path)
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}
