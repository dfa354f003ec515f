"""The client half of a console relay (berth.console.frames): the client's frames to
the engine, and the detach key where the engine has none."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

from berth.console.frames import from_client


class Client:
    """A client websocket that sends ``frames`` and then closes."""

    def __init__(self, *frames: bytes | str) -> None:
        self.frames = frames

    async def __aiter__(self) -> AsyncIterator[bytes | str]:
        for frame in self.frames:
            yield frame


def relay(client: Client, encode: bool = False, detach: bytes | None = None
          ) -> tuple[str, list[bytes]]:
    written: list[bytes] = []

    async def write(data: bytes) -> None:
        written.append(data)

    reason = asyncio.run(from_client(client, write, encode, detach))  # type: ignore[arg-type]
    return reason, written


def test_frames_go_to_the_engine_until_the_client_closes() -> None:
    assert relay(Client(b"ls\n", "pwd\n")) == ("the client closed the websocket",
                                               [b"ls\n", b"pwd\n"])
    encoded: Any = base64.b64encode(b"\x00\xff").decode()
    assert relay(Client(encoded), encode=True)[1] == [b"\x00\xff"]


def test_the_detach_key_ends_the_console_after_what_came_before_it() -> None:
    reason, written = relay(Client(b"echo a\n", b"xy\x1dnever", b"never"), detach=b"\x1d")
    assert reason == "the client detached" and written == [b"echo a\n", b"xy"]
    assert relay(Client(b"a\x1d"))[1] == [b"a\x1d"]       # no detach key: passed on
