"""The client's half of every console relay, whichever engine is behind it: frames
to the client (binary, or base64 text with the ``base64`` subprotocol, never cut in a
UTF-8 character), frames from the client, and the race of the two directions that
ends a console. ``proxy.relay`` (Docker's hijacked stream) and ``cri_stream.relay``
(a CRI streaming server's channels) supply only what reads from and writes to their
engine."""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

#: A close reason must fit in a control frame (123 bytes).
CLOSE_REASON_MAX = 120


def split_utf8_tail(data: bytes) -> tuple[bytes, bytes]:
    """``data`` cut before an incomplete UTF-8 sequence at its end: (complete, rest).

    python-zunclient decodes every frame on its own as UTF-8 and dies on a character
    split between two frames, so the proxy never ends a frame in the middle of one
    (the rest goes at the head of the next frame). Bytes that are not UTF-8 at all are
    passed as they are."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:          # a continuation byte: look further back
            continue
        if byte & 0xE0 == 0xC0:
            length = 2
        elif byte & 0xF0 == 0xE0:
            length = 3
        elif byte & 0xF8 == 0xF0:
            length = 4
        else:                            # ASCII or not UTF-8: nothing to hold back
            return data, b""
        return (data[:-back], data[-back:]) if length > back else (data, b"")
    return data, b""


class ToClient:
    """Bytes from the engine to the client's websocket, whole characters per frame."""

    def __init__(self, ws: ServerConnection, encode: bool) -> None:
        self.ws = ws
        self.encode = encode
        self._held: dict[int, bytes] = {}

    async def send(self, data: bytes, stream: int = 0) -> bool:
        """Send ``data`` (of engine stream ``stream``: each keeps its own unfinished
        character); False when the client went away."""
        out, self._held[stream] = split_utf8_tail(self._held.get(stream, b"") + data)
        return not out or await self._frame(out)

    async def flush(self) -> None:
        """What is held back, sent as it is (the engine's stream ended)."""
        for stream, rest in list(self._held.items()):
            if rest:
                await self._frame(rest)
            self._held[stream] = b""

    async def _frame(self, data: bytes) -> bool:
        try:
            await self.ws.send(base64.b64encode(data).decode("ascii") if self.encode
                               else data)
        except ConnectionClosed:
            return False
        return True


async def from_client(ws: ServerConnection, write: Callable[[bytes], Awaitable[None]],
                      encode: bool, detach: bytes | None = None) -> str:
    """Hand each of the client's frames to ``write`` until the client stops; what
    stopped it. ``detach``: a key that ends the console where it shows (what came
    before it is written; the key is not), for engines that have no detach keys of
    their own."""
    try:
        async for message in ws:
            if encode:
                data = base64.b64decode(message, validate=False)
            else:
                data = message.encode("utf-8") if isinstance(message, str) else message
            if detach is not None and detach in data:
                before = data[:data.index(detach)]
                if before:
                    await write(before)
                return "the client detached"
            await write(data)
    except ConnectionClosed:
        return "the client went away"
    except binascii.Error:
        return "the client sent a frame that is not base64"
    return "the client closed the websocket"


async def race(ws: ServerConnection, downstream: Coroutine[Any, Any, str],
               upstream: Coroutine[Any, Any, str],
               *helpers: Coroutine[Any, Any, Any]) -> str:
    """Run both directions until one ends (``helpers`` run beside them and are
    cancelled with them); close the client's websocket with what ended it, and
    return that."""
    tasks = [asyncio.create_task(downstream), asyncio.create_task(upstream)]
    others = [asyncio.create_task(h) for h in helpers]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks + others:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*others, return_exceptions=True)
    reason = next((r for t, r in zip(tasks, results) if t in done and isinstance(r, str)),
                  None)
    if reason is None:
        errors = [r for r in results if isinstance(r, BaseException)
                  and not isinstance(r, asyncio.CancelledError)]
        reason = f"the engine connection failed: {errors[0]}" if errors else "cancelled"
    await ws.close(1000, reason[:CLOSE_REASON_MAX])
    return reason
