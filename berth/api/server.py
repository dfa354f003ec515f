"""The API's HTTP server: uvicorn, with the request's head bounded in time.

uvicorn waits for a request's head (request line and headers) for as long as the
client takes, and arms its keep-alive timer only after a first response: a client
that opens connections and sends a few bytes of headers now and then (slowloris)
holds each connection, and its file descriptor, for ever. ``HeadTimeoutProtocol``
closes a connection whose request head has not arrived ``head_timeout`` seconds
after the connection opened or after the request began (``[api]header_timeout``). A
body that trickles in is bounded by ``berth.api.body`` (``[api]body_timeout``).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
import time
from typing import Any

from berth.common.imports import shallow_package
from berth.conf.api import HEADER_TIMEOUT

# uvicorn's own __init__ imports its command line (click, multiprocessing's
# supervisors), which berth does not use (berth.common.imports); its lifespan modules
# import Config from the package.
shallow_package("uvicorn", {"Config": "uvicorn.config"})

# After the package is registered: these load their own modules only.
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import Server

#: Server: uvicorn's, which berth-api and berth serve run.
__all__ = ["KEEP_ALIVE_TIMEOUT", "Config", "HeadTimeoutProtocol", "Server", "config"]

LOG = logging.getLogger(__name__)


class HeadTimeoutProtocol(HttpToolsProtocol):
    """HttpToolsProtocol that closes a connection whose request head is too slow."""

    head_timeout: float = HEADER_TIMEOUT

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_timer: asyncio.TimerHandle | None = None
        self._arm_head_timer()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_head_timer()

    def on_headers_complete(self) -> None:
        self._cancel_head_timer()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        if getattr(self, "_head_timer", None) is None:
            self._head_timer = self.loop.call_later(self.head_timeout, self._head_too_slow)

    def _cancel_head_timer(self) -> None:
        timer = getattr(self, "_head_timer", None)
        if timer is not None:
            timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        peer = f"{self.client[0]}:{self.client[1]}" if self.client else "?"
        LOG.debug("closing the connection from %s: no complete request head within %g s",
                  peer, self.head_timeout)
        _SLOW_HEADS.count(peer, self.head_timeout)
        self.transport.close()


class _SlowHeadReport:
    """One log line a minute at most for connections closed for a slow head: a
    slowloris would otherwise write one line per connection."""

    def __init__(self, every: float = 60.0) -> None:
        self._every = every
        self._lock = threading.Lock()
        self._closed = 0
        self._last = -every

    def count(self, peer: str, timeout: float) -> None:
        with self._lock:
            self._closed += 1
            now = time.monotonic()
            if now - self._last < self._every:
                return
            closed, self._closed, self._last = self._closed, 0, now
        LOG.warning("closed %d connection(s) whose request head did not arrive within %g s "
                    "(the last from %s); a client this slow is broken or hostile "
                    "([api]header_timeout)", closed, timeout, peer)


_SLOW_HEADS = _SlowHeadReport()

#: Seconds an idle keep-alive connection stays open (uvicorn's default is 5). OpenStack
#: clients poll on one keep-alive connection: osc-lib's ``wait_for_status`` (behind
#: ``openstack appcontainer run --wait`` and ``delete --wait``) every 5 s, so with
#: uvicorn's 5 s the server closed the connection just as the next poll went out and the
#: client failed with ``RemoteDisconnected``. A slow client cannot hold a connection
#: longer for it: the head timer runs from the first byte of every request.
KEEP_ALIVE_TIMEOUT = 75


def config(app: Any, host: str, port: int, head_timeout: float,
           tls: ssl.SSLContext | None = None) -> Config:
    """uvicorn's configuration for the API (``berth-api`` and ``berth serve``); with
    ``tls``, HTTPS only (``[api]enable_ssl_api``: a plain HTTP request fails its TLS
    handshake and is closed)."""
    protocol = type("HeadTimeoutProtocol", (HeadTimeoutProtocol,),
                    {"head_timeout": float(head_timeout)})
    factory = None if tls is None else (lambda _config, _default: tls)
    return Config(app, host=host, port=port, http=protocol, log_config=None,
                  access_log=False, timeout_graceful_shutdown=5,
                  timeout_keep_alive=KEEP_ALIVE_TIMEOUT, ssl_context_factory=factory)
