"""A stub of the BigQuery REST API v2 on 127.0.0.1 for the GCP sync tests -- a stub of the wire format, not BigQuery.

It answers exactly the calls google-cloud-bigquery 3.47 makes for ``connectors.gcp.sync`` (found by logging
them): ``tables.list``, ``tables.get``, ``jobs.insert`` and ``jobs.get`` for query jobs, and
``jobs.getQueryResults`` with ``maxResults``/``pageToken`` pagination. Responses use the real JSON shapes:
schemas with ``RECORD``/``REPEATED`` nesting, rows in the ``{"f": [{"v": ...}]}`` encoding, TIMESTAMP values as
int64 microseconds when the client sends ``formatOptions.useInt64Timestamp`` (ISO 8601 for
``timestampOutputFormat=ISO8601_STRING``, else float seconds), errors as ``{"error": {"code", "errors":
[{"reason"}]}}``.

It does not run SQL. A table is rows in DuckDB (with a ``_PARTITIONTIME`` pseudo column: the usage day), and a
query is recognized as one of the two the connector sends and evaluated here with its bound parameters:

- ``... MAX(export_time) ... WHERE DATE(_PARTITIONTIME) >= @since GROUP BY 1``: newest export time per invoice month;
- ``SELECT <columns> FROM ... WHERE invoice.month = @month AND export_time > @previous AND export_time <= @until``:
  the named top-level columns of those rows.

Anything else is answered 400 ``invalidQuery``. :meth:`BigQueryStub.fail_next` makes the next requests fail
(e.g. 429 ``rateLimitExceeded``) to exercise the client's retries.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
import uuid
from collections.abc import Sequence
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import duckdb
import pyarrow as pa
from stub_server import StubServer

_API = "/bigquery/v2"
_MAX_QUERY = re.compile(r"MAX\(export_time\)", re.IGNORECASE)
_ROWS_QUERY = re.compile(r"^\s*SELECT\s+(?P<columns>.+?)\s+FROM\s+`[^`]+`\s+WHERE\s+invoice\.month\s*=\s*@month", re.S)
# A Parquet extract's rows, with the usage day as the ingestion-time partition (the stub's choice: BigQuery's is
# unconfirmed) and export_time as a zoned timestamp.
_READ = (
    "SELECT * REPLACE (export_time::TIMESTAMPTZ AS export_time), date_trunc('day', usage_start_time) AS _PARTITIONTIME"
    " FROM read_parquet($files, hive_partitioning = false)"
)
_STATUS = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}


class BigQueryStub(StubServer):
    """One project with one dataset of tables; start with ``with BigQueryStub(...) as stub`` and use ``stub.url``."""

    def __init__(self, project: str, dataset: str, *, page_size: int = 5000) -> None:
        self.project = project
        self.dataset = dataset
        self.page_size = page_size
        self.requests: list[tuple[str, str]] = []
        """(method, path with query string) of every request, in order."""
        self.queries: list[str] = []
        """SQL of every query job inserted."""
        self._con = duckdb.connect()
        self._con.execute("SET TimeZone = 'UTC'")
        self._tables: dict[str, list[dict[str, Any]] | None] = {}
        self._jobs: dict[str, dict[str, Any]] = {}
        self._failures: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        self._serve(_handler(self))

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self._con.close()

    # -- test set-up ---------------------------------------------------------------------------

    def add_table(self, name: str, parquet: Sequence[Path] = (), *, rows_per_month: int | None = None) -> None:
        """A table holding the rows of ``parquet`` (a billing export extract); without files, only listed.

        ``rows_per_month`` keeps only the first rows of each invoice month (a smaller table for quick tests).
        """
        with self._lock:
            if not parquet:
                self._tables[name] = None
                return
            sample = ""
            if rows_per_month is not None:
                order = "ORDER BY usage_start_time, sku.id, resource.global_name"
                sample = f" QUALIFY row_number() OVER (PARTITION BY invoice.month {order}) <= {int(rows_per_month)}"
            self._con.execute(f'CREATE TABLE "{name}" AS {_READ}{sample}', {"files": [str(p) for p in parquet]})
            schema = self._con.execute(f'SELECT * EXCLUDE (_PARTITIONTIME) FROM "{name}" LIMIT 0').fetch_arrow_table()
            self._tables[name] = [_field(f) for f in schema.schema]

    def append(self, name: str, parquet: Sequence[Path]) -> None:
        """Append rows to a table, as the billing export does."""
        with self._lock:
            self._con.execute(f'INSERT INTO "{name}" BY NAME {_READ}', {"files": [str(p) for p in parquet]})

    def fail_next(self, count: int, status: int = 429, reason: str = "rateLimitExceeded") -> None:
        """Answer the next ``count`` requests with this error instead."""
        self._failures.extend([(status, reason)] * count)

    def clear_failures(self) -> None:
        self._failures.clear()

    def row_queries(self) -> list[str]:
        return [q for q in self.queries if not _MAX_QUERY.search(q)]

    # -- the API -------------------------------------------------------------------------------

    def handle(self, method: str, url: str, body: dict[str, Any] | None) -> tuple[int, dict[str, Any]]:
        self.requests.append((method, url))
        if self._failures:
            status, reason = self._failures.pop(0)
            return _error(status, reason, f"stub: injected {reason}")
        parsed = urlparse(url)
        query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        path = parsed.path.removeprefix(_API).strip("/").split("/")
        with self._lock:
            if len(path) < 2 or path[:2] != ["projects", path[1]]:
                return _error(404, "notFound", f"stub: no route {parsed.path}")
            project, rest = path[1], path[2:]
            if rest[:1] == ["datasets"] and len(rest) >= 3 and rest[2] == "tables":
                if project != self.project or rest[1] != self.dataset:
                    return _error(404, "notFound", f"Not found: Dataset {project}:{rest[1]}")
                if method == "GET" and len(rest) == 3:
                    return 200, self._list_tables()
                if method == "GET" and len(rest) == 4:
                    return self._get_table(rest[3])
            if rest == ["jobs"] and method == "POST" and body is not None:
                return self._insert_job(project, body)
            if rest[:1] == ["jobs"] and len(rest) == 2 and method == "GET":
                return self._job(rest[1])
            if rest[:1] == ["queries"] and len(rest) == 2 and method == "GET":
                return self._query_results(rest[1], query)
        return _error(400, "invalid", f"stub: unsupported {method} {parsed.path}")

    def _list_tables(self) -> dict[str, Any]:
        tables = [
            {
                "kind": "bigquery#table",
                "id": f"{self.project}:{self.dataset}.{name}",
                "tableReference": {"projectId": self.project, "datasetId": self.dataset, "tableId": name},
                "type": "TABLE",
                "timePartitioning": {"type": "DAY"},
            }
            for name in sorted(self._tables)
        ]
        return {"kind": "bigquery#tableList", "tables": tables, "totalItems": len(tables)}

    def _get_table(self, name: str) -> tuple[int, dict[str, Any]]:
        fields = self._tables.get(name)
        if fields is None:
            return _error(404, "notFound", f"Not found: Table {self.project}:{self.dataset}.{name}")
        rows = self._con.execute(f'SELECT count(*) FROM "{name}"').fetchone()
        return 200, {
            "kind": "bigquery#table",
            "id": f"{self.project}:{self.dataset}.{name}",
            "tableReference": {"projectId": self.project, "datasetId": self.dataset, "tableId": name},
            "schema": {"fields": fields},
            "numRows": str(rows[0] if rows else 0),
            "type": "TABLE",
            "timePartitioning": {"type": "DAY"},
            "location": "US",
        }

    def _insert_job(self, project: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        config = body.get("configuration", {}).get("query")
        if config is None:
            return _error(400, "invalid", "stub: only query jobs")
        sql = config["query"]
        self.queries.append(sql)
        params = {p["name"]: p["parameterValue"]["value"] for p in config.get("queryParameters", [])}
        table = re.search(r"\bFROM\s+`([^`]+)`", sql, re.IGNORECASE)
        name = table[1].rsplit(".", 1)[-1] if table else ""
        if self._tables.get(name) is None:
            return _error(404, "notFound", f"Not found: Table {table[1] if table else '?'}")
        if _MAX_QUERY.search(sql):
            fields = [_scalar_field("invoice_month", "STRING"), _scalar_field("max_export_time", "TIMESTAMP")]
            result = self._con.execute(
                f'SELECT invoice.month, max(export_time) FROM "{name}"'
                " WHERE CAST(_PARTITIONTIME AS DATE) >= CAST($since AS DATE) GROUP BY 1 ORDER BY 1",
                {"since": params["since"]},
            ).fetchall()
            rows = [dict(zip(("invoice_month", "max_export_time"), r, strict=True)) for r in result]
        elif match := _ROWS_QUERY.match(sql):
            columns = [c.strip().strip("`") for c in match["columns"].split(",")]
            by_name = {f["name"]: f for f in self._tables[name] or []}
            unknown = [c for c in columns if c not in by_name]
            if unknown:
                return _error(400, "invalidQuery", f"Unrecognized name: {unknown[0]}")
            fields = [by_name[c] for c in columns]
            select = ", ".join(f'"{c}"' for c in columns)
            rows = (
                self._con.execute(
                    f'SELECT {select} FROM "{name}" WHERE invoice.month = $month'
                    " AND export_time > $previous::TIMESTAMPTZ AND export_time <= $until::TIMESTAMPTZ",
                    {"month": params["month"], "previous": params["previous"], "until": params["until"]},
                )
                .fetch_arrow_table()
                .to_pylist()
            )
        else:
            return _error(400, "invalidQuery", "stub: not one of the two queries it knows")
        job_id = body.get("jobReference", {}).get("jobId") or uuid.uuid4().hex
        reference = {"projectId": project, "jobId": job_id, "location": "US"}
        job = {
            "kind": "bigquery#job",
            "id": f"{project}:US.{job_id}",
            "jobReference": reference,
            "configuration": body["configuration"],
            "status": {"state": "DONE"},
            "statistics": {
                "creationTime": "0",
                "startTime": "0",
                "endTime": "0",
                "query": {"totalBytesProcessed": "0"},
            },
        }
        self._jobs[job_id] = {"job": job, "fields": fields, "rows": rows}
        return 200, job

    def _job(self, job_id: str) -> tuple[int, dict[str, Any]]:
        found = self._jobs.get(job_id)
        return (200, found["job"]) if found else _error(404, "notFound", f"Not found: Job {job_id}")

    def _query_results(self, job_id: str, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        found = self._jobs.get(job_id)
        if found is None:
            return _error(404, "notFound", f"Not found: Job {job_id}")
        start = int(query.get("pageToken") or query.get("startIndex") or 0)
        size = min(int(query.get("maxResults", self.page_size)), self.page_size)
        rows = found["rows"]
        timestamps = "int64" if query.get("formatOptions.useInt64Timestamp", "").lower() == "true" else "float"
        if query.get("formatOptions.timestampOutputFormat") == "ISO8601_STRING":
            timestamps = "iso"
        page = [_row(r, found["fields"], timestamps) for r in rows[start : start + size]]
        response: dict[str, Any] = {
            "kind": "bigquery#getQueryResultsResponse",
            "jobReference": found["job"]["jobReference"],
            "schema": {"fields": found["fields"]},
            "totalRows": str(len(rows)),
            "jobComplete": True,
            "cacheHit": False,
        }
        if page:
            response["rows"] = page
        if start + size < len(rows) and size > 0:
            response["pageToken"] = str(start + size)
        return 200, response


def _handler(stub: BigQueryStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else None
            status, document = stub.handle(method, self.path, body)
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _error(status: int, reason: str, message: str) -> tuple[int, dict[str, Any]]:
    errors = [{"message": message, "domain": "global", "reason": reason}]
    return status, {"error": {"code": status, "message": message, "errors": errors, "status": _STATUS.get(status, "")}}


def _scalar_field(name: str, kind: str) -> dict[str, Any]:
    return {"name": name, "type": kind, "mode": "NULLABLE"}


def _field(field: pa.Field) -> dict[str, Any]:
    """The BigQuery schema field of an Arrow column (lists are REPEATED, structs RECORD)."""
    kind = field.type
    mode = "NULLABLE"
    if pa.types.is_list(kind):
        mode, kind = "REPEATED", kind.value_type
    if pa.types.is_struct(kind):
        return {"name": field.name, "type": "RECORD", "mode": mode, "fields": [_field(f) for f in kind]}
    for test, name in (
        (pa.types.is_string, "STRING"),
        (pa.types.is_floating, "FLOAT"),
        (pa.types.is_decimal, "NUMERIC"),
        (pa.types.is_timestamp, "TIMESTAMP"),
        (pa.types.is_boolean, "BOOLEAN"),
        (pa.types.is_integer, "INTEGER"),
    ):
        if test(kind):
            return {"name": field.name, "type": name, "mode": mode}
    raise TypeError(f"stub: no BigQuery type for {field}")


def _row(row: dict[str, Any], fields: list[dict[str, Any]], timestamps: str) -> dict[str, Any]:
    return {"f": [{"v": _cell(row.get(f["name"]), f, timestamps)} for f in fields]}


def _cell(value: Any, field: dict[str, Any], timestamps: str) -> Any:
    if field["mode"] == "REPEATED":
        return [{"v": _value(v, field, timestamps)} for v in value or []]
    return _value(value, field, timestamps)


def _value(value: Any, field: dict[str, Any], timestamps: str) -> Any:
    if value is None:
        return None
    kind = field["type"]
    if kind == "RECORD":
        return _row(value, field["fields"], timestamps)
    if kind == "TIMESTAMP":
        assert isinstance(value, dt.datetime) and value.tzinfo is not None
        if timestamps == "iso":
            return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
        micros = (value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
        return str(micros) if timestamps == "int64" else f"{micros / 1e6:.6f}"
    if kind == "BOOLEAN":
        return "true" if value else "false"
    if kind == "NUMERIC":
        return format(Decimal(value), "f")
    return repr(value) if kind == "FLOAT" else str(value)
