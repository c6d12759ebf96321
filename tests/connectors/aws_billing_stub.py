"""A stub of the AWS Data Exports and Cost and Usage Report APIs on 127.0.0.1 -- a stub of the wire format, not AWS.

It answers the calls ``connectors.aws.discovery`` makes through the real boto3 clients, in the AWS JSON 1.1
protocol botocore speaks for both services: ``POST /`` with ``Content-Type: application/x-amz-json-1.1`` and
``X-Amz-Target: <target prefix>.<Operation>``:

- ``AWSBillingAndCostManagementDataExports.ListExports``, ``.GetExport``, ``.ListExecutions`` (``bcm-data-exports``);
- ``AWSOrigamiServiceGatewayService.DescribeReportDefinitions`` (``cur``).

Requests must carry a SigV4 ``Authorization`` header scoped to us-east-1 and to the target's signing name
(``bcm-data-exports`` or ``cur``), as the real endpoints require; anything else is refused with the error AWS
gives. Lists are paginated with ``NextToken`` (``page_size`` items a page, fewer when ``MaxResults`` asks),
timestamps are epoch seconds, and errors are HTTP 4xx/5xx with ``{"__type": ..., "message": ...}``.
:meth:`AwsBillingStub.fail_next` makes the next calls of an operation fail (``ThrottlingException``, a 5xx) to
exercise botocore's retries.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import uuid
from collections.abc import Sequence
from datetime import datetime
from http.server import BaseHTTPRequestHandler
from typing import Any

from stub_server import StubServer

ACCOUNT = "012345678901"
_SERVICES = {"AWSBillingAndCostManagementDataExports": "bcm-data-exports", "AWSOrigamiServiceGatewayService": "cur"}
_CREDENTIAL_SCOPE = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=[^/]+/\d{8}/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
)
_CUR2_TABLE_CONFIGURATION = {
    "TIME_GRANULARITY": "HOURLY",
    "INCLUDE_RESOURCES": "TRUE",
    "INCLUDE_SPLIT_COST_ALLOCATION_DATA": "FALSE",
    "INCLUDE_MANUAL_DISCOUNT_COMPATIBILITY": "FALSE",
}


class StubError(Exception):
    """An error answered on the wire: HTTP status, ``__type`` and message."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


