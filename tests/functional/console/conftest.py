"""Fixtures of the console tests: interactive shell containers made through the API
(always removed afterwards), and reading a websocket until some output shows."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker.errors
import pytest
import websocket
from support.berth_proc import TEST_IMAGE, wait_for


@pytest.fixture
def make_shell(docker_client) -> Iterator[Callable[..., Any]]:  # type: ignore[no-untyped-def]
    """``make_shell(zun, interactive=True, tty=True)``: a Running ``sh`` container."""
    made: list[tuple[Any, str]] = []

    def make(zun: Any, interactive: bool = True, tty: bool = True,
             command: list[str] | None = None) -> Any:
        kwargs: dict[str, Any] = {"interactive": interactive}
        if interactive:
            kwargs["tty"] = tty
        c = zun.containers.run(name=f"console-{uuidlib.uuid4().hex[:8]}", image=TEST_IMAGE,
                               command=command or ["sh"], image_pull_policy="ifnotpresent",
                               **kwargs)
        made.append((zun, c.uuid))
        wait_for(lambda: zun.containers.get(c.uuid).status == "Running", 60,
                 what=f"container {c.uuid} to run")
        return zun.containers.get(c.uuid)

    yield make
    for zun, uuid in made:
        with contextlib.suppress(Exception):   # the Docker removal below still runs
            zun.containers.delete(uuid, force=True)
        try:
            docker_client.containers.get(f"zun-{uuid}").remove(force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as err:   # berth's own delete got there first
            if err.status_code != 409:
                raise


def _read_until(ws: websocket.WebSocket, needle: bytes, timeout: float = 20.0) -> bytes:
    """Everything received until ``needle`` shows up; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    seen = b""
    while needle not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no {needle!r} within {timeout} s; got {seen[-500:]!r}")
        ws.settimeout(remaining)
        try:
            data = ws.recv()
        except websocket.WebSocketTimeoutException:
            continue
        if not data:
            raise AssertionError(f"the console closed before {needle!r}; got {seen[-500:]!r}")
        seen += data if isinstance(data, bytes) else data.encode()
    return seen


@pytest.fixture
def read_until() -> Callable[..., bytes]:
    return _read_until


@pytest.fixture
def connect(berth) -> Callable[..., websocket.WebSocket]:  # type: ignore[no-untyped-def]
    """Open a console URL as python-zunclient does (subprotocols, Origin)."""
    opened: list[websocket.WebSocket] = []

    def open_(url: str, origin: str | None = "default", **kwargs: Any) -> websocket.WebSocket:
        if origin == "default":
            origin = f"http://127.0.0.1:{berth.wsport}"
        ws = websocket.create_connection(url, timeout=20, origin=origin,
                                         subprotocols=kwargs.pop("subprotocols",
                                                                 ["binary", "base64"]),
                                         skip_utf8_validation=True, **kwargs)
        opened.append(ws)
        return ws

    yield open_
    for ws in opened:
        ws.close()


@pytest.fixture
def read_until_closed() -> Callable[[websocket.WebSocket], bytes]:
    """Read a console until the proxy closes it; what came before the close."""

    def read(ws: websocket.WebSocket, timeout: float = 20.0) -> bytes:
        seen = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ws.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                data = ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            except websocket.WebSocketConnectionClosedException:
                return seen
            if not data:
                return seen
            seen += data if isinstance(data, bytes) else data.encode()
        raise AssertionError(f"the console stayed open for {timeout} s; got {seen[-500:]!r}")

    return read


@pytest.fixture
def drive_zunclient(monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """``drive(client, lines, expect)``: run python-zunclient's own console loop
    (connect, resize, poll loop) of an AttachClient or ExecClient with a pipe as stdin
    and a file as stdout; type ``lines``, wait for ``expect`` in the output, then end
    stdin (which ends the loop). Returns the output."""

    def drive(client: Any, lines: list[bytes], expect: bytes) -> str:
        read_fd, write_fd = os.pipe()
        out = tempfile.NamedTemporaryFile("w+", encoding="utf-8", delete=False)  # noqa: SIM115
        monkeypatch.setattr(sys, "stdin", os.fdopen(read_fd, "rb", buffering=0))
        monkeypatch.setattr(sys, "stdout", out)
        failure: list[str] = []

        def typist() -> None:
            try:
                for line in lines:
                    os.write(write_fd, line)
                wait_for(lambda: expect.decode() in Path(out.name).read_text(), 20,
                         what=f"{expect!r} in zunclient's output")
            except AssertionError as err:
                failure.append(str(err))
            finally:
                os.close(write_fd)          # end of input: zunclient's loop quits

        try:
            client.connect()
            client.handle_resize()
            thread = threading.Thread(target=typist)
            thread.start()
            client.start_loop()
            thread.join(30)
        finally:
            monkeypatch.undo()
            client.ws.close()
            out.close()
        text = Path(out.name).read_text()
        os.unlink(out.name)
        assert not failure, failure[0] + "\n" + text
        return text

    return drive
