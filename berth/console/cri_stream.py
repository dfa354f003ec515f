"""An exec console on containerd's streaming server (a member of a capsule with
``capsule_driver = cri``).

The agent asks the CRI runtime for an exec (``Exec`` → a single-use URL on the
runtime's streaming server, ``stream_server_address``) and records it with the exec id
it hands the API; the API's console token names that exec, as for Docker. Once the
token is spent, the proxy opens the URL as a WebSocket with Kubernetes' channel
protocol ``v4.channel.k8s.io``, where each binary message starts with its channel::

    0 stdin  (client → runtime)      3 error  (the exec's end status, JSON)
    1 stdout (runtime → client)      4 resize (client → runtime, TTY only)
    2 stderr (runtime → client)

and relays: the client's frames go to channel 0, channels 1 and 2 come back as the
client's frames (binary, or base64 text with the ``base64`` subprotocol), never cut
in a UTF-8 character. The console ends when either side closes.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging

from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from berth.console.docker_socket import BackendError

LOG = logging.getLogger(__name__)

PROTOCOL = Subprotocol("v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR = 0, 1, 2, 3


def websocket_url(url: str) -> str:
    if url.startswith("http://"):
        return "ws://" + url[len("http://"):]
    if url.startswith("https://"):
        return "wss://" + url[len("https://"):]
    return url


async def relay(ws: ServerConnection, url: str, encode: bool = False) -> str:
    """Relay the console ``ws`` and the runtime's exec at ``url`` until one ends; what
    ended it. ``BackendError`` when the runtime refuses the stream."""
    from berth.console.proxy import split_utf8_tail

    try:
        backend = await connect(websocket_url(url), subprotocols=[PROTOCOL],
                                open_timeout=10, max_size=None, compression=None)
    except (OSError, InvalidHandshake, TimeoutError) as err:
        raise BackendError(f"containerd's streaming server refused the exec: {err}") from err

    async def send(data: bytes) -> bool:
        try:
            await ws.send(base64.b64encode(data).decode("ascii") if encode else data)
        except ConnectionClosed:
            return False
        return True

    async def downstream() -> str:
        held = {STDOUT: b"", STDERR: b""}
        status = "the exec ended"
        try:
            async for message in backend:
                data = message.encode() if isinstance(message, str) else message
                if not data:
                    continue
                channel, payload = data[0], data[1:]
                if channel == ERROR and payload:
                    status = _status_text(payload)
                    continue
                if channel not in held or not payload:
                    continue
                out, held[channel] = split_utf8_tail(held[channel] + payload)
                if out and not await send(out):
                    return "the client went away"
        except ConnectionClosed:
            pass
        for rest in held.values():
            if rest:
                await send(rest)
        return status

    async def upstream() -> str:
        try:
            async for message in ws:
                if encode:
                    data = base64.b64decode(message, validate=False)
                else:
                    data = message.encode("utf-8") if isinstance(message, str) else message
                await backend.send(bytes([STDIN]) + data)
        except ConnectionClosed:
            return "the client went away"
        except binascii.Error:
            return "the client sent a frame that is not base64"
        return "the client closed the websocket"

    tasks = [asyncio.create_task(downstream()), asyncio.create_task(upstream())]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await backend.close()
    reason = next((r for t, r in zip(tasks, results) if t in done and isinstance(r, str)),
                  "cancelled")
    await ws.close(1000, reason[:120])
    return reason


def _status_text(payload: bytes) -> str:
    """The exec's end as the runtime's Status object says it."""
    try:
        status = json.loads(payload)
    except ValueError:
        return f"the exec ended: {payload[:80].decode(errors='replace')}"
    if status.get("status") == "Success":
        return "the exec ended (exit 0)"
    causes = (status.get("details") or {}).get("causes") or []
    code = next((c.get("message") for c in causes if c.get("reason") == "ExitCode"), None)
    return f"the exec ended (exit {code})" if code else \
        f"the exec ended: {status.get('message', 'failed')}"
