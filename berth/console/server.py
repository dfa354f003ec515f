"""The console proxy's listening server: ``websockets`` on an asyncio loop.

Why ``websockets``: it is a small, well-kept asyncio WebSocket implementation whose
handshake hooks (``process_request``, ``select_subprotocol``) let the proxy refuse a
bad Origin or token with a plain HTTP status before the websocket opens, and it needs
no web framework; the proxy is the one asyncio island in berth (design.md).

Two ways to run it:

* :meth:`ConsoleServer.run` in the foreground until SIGTERM/SIGINT (``berth-wsproxy``);
* :meth:`ConsoleServer.start` / :meth:`ConsoleServer.stop`: on its own event loop in a
  named daemon thread (``berth serve``, next to uvicorn).

Settings the server applies: no keepalive pings (python-zunclient's loop would block
in ``recv`` on a ping until the container wrote something), no compression (terminal
bytes are small), a 10 s limit on the opening handshake.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import ssl
import threading

from websockets.asyncio.server import serve

from berth.console.proxy import ConsoleConnection, ConsoleProxy

LOG = logging.getLogger(__name__)
#: The library's own per-connection lines ("connection open", "HTTP response sent")
#: repeat what the proxy logs with the container's uuid; keep only its warnings.
_WS_LOG = logging.getLogger("berth.console.websockets")
_WS_LOG.setLevel(logging.WARNING)

_MAX_FRAME = 1024 * 1024


class ConsoleServer:
    """Serves ``proxy`` on ``proxy.settings.host``:``port`` (port 0: any free port;
    :attr:`port` tells which after start); over TLS only (wss://) with ``tls``
    (``[websocket_proxy]ssl_only``): a plain connection fails its handshake."""

    def __init__(self, proxy: ConsoleProxy, tls: ssl.SSLContext | None = None) -> None:
        self.proxy = proxy
        self.tls = tls
        self.port = proxy.settings.port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    async def serve(self) -> None:
        """Listen until :meth:`stop` (or a signal in :meth:`run`); then close every
        console (code 1001) and return."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        s = self.proxy.settings
        try:
            server = await serve(
                self.proxy.handle, s.host, s.port,
                create_connection=ConsoleConnection,
                process_request=self.proxy.process_request,
                select_subprotocol=self.proxy.select_subprotocol,
                compression=None, ping_interval=None, open_timeout=10,
                max_size=_MAX_FRAME, server_header="berth-wsproxy", logger=_WS_LOG,
                ssl=self.tls)
        except BaseException as err:
            self._error = err
            self._ready.set()
            raise
        sockets = list(server.sockets)
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        LOG.info("console proxy listening on %s://%s:%s/ (engine %s)",
                 "ws" if self.tls is None else "wss", s.host, self.port,
                 self.proxy.docker.address.describe())
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            await server.wait_closed()
            LOG.info("console proxy stopped")

    # -- foreground (berth-wsproxy) -------------------------------------------------

    def run(self) -> None:
        """Serve in this thread until SIGTERM or SIGINT."""

        async def main() -> None:
            loop = asyncio.get_running_loop()
            task = asyncio.create_task(self.serve())
            await asyncio.to_thread(self._ready.wait)
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._request_stop)
            await task

        asyncio.run(main())

    # -- background thread (berth serve) ----------------------------------------------

    def start(self, timeout: float = 10.0) -> None:
        """Serve on a new event loop in a daemon thread; return once listening.
        Raises what kept it from listening (OSError: address in use, ...)."""
        self._thread = threading.Thread(target=lambda: asyncio.run(self._serve_quietly()),
                                        name="console-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"the console proxy did not start within {timeout} s")
        if self._error is not None:
            raise self._error

    async def _serve_quietly(self) -> None:
        try:
            await self.serve()
        except Exception:  # a thread boundary: report, do not vanish
            if self._error is None:  # start() already reports a failure to listen
                LOG.exception("console proxy failed")

    def _request_stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def stop(self, timeout: float = 15.0) -> None:
        """Close every console and stop listening (safe twice, and before start)."""
        if self._loop is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._request_stop)
            except RuntimeError:  # the loop closed meanwhile
                pass
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                LOG.warning("console proxy did not stop within %s s", timeout)