class AwsBillingStub(StubServer):
    """Exports, their executions and CUR report definitions of one account; ``with AwsBillingStub() as stub``."""

    def __init__(self, *, page_size: int = 2) -> None:
        self.page_size = page_size
        self.requests: list[str] = []
        """Operation of every request received (retries included), in order."""
        self._exports: list[dict[str, Any]] = []
        self._statuses: dict[str, dict[str, Any]] = {}
        self._executions: dict[str, list[dict[str, Any]]] = {}
        self._reports: list[dict[str, Any]] = []
        self._failures: list[list[Any]] = []  # [operation, status, __type, times left]
        self._lock = threading.Lock()
        self._serve(_handler(self))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._exports.clear()
            self._statuses.clear()
            self._executions.clear()
            self._reports.clear()
            self._failures.clear()

    def add_export(
        self,
        name: str,
        *,
        table: str = "COST_AND_USAGE_REPORT",
        bucket: str = "billing",
        prefix: str = "cur2",
        region: str = "us-east-1",
        output_format: str = "PARQUET",
        compression: str = "PARQUET",
        overwrite: str = "CREATE_NEW_REPORT",
        status: str = "HEALTHY",
        reason: str | None = None,
    ) -> str:
        """A Data Export querying ``table``, delivered to ``s3://bucket/prefix``; returns its ARN."""
        arn = f"arn:aws:bcm-data-exports:us-east-1:{ACCOUNT}:export/{name}-{uuid.uuid4()}"
        configurations = {table: _CUR2_TABLE_CONFIGURATION} if table == "COST_AND_USAGE_REPORT" else {}
        self._exports.append(
            {
                "ExportArn": arn,
                "Name": name,
                "DataQuery": {
                    "QueryStatement": f"SELECT bill_billing_period_start_date, line_item_unblended_cost FROM {table}",
                    "TableConfigurations": configurations,
                },
                "DestinationConfigurations": {
                    "S3Destination": {
                        "S3Bucket": bucket,
                        "S3Prefix": prefix,
                        "S3Region": region,
                        "S3OutputConfigurations": {
                            "OutputType": "CUSTOM",
                            "Format": output_format,
                            "Compression": compression,
                            "Overwrite": overwrite,
                        },
                    }
                },
                "RefreshCadence": {"Frequency": "SYNCHRONOUS"},
            }
        )
        created = datetime(2026, 10, 1).timestamp()
        self._statuses[arn] = {"StatusCode": status, "CreatedAt": created, "LastUpdatedAt": created}
        if reason is not None:
            self._statuses[arn]["StatusReason"] = reason
        self._executions[arn] = []
        return arn

    def add_execution(self, arn: str, status: str, at: datetime) -> None:
        """An execution of the export that reached ``status`` at ``at`` (completed, for the terminal statuses)."""
        execution_status: dict[str, Any] = {
            "StatusCode": status,
            "CreatedAt": at.timestamp() - 600,
            "LastUpdatedAt": at.timestamp(),
        }
        if status in ("DELIVERY_SUCCESS", "DELIVERY_FAILURE", "QUERY_FAILURE"):
            execution_status["CompletedAt"] = at.timestamp()
        # Newest first, as the console shows them; the client must not depend on the order.
        self._executions[arn].insert(0, {"ExecutionId": str(uuid.uuid4()), "ExecutionStatus": execution_status})

    def add_report(
        self,
        name: str,
        *,
        bucket: str = "billing",
        prefix: str = "cur1",
        region: str = "us-east-1",
        output_format: str = "textORcsv",
        compression: str = "GZIP",
        versioning: str = "CREATE_NEW_REPORT",
        artifacts: Sequence[str] = (),
    ) -> None:
        """A legacy CUR report definition."""
        self._reports.append(
            {
                "ReportName": name,
                "TimeUnit": "HOURLY",
                "Format": output_format,
                "Compression": compression,
                "AdditionalSchemaElements": ["RESOURCES"],
                "S3Bucket": bucket,
                "S3Prefix": prefix,
                "S3Region": region,
                "AdditionalArtifacts": list(artifacts),
                "RefreshClosedReports": True,
                "ReportVersioning": versioning,
            }
        )

    def fail_next(self, operation: str, kind: str, status: int = 400, times: int = 1) -> None:
        """The next ``times`` calls of ``operation`` are answered ``status`` with ``__type`` ``kind``."""
        with self._lock:
            self._failures.append([operation, status, kind, times])

    def answer(self, target: str, authorization: str, content_type: str, body: bytes) -> dict[str, Any]:
        """The JSON answer to one request, or :class:`StubError`."""
        prefix, _, operation = target.partition(".")
        with self._lock:
            self.requests.append(operation or target)
            failure = next((f for f in self._failures if f[0] == operation and f[3] > 0), None)
            if failure is not None:
                failure[3] -= 1
                raise StubError(failure[1], failure[2], "Rate exceeded")
        if content_type != "application/x-amz-json-1.1":
            raise StubError(400, "SerializationException", f"unexpected content type {content_type!r}")
        service = _SERVICES.get(prefix)
        if service is None:
            raise StubError(400, "UnknownOperationException", f"unknown target {target!r}")
        scope = _CREDENTIAL_SCOPE.match(authorization)
        if scope is None:
            raise StubError(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        if (scope["region"], scope["service"]) != ("us-east-1", service):
            raise StubError(
                403, "InvalidSignatureException", f"Credential should be scoped to us-east-1/{service}, not {scope[0]}"
            )
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError as exc:
            raise StubError(400, "SerializationException", str(exc)) from None
        if operation == "ListExports":
            exports = [
                {"ExportArn": e["ExportArn"], "ExportName": e["Name"], "ExportStatus": self._statuses[e["ExportArn"]]}
                for e in self._exports
            ]
            return self._page(operation, request, "Exports", exports)
        if operation == "GetExport":
            export = next((e for e in self._exports if e["ExportArn"] == request.get("ExportArn")), None)
            if export is None:
                raise StubError(400, "ResourceNotFoundException", f"export {request.get('ExportArn')!r} not found")
            return {"Export": export, "ExportStatus": self._statuses[export["ExportArn"]]}
        if operation == "ListExecutions":
            if request.get("ExportArn") not in self._executions:
                raise StubError(400, "ResourceNotFoundException", f"export {request.get('ExportArn')!r} not found")
            return self._page(operation, request, "Executions", self._executions[request["ExportArn"]])
        if operation == "DescribeReportDefinitions" and service == "cur":
            return self._page(operation, request, "ReportDefinitions", self._reports)
        raise StubError(400, "UnknownOperationException", f"unknown operation {target!r}")

    def _page(self, operation: str, request: dict[str, Any], key: str, items: list[dict[str, Any]]) -> dict[str, Any]:
        start = 0
        if "NextToken" in request:
            try:
                token_operation, offset = base64.b64decode(request["NextToken"]).decode().split(":")
                start = int(offset)
            except (ValueError, UnicodeDecodeError):
                raise StubError(400, "ValidationException", "invalid NextToken") from None
            if token_operation != operation:
                raise StubError(400, "ValidationException", "NextToken of another operation")
        size = min(self.page_size, int(request.get("MaxResults", self.page_size)))
        page: dict[str, Any] = {key: items[start : start + size]}
        if start + size < len(items):
            page["NextToken"] = base64.b64encode(f"{operation}:{start + size}".encode()).decode()
        return page


def _handler(stub: AwsBillingStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                if self.path != "/":
                    raise StubError(404, "UnknownOperationException", f"no resource at {self.path}")
                status, answer = (
                    200,
                    stub.answer(
                        self.headers.get("X-Amz-Target", ""),
                        self.headers.get("Authorization", ""),
                        self.headers.get("Content-Type", ""),
                        body,
                    ),
                )
            except StubError as exc:
                status, answer = exc.status, {"__type": exc.kind, "message": str(exc)}
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
            self.end_headers()
            self.wfile.write(data)

    return Handler
