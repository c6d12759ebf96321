"""A fault-injecting HTTP proxy in front of a local server (moto, Azurite, a wire-format stub).

``inject(method, path part, fault)`` makes matching requests fail: ``throttle`` answers 503 (an S3-style
SlowDown body, which Azure and Google clients treat as a retryable 503 too) and ``truncate`` sends the full
Content-Length with half the body, then drops the connection, as a network failure mid-file would.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
)


@dataclass
class FaultProxy:
    """Forwards S3 requests to moto; ``inject`` makes matching requests fail: 503 SlowDown or a body cut short."""

    upstream_port: int
    faults: list[list] = field(default_factory=list)  # [method, path substring, fault, times left]
    requests: list[tuple[str, str]] = field(default_factory=list)
    fired: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def inject(self, method: str, path_part: str, fault: str, times: int = 1) -> None:
        self.faults.append([method, path_part, fault, times])

    def reset(self) -> None:
        with self.lock:
            self.faults.clear()
            self.requests.clear()
            self.fired.clear()

    def take(self, method: str, path: str) -> str | None:
        with self.lock:
            self.requests.append((method, path))
            for fault in self.faults:
                if fault[0] == method and fault[1] in path and fault[3] > 0:
                    fault[3] -= 1
                    self.fired.append((fault[2], path))
                    return fault[2]
        return None

    def gets(self) -> list[str]:
        return [path for method, path in self.requests if method == "GET" and "list-type" not in path]


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _forward(self) -> None:
            fault = proxy.take(self.command, self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if fault == "throttle":
                self._reply(503, {"Content-Type": "application/xml"}, _SLOW_DOWN)
                return
            upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
            upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
            response = upstream.getresponse()
            data = response.read()
            upstream.close()
            # HEAD keeps the object's length; other bodies were read whole, so their length is set once below
            dropped = {"transfer-encoding", "connection"} | (set() if self.command == "HEAD" else {"content-length"})
            headers = {k: v for k, v in response.getheaders() if k.lower() not in dropped}
            if self.command != "HEAD":
                headers["Content-Length"] = str(len(data))
            if fault == "truncate":
                # Full Content-Length, half the body, then the connection drops.
                self._reply(response.status, headers, data[: len(data) // 2])
                self.close_connection = True
                return
            self._reply(response.status, headers, data if self.command != "HEAD" else b"")

        def _reply(self, status: int, headers: dict[str, str], data: bytes) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            if not any(k.lower() == "content-length" for k in headers):
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

    return Handler


@contextmanager
def fault_proxy(upstream_port: int) -> Iterator[FaultProxy]:
    """A proxy on a free 127.0.0.1 port forwarding to ``upstream_port``; its address is ``.url``."""
    proxy = FaultProxy(upstream_port=upstream_port)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(proxy))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield proxy
    finally:
        server.shutdown()
