"""A stub of Azure Resource Manager's Microsoft.CostManagement API on 127.0.0.1 -- the wire format, not Azure.

It answers the calls ``azure-mgmt-costmanagement`` 5.0.0 (api-version ``2025-03-01``) makes for
``connectors.azure.costmanagement``, with the JSON shapes of the REST reference:

- ``GET {scope}/providers/Microsoft.CostManagement/exports/{name}``: the export resource (``properties.deliveryInfo
  .destination`` with ``type``, ``resourceId`` -- the storage account's -- or, for a destination reached with a SAS
  token, ``storageAccount`` instead, ``container`` and ``rootFolderPath``); 404 ``ExportNotFound`` for another name;
- ``GET {scope}/providers/Microsoft.CostManagement/exports``: ``{"value": [Export]}``, every export at the scope;
- ``GET .../exports/{name}/runHistory``: ``{"value": [ExportRun]}``, each ``{"id", "name": <run id>,
  "properties": {"executionType", "status", "submittedTime", "startDate", "manifestFile", "error"}}``;
- ``POST .../exports/{name}/run``: 200 without a body; the ``timePeriod`` sent is recorded and a new OnDemand run
  appears in the history, moving one step through :attr:`ArmStub.run_statuses` on each history read
  (:attr:`ArmStub.on_run_completed` is called when it reaches Completed, to write the run's blobs);
- ``POST {scope}/providers/Microsoft.CostManagement/generateCostDetailsReport``: 202 with ``Location``
  (``.../costDetailsOperationResults/{operation id}``) and ``Retry-After``, as the API documents;
- ``GET .../costDetailsOperationResults/{id}``: 202 (``Location``, ``Retry-After``) :attr:`ArmStub.report_polls`
  times, then 200 with ``{"id", "name", "status": "Completed", "manifest": {"manifestVersion", "dataFormat",
  "blobCount", "byteCount", "compressData", "requestContext", "blobs": [{"blobLink", "byteCount"}]}, "validTill"}``;
  the blobs come from :attr:`ArmStub.report_blobs` (the tests upload them to Azurite and link them with a SAS).

Errors use ARM's ``{"error": {"code", "message"}}``; :meth:`ArmStub.fail_next` queues failures (e.g. 429 with a
``Retry-After``). Every request must carry ``Authorization: Bearer <ArmStub.token>``.

HTTPS: azure-core's ``BearerTokenCredentialPolicy`` refuses to send a bearer token over plain http (a
``ServiceRequestError``; the per-request ``enforce_https=False`` option would have to reach every call the
connector makes). So the stub serves TLS with a self-signed certificate for IP 127.0.0.1 made with
``cryptography``, and clients trust it with ``connection_verify=<ArmStub.ca_file>`` -- the supported transport
option, the same a private CA bundle would use.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import re
import ssl
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from stub_server import StubServer

API_VERSION = "2025-03-01"
_CM = r"/providers/microsoft\.costmanagement"
_CM_NAME = "/providers/Microsoft.CostManagement"
_ROUTES = (
    ("GET", re.compile(rf"^/(?P<scope>.+){_CM}/exports$"), "_list"),
    ("GET", re.compile(rf"^/(?P<scope>.+){_CM}/exports/(?P<name>[^/]+)$"), "_export"),
    ("GET", re.compile(rf"^/(?P<scope>.+){_CM}/exports/(?P<name>[^/]+)/runhistory$"), "_history"),
    ("POST", re.compile(rf"^/(?P<scope>.+){_CM}/exports/(?P<name>[^/]+)/run$"), "_execute"),
    ("POST", re.compile(rf"^/(?P<scope>.+){_CM}/generatecostdetailsreport$"), "_generate"),
    ("GET", re.compile(rf"^/(?P<scope>.+){_CM}/costdetailsoperationresults/(?P<op>[^/]+)$"), "_operation"),
)

ReportBlobs = Callable[[str, str, str], list[tuple[str, int]]]
"""(metric, start, end) -> [(SAS link, byte count)] of the report's blobs."""


