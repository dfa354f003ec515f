"""A console on containerd's streaming server: an exec in, or an attach to, a member
of a capsule with ``capsule_driver = cri``.

The agent asks the CRI runtime for the stream (``Exec`` or ``Attach`` → a single-use
URL on the runtime's streaming server, ``stream_server_address``) and records it with
an id it hands the API; the API's console token names that id, as it names a Docker
exec. Once the token is spent, the proxy opens the URL as a WebSocket with
Kubernetes' channel protocol ``v4.channel.k8s.io``, where each binary message starts
with its channel::

    0 stdin  (client → runtime)      3 error  (the stream's end status, JSON)
    1 stdout (runtime → client)      4 resize (proxy → runtime, TTY only:
    2 stderr (runtime → client)                {"Width": w, "Height": h})

and relays: the client's frames go to channel 0, channels 1 and 2 come back as the
client's frames (``berth.console.frames``). A TTY resize reaches the proxy through
the console's record (the agent writes the size the API was asked for; ``sizes``
reads it) and goes on channel 4. The console ends when either side closes, or, for
an attach, at Ctrl-] (which the member never sees); closing an attach leaves the
member running.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from berth.console import frames
from berth.console.docker_socket import BackendError

LOG = logging.getLogger(__name__)

PROTOCOL = Subprotocol("v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
#: Ctrl-]: detaches from an attach console (as ``proxy.ATTACH_DETACH_KEYS`` for Docker).
DETACH_KEY = b"\x1d"
#: How often an open console looks for a new TTY size (seconds).
SIZE_POLL = 0.3

#: Reads the size last asked for the console: (height, width), or None.
SizeReader = Callable[[], Awaitable[tuple[int, int] | None]]


def websocket_url(url: str) -> str:
    if url.startswith("http://"):
        return "ws://" + url[len("http://"):]
    if url.startswith("https://"):
        return "wss://" + url[len("https://"):]
    return url


def resize_message(height: int, width: int) -> bytes:
    """A resize on channel 4, as the kubelet's streaming server reads it."""
    return bytes([RESIZE]) + json.dumps({"Width": width, "Height": height}).encode()


async def relay(ws: ServerConnection, url: str, encode: bool = False,
                sizes: SizeReader | None = None, what: str = "exec") -> str:
    """Relay the console ``ws`` and the runtime's stream at ``url`` until one ends;
    what ended it. ``sizes``: where TTY sizes asked for this console are read.
    ``BackendError`` when the runtime refuses the stream."""
    try:
        backend = await connect(websocket_url(url), subprotocols=[PROTOCOL],
                                open_timeout=10, max_size=None, compression=None)
    except (OSError, InvalidHandshake, TimeoutError) as err:
        raise BackendError(f"containerd's streaming server refused the {what}: {err}") \
            from err
    out = frames.ToClient(ws, encode)

    async def downstream() -> str:
        status = f"the {what} ended"
        try:
            async for message in backend:
                data = message.encode() if isinstance(message, str) else message
                if not data:
                    continue
                channel, payload = data[0], data[1:]
                if channel == ERROR and payload:
                    status = _status_text(payload, what)
                    continue
                if channel not in (STDOUT, STDERR) or not payload:
                    continue
                if not await out.send(payload, channel):
                    return "the client went away"
        except ConnectionClosed:
            pass
        await out.flush()
        return status

    async def write(data: bytes) -> None:
        await backend.send(bytes([STDIN]) + data)

    async def resizes() -> None:
        if sizes is None:
            return
        sent: tuple[int, int] | None = None
        while True:
            size = await sizes()
            if size is not None and size != sent:
                await backend.send(resize_message(*size))
                sent = size
            await asyncio.sleep(SIZE_POLL)

    try:
        # An attach ends at Ctrl-], as Docker's does (containerd has no detach keys);
        # the member goes on.
        upstream = frames.from_client(ws, write, encode,
                                      detach=DETACH_KEY if what == "attach" else None)
        return await frames.race(ws, downstream(), upstream, resizes())
    finally:
        await backend.close()


def _status_text(payload: bytes, what: str) -> str:
    """The stream's end as the runtime's Status object says it."""
    try:
        status = json.loads(payload)
    except ValueError:
        return f"the {what} ended: {payload[:80].decode(errors='replace')}"
    if status.get("status") == "Success":
        return f"the {what} ended (exit 0)"
    causes = (status.get("details") or {}).get("causes") or []
    code = next((c.get("message") for c in causes if c.get("reason") == "ExitCode"), None)
    return f"the {what} ended (exit {code})" if code else \
        f"the {what} ended: {status.get('message', 'failed')}"
