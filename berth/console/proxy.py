"""One console session, from the websocket handshake to the last byte.

Timeline of a connection::

    handshake ─► Origin check ─► token consumed ─► container row ─┐   (process_request:
                  403              403               409          │    refused with an
                                                                  │    HTTP status, the
                                                                  ▼    websocket never opens)
    101 Switching Protocols ─► engine: inspect, attach / exec start (hijacked)
                                 │ fails or does not answer: websocket closed 1011
                                 ▼
                               relay both ways (binary frames; base64 text frames when
                               the client offered only ``base64``)
                                 │ either side ends (client closes, container exits,
                                 ▼ Ctrl-] detaches)
                               both closed; the container goes on running

The token is spent before the engine is asked, so a refused or failed console needs a
new URL from the API. Closing a console never stops the container: closing an attach
stream detaches from it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.typing import Subprotocol

from berth.common.log import container_context
from berth.console import cri_stream, execs, frames, tokens
from berth.console.docker_socket import BackendError, Demuxer, DockerSocket, Hijacked
from berth.console.origin import OriginRefused, check_origin, websocket_scheme
from berth.db import containers
from berth.db.base import utcnow
from berth.db.engine import Database

LOG = logging.getLogger(__name__)

#: Ctrl-] detaches from an attach console (Docker's detachKeys syntax).
ATTACH_DETACH_KEYS = "ctrl-]"
_READ_SIZE = 65536
_CLOSE_REASON_MAX = frames.CLOSE_REASON_MAX


@dataclass(frozen=True, slots=True)
class ProxySettings:
    """``[websocket_proxy]`` as the proxy uses it. ``node`` is this node's ``[DEFAULT]
    host``: the proxy reaches only the local engine, so it serves only containers placed
    on this node (None: any)."""

    host: str = "127.0.0.1"
    port: int = 6784
    base_url: str = "ws://127.0.0.1:6784/"
    allowed_origins: tuple[str, ...] = ()
    node: str | None = None
    serves_tls: bool = False


@dataclass(frozen=True, slots=True)
class Target:
    """What an accepted handshake opens: the container (its Docker id) and, for an
    exec console, the exec."""

    container_uuid: str
    docker_id: str
    exec_id: str | None
    #: A CRI runtime's streaming URL of the exec or attach (a capsule member on
    #: containerd), recorded under ``exec_id``.
    stream_url: str | None = None
    kind: str = tokens.KIND_EXEC
    #: The container's row id (where a CRI console's TTY size is read).
    row_id: int = 0


class ConsoleUnavailable(Exception):
    """The token was good but the console cannot be served here (the message says why)."""


class ConsoleConnection(ServerConnection):
    """A websocket connection that carries its accepted :class:`Target`."""

    target: Target | None = None


def _one_header(headers: Headers, name: str) -> str | None:
    values = headers.get_all(name)
    if len(values) > 1:
        raise OriginRefused(f"{len(values)} {name} headers; send one")
    return values[0] if values else None


class ConsoleProxy:
    """The checks and the relay; :mod:`berth.console.server` listens and calls
    :meth:`process_request`, :meth:`select_subprotocol` and :meth:`handle`."""

    def __init__(self, settings: ProxySettings, db: Database, docker: DockerSocket,
                 clock: tokens.Clock = utcnow) -> None:
        self.settings = settings
        self.db = db
        self.docker = docker
        self.clock = clock

    # -- handshake -----------------------------------------------------------------

    async def process_request(self, connection: ServerConnection, request: Request
                              ) -> Response | None:
        """Refuse with an HTTP status (the websocket never opens), or accept: the
        Origin passes and the token is spent on a container this node serves."""
        query = parse_qs(urlsplit(request.path).query)

        def param(name: str) -> str | None:
            values = query.get(name)
            return values[0] if values else None

        headers = request.headers
        try:
            scheme = websocket_scheme(_one_header(headers, "X-Forwarded-Proto"),
                                      self.settings.serves_tls, self.settings.base_url)
            check_origin(_one_header(headers, "Origin"), _one_header(headers, "Host"),
                         scheme, self.settings.allowed_origins)
        except OriginRefused as err:
            LOG.warning("console refused to %s: %s", connection.remote_address, err)
            return connection.respond(403, f"Console refused: {err}.\n")
        try:
            target = await asyncio.to_thread(self._claim, param("token"), param("uuid"),
                                             param("exec_id"))
        except tokens.TokenRefused as err:
            LOG.warning("console of %s refused to %s: %s", param("uuid"),
                        connection.remote_address, err.msg)
            return connection.respond(403, f"{err.msg}\n")
        except ConsoleUnavailable as err:
            LOG.warning("console of %s unavailable: %s", param("uuid"), err)
            return connection.respond(409, f"Console unavailable: {err}\n")
        if isinstance(connection, ConsoleConnection):
            connection.target = target
        return None

    def _claim(self, token: str | None, ident: str | None, exec_id: str | None) -> Target:
        grant = tokens.consume(self.db, token, ident, exec_id, now=self.clock)
        row = containers.find_by_uuid(self.db, grant.container_uuid)
        if row is None or not row.container_id:
            raise ConsoleUnavailable(f"container {grant.container_uuid} has no Docker "
                                     f"container (any more)")
        node = self.settings.node
        if node and row.host != node:
            raise ConsoleUnavailable(
                f"container {row.uuid} runs on host {row.host}, and this console proxy "
                f"serves host {node} only; use the proxy of {row.host}")
        url = execs.url_of(self.db, row.id, grant.exec_id) if grant.exec_id else None
        stream_url = url if url and url.startswith(("http://", "https://")) else None
        if grant.kind == tokens.KIND_ATTACH and grant.exec_id and stream_url is None:
            raise ConsoleUnavailable(f"the attach stream of container {row.uuid} is not "
                                     f"recorded (any more); ask the API for a new URL")
        return Target(container_uuid=row.uuid, docker_id=row.container_id,
                      exec_id=grant.exec_id, stream_url=stream_url, kind=grant.kind,
                      row_id=row.id)

    @staticmethod
    def select_subprotocol(connection: ServerConnection, offered: Sequence[Subprotocol]
                           ) -> Subprotocol | None:
        """``binary`` when offered (zunclient offers ``binary, base64``), else
        ``base64``, else none (a plain websocket client)."""
        for choice in ("binary", "base64"):
            if choice in offered:
                return Subprotocol(choice)
        return None

    # -- session -------------------------------------------------------------------

    async def handle(self, connection: ServerConnection) -> None:
        target = getattr(connection, "target", None)
        if target is None:  # only an accepted handshake gets here
            await connection.close(1011, "no console was granted")
            return
        with container_context(target.container_uuid):
            what = f"exec {target.exec_id[:12]}" if target.exec_id \
                and target.kind != tokens.KIND_ATTACH else "attach"
            if target.stream_url is not None:
                await self._relay_cri(connection, target, what)
                return
            try:
                stream, multiplexed = await self._open(target)
            except BackendError as err:
                LOG.warning("console (%s) failed: %s", what, err)
                await connection.close(1011, str(err)[:_CLOSE_REASON_MAX])
                return
            LOG.info("console (%s) opened for %s", what, connection.remote_address)
            try:
                reason = await relay(connection, stream, multiplexed,
                                     encode=connection.subprotocol == "base64")
            finally:
                await stream.close()
            LOG.info("console (%s) closed: %s", what, reason)

    async def _relay_cri(self, connection: ServerConnection, target: Target,
                         what: str) -> None:
        assert target.stream_url is not None and target.exec_id is not None
        row_id, stream_id = target.row_id, target.exec_id

        async def sizes() -> tuple[int, int] | None:
            return await asyncio.to_thread(execs.size_of, self.db, row_id, stream_id)

        try:
            reason = await cri_stream.relay(connection, target.stream_url,
                                            encode=connection.subprotocol == "base64",
                                            sizes=sizes, what=what.split(" ")[0])
        except BackendError as err:
            LOG.warning("console (%s) failed: %s", what, err)
            await connection.close(1011, str(err)[:_CLOSE_REASON_MAX])
            return
        LOG.info("console (%s, containerd) closed: %s", what, reason)

    async def _open(self, target: Target) -> tuple[Hijacked, bool]:
        """The engine's stream for ``target`` and whether it is multiplexed (no TTY)."""
        docker_id = quote(target.docker_id, safe="")
        if target.exec_id is None:
            info = await self.docker.get_json(f"/containers/{docker_id}/json")
            state = info.get("State") or {}
            if not state.get("Running") or state.get("Paused"):
                raise BackendError(f"the container is {state.get('Status', 'not running')}"
                                   f", not running")
            tty = bool((info.get("Config") or {}).get("Tty"))
            keys = quote(ATTACH_DETACH_KEYS, safe="")
            stream = await self.docker.upgrade(
                f"/containers/{docker_id}/attach?stream=1&stdin=1&stdout=1&stderr=1"
                f"&detachKeys={keys}")
            return stream, not tty
        exec_id = quote(target.exec_id, safe="")
        info = await self.docker.get_json(f"/exec/{exec_id}/json")
        if info.get("ContainerID") != target.docker_id:
            raise BackendError("the exec belongs to another container")
        tty = bool((info.get("ProcessConfig") or {}).get("tty"))
        stream = await self.docker.upgrade(f"/exec/{exec_id}/start",
                                           {"Detach": False, "Tty": tty})
        return stream, not tty


async def relay(ws: ServerConnection, stream: Hijacked, multiplexed: bool,
                encode: bool = False) -> str:
    """Copy bytes both ways until one side ends; returns what ended it. The websocket
    is closed on the way out (the caller closes ``stream``). ``encode``: frames are
    base64 text (the ``base64`` subprotocol) instead of binary."""
    demux = Demuxer() if multiplexed else None
    out = frames.ToClient(ws, encode)

    async def downstream() -> str:
        while True:
            data = await stream.reader.read(_READ_SIZE)
            if not data:
                await out.flush()
                return "the container's stream ended"
            if demux is not None:
                data = demux.feed(data)
            if not await out.send(data):
                return "the client went away"

    async def write(data: bytes) -> None:
        stream.writer.write(data)
        await stream.writer.drain()

    return await frames.race(ws, downstream(), frames.from_client(ws, write, encode))
