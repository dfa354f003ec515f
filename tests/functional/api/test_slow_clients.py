"""Slow clients (slowloris) against a real ``berth serve``: a connection whose request
head or body trickles in is closed or refused within ``[api]header_timeout`` and
``[api]body_timeout`` (uvicorn alone held such connections for ever), and the API goes
on serving everybody else meanwhile; the console proxy closes a handshake that does
not finish within 10 s."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx
import pytest
from support.berth_proc import BerthProcess

pytestmark = pytest.mark.functional


@pytest.fixture
def quick(berth_factory: Callable[..., BerthProcess]) -> BerthProcess:
    return berth_factory("[api]\nheader_timeout = 1\nbody_timeout = 1\n").start()


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0.05)
    try:
        return sock.recv(4096) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def read_response(sock: socket.socket) -> bytes:
    """One whole response, head and body (they may come in separate segments)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, data
        body += chunk
    return head + b"\r\n\r\n" + body


def open_slow(port: int, count: int, first: bytes) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        if first:
            s.sendall(first)
        socks.append(s)
    return socks


def test_connections_whose_head_never_completes_are_closed(quick: BerthProcess) -> None:
    partial = open_slow(quick.port, 300, b"GET /v1/containers HTTP/1.1\r\nHost: x\r\n")
    silent = open_slow(quick.port, 50, b"")
    try:
        # meanwhile everybody else is served
        with quick.http() as http:
            assert http.get("/v1/containers").status_code == 200
        time.sleep(2.5)
        for s in partial[:5]:          # a byte now and then does not keep it open
            try:
                s.sendall(b"X")
            except OSError:
                pass
        assert all(closed_by_server(s) for s in partial + silent)
        with quick.http() as http:
            assert http.get("/v1/containers").status_code == 200
    finally:
        for s in partial + silent:
            s.close()
    assert "whose request head did not arrive within 1 s" in quick.log_text()


def test_a_keep_alive_connection_gets_the_head_timeout_for_each_request(
        quick: BerthProcess) -> None:
    s = socket.create_connection(("127.0.0.1", quick.port))
    try:
        s.sendall(b"GET /healthcheck HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(5)
        assert read_response(s).startswith(b"HTTP/1.1 200")
        s.sendall(b"GET /healthcheck HTTP/1.1\r\n")        # and then nothing more
        time.sleep(2.0)
        assert closed_by_server(s)
    finally:
        s.close()


def test_a_body_that_trickles_in_is_refused(quick: BerthProcess) -> None:
    s = socket.create_connection(("127.0.0.1", quick.port))
    try:
        s.sendall(b"POST /v1/containers HTTP/1.1\r\nHost: x\r\nX-Auth-Token: admin\r\n"
                  b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"im")
        s.settimeout(5)
        answer = read_response(s)
    finally:
        s.close()
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b"body_timeout" in answer
    with quick.http() as http:
        assert http.get("/v1/containers").json()["containers"] == []


def test_the_console_proxy_closes_a_handshake_that_does_not_finish(
        quick: BerthProcess) -> None:
    socks = open_slow(quick.wsport, 100, b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not all(closed_by_server(s) for s in socks):
            time.sleep(0.5)
        assert all(closed_by_server(s) for s in socks)
        assert httpx.get(f"{quick.url}/healthcheck").status_code == 200
    finally:
        for s in socks:
            s.close()