class ArmStub(StubServer):
    """Start with ``with ArmStub(tmp_path) as stub``; point CostManagementClient at ``stub.url``."""

    def __init__(self, folder: Path) -> None:
        self.token = f"stub-token-{uuid.uuid4().hex}"
        self.ca_file = _self_signed(folder)
        self.exports: dict[str, dict[str, Any]] = {}
        """Lower-case ``<scope>/<name>`` -> the export resource."""
        self.runs: dict[str, list[dict[str, Any]]] = {}
        """Lower-case ``<scope>/<name>`` -> its run history, oldest first."""
        self.run_statuses: list[str] = ["InProgress", "Completed"]
        """Statuses an executed run moves through, one per history read."""
        self.run_error: dict[str, str] | None = None
        """``{"code", "message"}`` an executed run that ends Failed or Timeout carries."""
        self.on_run_completed: Callable[[str, dict[str, Any]], None] | None = None
        """Called with (export name, run) when an executed run reaches Completed."""
        self.report_blobs: ReportBlobs = lambda metric, start, end: []
        self.report_polls = 1
        """202 answers before a report is ready."""
        self.retry_after = "0"
        """Retry-After of the 202 answers (0: the client's polling interval applies)."""
        self.executed: list[dict[str, Any]] = []
        """Bodies of the ``exports/{name}/run`` calls."""
        self.reports: list[tuple[str, dict[str, Any]]] = []
        """(scope, body) of every accepted generateCostDetailsReport call."""
        self.requests: list[tuple[str, str]] = []
        """(method, path) of every request, in order."""
        self._pending: dict[str, int] = {}
        self._operations: dict[str, dict[str, Any]] = {}
        self._failures: list[tuple[str, int, str, str | None]] = []
        self._lock = threading.Lock()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, folder / "arm-stub-key.pem")
        self._serve(_handler(self), tls=context)

    def add_export(
        self,
        scope: str,
        name: str,
        container: str,
        root: str,
        *,
        kind: str = "ActualCost",
        account: str = "helioscost",
        by_resource_id: bool = True,
    ) -> None:
        """An export delivering to ``container/root`` in storage ``account`` (runs: :meth:`add_run`).

        ``by_resource_id=False``: the destination names the account in ``storageAccount`` (a SAS-token destination)
        instead of the account's ``resourceId``.
        """
        export_id = f"/{scope.strip('/')}{_CM_NAME}/exports/{name}"
        account_id = (f"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/finops"
                      f"/providers/Microsoft.Storage/storageAccounts/{account}")  # fmt: skip
        target = {"resourceId": account_id} if by_resource_id else {"storageAccount": account}
        self.exports[_key(scope, name)] = {
            "id": export_id,
            "name": name,
            "type": "Microsoft.CostManagement/exports",
            "eTag": '"1d9c2f5a3b4e0f0"',
            "properties": {
                "schedule": {"status": "Active", "recurrence": "Daily"},
                "format": "Csv",
                "partitionData": True,
                "dataOverwriteBehavior": "CreateNewReport",
                "compressionMode": "gzip",
                "deliveryInfo": {
                    "destination": {
                        "type": "AzureBlob",
                        **target,
                        "container": container,
                        "rootFolderPath": root,
                    }
                },
                "definition": {
                    "type": kind,
                    "timeframe": "MonthToDate",
                    "dataSet": {"granularity": "Daily", "configuration": {"dataVersion": "2023-12-01-preview"}},
                },
            },
        }
        self.runs.setdefault(_key(scope, name), [])

    def add_run(
        self,
        scope: str,
        name: str,
        run_id: str,
        status: str,
        *,
        manifest_file: str | None = None,
        execution_type: str = "Scheduled",
        start: dt.date | None = None,
    ) -> dict[str, Any]:
        """A run in the export's history (its ``properties`` can be changed later)."""
        export = self.exports[_key(scope, name)]
        now = dt.datetime.now(dt.UTC).isoformat()
        properties: dict[str, Any] = {
            "executionType": execution_type,
            "status": status,
            "submittedBy": "System" if execution_type == "Scheduled" else "finops@helios.example",
            "submittedTime": now,
            "processingStartTime": now,
            "processingEndTime": now,
        }
        if start is not None:
            properties["startDate"] = f"{start.isoformat()}T00:00:00Z"
        if manifest_file is not None:
            properties["manifestFile"] = manifest_file
        run = {
            "id": f"{export['id']}/Run/{run_id}",
            "name": run_id,
            "type": "Microsoft.CostManagement/reports/Run",
            "properties": properties,
        }
        self.runs[_key(scope, name)].append(run)
        return run

    def fail_next(self, route: str, status: int, code: str, *, retry_after: str | None = None) -> None:
        """Answer the next request to ``route`` (``_export``, ``_generate``, ...) with an ARM error."""
        self._failures.append((route, status, code, retry_after))

    # --- handlers: (status, body, headers) -------------------------------------------------------------------

    def _list(self, groups: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        prefix = f"{groups['scope'].strip('/')}/".lower()
        return 200, {"value": [e for key, e in self.exports.items() if key.startswith(prefix)
                               and "/" not in key[len(prefix):]]}, {}  # fmt: skip

    def _export(self, groups: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        export = self.exports.get(_key(groups["scope"], groups["name"]))
        if export is None:
            return 404, _error("ExportNotFound", f"Export {groups['name']} not found."), {}
        return 200, export, {}

    def _history(self, groups: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        key = _key(groups["scope"], groups["name"])
        if key not in self.exports:
            return 404, _error("ExportNotFound", f"Export {groups['name']} not found."), {}
        for run in self.runs[key]:
            step = self._pending.get(run["id"])
            if step is None:
                continue
            status = self.run_statuses[min(step, len(self.run_statuses) - 1)]
            run["properties"]["status"] = status
            self._pending[run["id"]] = step + 1
            if status in ("Failed", "Timeout") and self.run_error:
                run["properties"]["error"] = self.run_error
            if status != "InProgress" and status != "Queued":
                del self._pending[run["id"]]
                if status == "Completed" and self.on_run_completed is not None:
                    self.on_run_completed(groups["name"], run)
        return 200, {"value": list(reversed(self.runs[key]))}, {}  # newest first, as ARM lists them

    def _execute(self, groups: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        key = _key(groups["scope"], groups["name"])
        if key not in self.exports:
            return 404, _error("ExportNotFound", f"Export {groups['name']} not found."), {}
        self.executed.append(body)
        start = dt.date.fromisoformat(body["timePeriod"]["from"][:10]) if body and "timePeriod" in body else None
        run = self.add_run(groups["scope"], groups["name"], str(uuid.uuid4()), "Queued", execution_type="OnDemand",
                           start=start)  # fmt: skip
        self._pending[run["id"]] = 0
        return 200, None, {}

    def _generate(self, groups: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        period = body.get("timePeriod") if isinstance(body, dict) else None
        if not isinstance(period, dict) or body.get("metric") not in ("ActualCost", "AmortizedCost"):
            return 400, _error("BadRequest", "metric and timePeriod are required"), {}
        operation = str(uuid.uuid4())
        self.reports.append((groups["scope"], body))
        self._operations[operation] = {"scope": groups["scope"], "body": body, "polls": self.report_polls}
        return 202, None, self._poll_headers(groups["scope"], operation)

    def _operation(self, groups: dict[str, str], body: Any) -> tuple[int, Any, dict[str, str]]:
        state = self._operations.get(groups["op"])
        if state is None:
            return 404, _error("NotFound", "operation not found"), {}
        if state["polls"] > 0:
            state["polls"] -= 1
            return 202, None, self._poll_headers(state["scope"], groups["op"])
        request = state["body"]
        period = request["timePeriod"]
        blobs = self.report_blobs(request["metric"], period["start"], period["end"])
        valid_till = dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)
        return (
            200,
            {
                "id": f"/{state['scope']}{_CM_NAME}/costDetailsOperationResults/{groups['op']}",
                "name": groups["op"],
                "status": "Completed",
                "manifest": {
                    "manifestVersion": "2024-08-01",
                    "dataFormat": "Csv",
                    "byteCount": sum(size for _, size in blobs),
                    "blobCount": len(blobs),
                    "compressData": False,
                    "requestContext": {"requestScope": f"/{state['scope']}", "requestBody": request},
                    "blobs": [{"blobLink": link, "byteCount": size} for link, size in blobs],
                },
                "validTill": valid_till.isoformat().replace("+00:00", "Z"),
            },
            {},
        )

    def _poll_headers(self, scope: str, operation: str) -> dict[str, str]:
        location = (f"{self.url}/{scope}{_CM_NAME}/costDetailsOperationResults/{operation}"
                    f"?api-version={API_VERSION}")  # fmt: skip
        return {"Location": location, "Retry-After": self.retry_after}

    def handle(self, method: str, path: str, auth: str | None, body: Any) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            self.requests.append((method, path))
            url = urlparse(path)
            if auth != f"Bearer {self.token}":
                return 401, _error("InvalidAuthenticationToken", "The access token is invalid."), {}
            if parse_qs(url.query).get("api-version") != [API_VERSION]:
                return 400, _error("InvalidApiVersionParameter", "unsupported api-version"), {}
            for want, pattern, route in _ROUTES:
                match = pattern.match(url.path.lower()) if want == method else None  # ARM paths ignore case
                if match is None:
                    continue
                groups = {name: url.path[match.start(name) : match.end(name)] for name in pattern.groupindex}
                failure = next((f for f in self._failures if f[0] == route), None)
                if failure is not None:
                    self._failures.remove(failure)
                    headers = {"Retry-After": failure[3]} if failure[3] is not None else {}
                    return failure[1], _error(failure[2], f"stub failure {failure[2]}"), headers
                return getattr(self, route)(groups, body)
            return 404, _error("NoRegisteredProviderFound", f"no route for {method} {url.path}"), {}


def _handler(stub: ArmStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            status, document, headers = stub.handle(method, self.path, self.headers.get("Authorization"), body)
            data = json.dumps(document).encode() if document is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-ms-request-id", str(uuid.uuid4()))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

    return Handler


def _key(scope: str, name: str) -> str:
    return f"{scope.strip('/')}/{name}".lower()


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def _self_signed(folder: Path) -> Path:
    """A certificate (its own CA) for IP 127.0.0.1 and its key, written to ``folder``; the certificate's path."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpuledger ARM stub")])
    now = dt.datetime.now(dt.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file = folder / "arm-stub-cert.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "arm-stub-key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file
