"""The API's server keeps an idle keep-alive connection open longer than OpenStack
clients wait between two polls (osc-lib's ``wait_for_status`` sleeps 5 s): with
uvicorn's default of 5 s, ``openstack appcontainer run --wait`` failed with
``RemoteDisconnected`` when its next poll met the server's close."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn

from berth.api import server as api_server

#: osc-lib's poll interval, and a margin for a loaded machine.
CLIENT_POLL = 5.0 + 1.0


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def served() -> Iterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = uvicorn.Server(api_server.config(_app, "127.0.0.1", port, head_timeout=10))
    thread = threading.Thread(target=server.run, name="api-server-test", daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    yield port
    server.should_exit = True
    thread.join(10)


def _get(sock: socket.socket) -> bytes:
    sock.sendall(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
    data = b""
    while not data.endswith(b"ok"):
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    return data


def test_a_connection_idle_for_a_client_poll_still_answers(served: int) -> None:
    assert api_server.KEEP_ALIVE_TIMEOUT > CLIENT_POLL
    with socket.create_connection(("127.0.0.1", served), timeout=10) as sock:
        assert _get(sock).startswith(b"HTTP/1.1 200")
        time.sleep(CLIENT_POLL)
        assert _get(sock).startswith(b"HTTP/1.1 200")
