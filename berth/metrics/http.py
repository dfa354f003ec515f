"""HealthServer: the agent's own small HTTP listener (``[compute]metrics_port``) for
``GET /metrics`` (Prometheus text), ``/healthz`` (alive) and ``/readyz`` (200 or 503
with a JSON body naming the failed checks). No authentication, like the API's: they
tell counts and reachability, nothing about containers.

The standard library's threading HTTP server is enough for a scraper and a prober
every few seconds, and keeps ``berth-compute`` free of the API's stack. ``berth
serve`` does not start one: its API serves the same three paths for the whole process.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from berth.metrics.health import ALIVE_BODY, Readiness

LOG = logging.getLogger(__name__)


class HealthServer:
    """Serves the three paths on ``host:port`` (port 0: any free port, see ``port``)
    from a daemon thread named ``metrics-http``. ``start`` raises OSError when the
    port cannot be bound; ``stop`` is safe twice and before ``start``."""

    def __init__(self, host: str, port: int, readiness: Readiness, *,
                 client_timeout: float = 10.0) -> None:
        self._address = (host, port)
        self._readiness = readiness
        self._client_timeout = client_timeout
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return int(self._server.server_address[1])

    def start(self) -> None:
        server = ThreadingHTTPServer(self._address,
                                     _handler(self._readiness, self._client_timeout))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="metrics-http",
                                        daemon=True)
        self._thread.start()
        LOG.info("metrics and health on http://%s:%s/metrics (/healthz, /readyz)",
                 self._address[0], self.port)

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(5)


def _handler(readiness: Readiness, client_timeout: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "berth-compute"
        #: A client that sends nothing (or trickles) is dropped after this many
        #: seconds: each connection holds a thread, and a slowloris must not pile them up.
        timeout = client_timeout

        def do_GET(self) -> None:  # http.server calls it so
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._answer(200, CONTENT_TYPE_LATEST, generate_latest(REGISTRY))
            elif path == "/healthz":
                self._json(200, ALIVE_BODY)
            elif path == "/readyz":
                report = readiness.report()
                self._json(report.status_code, report.body())
            else:
                self._json(404, {"error": f"no such path {path}; try /metrics, /healthz "
                                          f"or /readyz"})

        def _json(self, status: int, body: Any) -> None:
            self._answer(status, "application/json", json.dumps(body).encode())

        def _answer(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            LOG.debug("%s %s", self.address_string(), format % args)

    return Handler
