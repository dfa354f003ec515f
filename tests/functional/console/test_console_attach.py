"""Attach consoles through berth's WebSocket proxy, against the real Docker engine:
websocket-client directly, python-zunclient's own websocket client, and the ``zun``
CLI under a pseudo-terminal."""

from __future__ import annotations

import base64
import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from support.berth_proc import bin_path, wait_for
from zunclient.common.apiclient import exceptions as zun_exc
from zunclient.common.websocketclient.websocketclient import AttachClient

ECHO = b"echo hi-$((1+1))\n"
ECHOED = b"hi-2"          # only the shell's answer contains this (the echo shows "$((1+1))")


def test_attach_url_has_the_shape_zunclient_expects(berth, zun, make_shell) -> None:
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc) == ("ws", f"127.0.0.1:{berth.wsport}")
    query = parse_qs(parts.query)
    assert set(query) == {"token", "uuid"}
    assert query["uuid"] == [c.uuid]
    assert len(query["token"][0]) >= 43


def test_attach_echo_round_trip(zun, make_shell, connect, read_until) -> None:
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.uuid))
    assert ws.subprotocol == "binary"
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)


def test_attach_by_name_works_too(zun, make_shell, connect, read_until) -> None:
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.name))
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)


def test_closing_the_console_leaves_the_container_running(zun, make_shell, connect,
                                                           read_until, docker_client) -> None:
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.uuid))
    ws.send_binary(ECHO)
    read_until(ws, ECHOED)
    ws.close()
    # The shell still answers on a new console: it was never stopped or restarted.
    ws2 = connect(zun.containers.attach(c.uuid))
    ws2.send_binary(b"echo again-$((40+2))\n")
    read_until(ws2, b"again-42")
    assert zun.containers.get(c.uuid).status == "Running"
    assert docker_client.containers.get(f"zun-{c.uuid}").attrs["RestartCount"] == 0


def test_resize_is_visible_in_the_container(zun, make_shell, connect, read_until) -> None:
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.uuid))
    assert zun.containers.resize(c.uuid, "101", "37") is None   # width, height
    ws.send_binary(b"stty size\n")
    read_until(ws, b"37 101")


def test_resize_needs_a_size(berth, zun, make_shell) -> None:
    c = make_shell(zun)
    with berth.http() as http:
        for query in ("h=10", "w=10", "h=0&w=10", "h=x&w=10"):
            answer = http.post(f"/v1/containers/{c.uuid}/resize?{query}")
            assert answer.status_code == 400, query


def test_attach_to_a_non_tty_container_demultiplexes(berth, zun, make_shell, connect,
                                                    read_until) -> None:
    c = make_shell(zun, interactive=True, tty=False)
    assert c.tty is False
    ws = connect(zun.containers.attach(c.uuid))
    ws.send_binary(b"echo plain-$((3*3))\n")
    seen = read_until(ws, b"plain-9\n")
    ws.send_binary(b"echo oops-$((2*2)) >&2\n")
    seen += read_until(ws, b"oops-4\n")
    assert b"\x01\x00\x00\x00" not in seen      # no frame headers leak through


def test_base64_subprotocol_when_the_client_offers_only_that(zun, make_shell,
                                                             connect) -> None:
    c = make_shell(zun)
    ws = connect(zun.containers.attach(c.uuid), subprotocols=["base64"])
    assert ws.subprotocol == "base64"
    ws.send(base64.b64encode(ECHO).decode())
    seen = b""
    deadline = time.monotonic() + 20
    while ECHOED not in seen and time.monotonic() < deadline:
        frame = ws.recv()
        assert isinstance(frame, str)
        seen += base64.b64decode(frame)
    assert ECHOED in seen


def test_attach_needs_an_interactive_container(berth, zun, make_shell) -> None:
    c = make_shell(zun, interactive=False, command=["sleep", "300"])
    with pytest.raises(zun_exc.BadRequest) as caught:
        zun.containers.attach(c.uuid)
    assert "interactive" in str(caught.value)
    with berth.http() as http:
        body = http.get(f"/v1/containers/{c.uuid}/attach").json()
    assert body["errors"][0]["code"] == "container.no-interactive-flag"


def test_attach_to_a_stopped_container_is_a_409(zun, make_shell) -> None:
    c = make_shell(zun)
    zun.containers.stop(c.uuid, timeout=0)
    wait_for(lambda: zun.containers.get(c.uuid).status == "Stopped", 30)
    with pytest.raises(zun_exc.Conflict):
        zun.containers.attach(c.uuid)
    with pytest.raises(zun_exc.Conflict):
        zun.containers.resize(c.uuid, "80", "24")


def test_zunclient_attach_client_round_trip(zun, make_shell, drive_zunclient) -> None:
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    client = AttachClient(zunclient=zun, url=url, id=c.uuid, escape="~", close_wait=0.5)
    text = drive_zunclient(client, [ECHO], ECHOED)
    assert "hi-2" in text
    assert zun.containers.get(c.uuid).status == "Running"


def _set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _read_pty_until(master: int, needle: bytes, timeout: float = 30.0) -> bytes:
    deadline = time.monotonic() + timeout
    seen = b""
    while needle not in seen:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no {needle!r} within {timeout} s; got {seen[-800:]!r}")
        ready, _, _ = select.select([master], [], [], remaining)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:       # EIO: the child closed the terminal
                data = b""
            if not data:
                raise AssertionError(f"the terminal closed before {needle!r}; "
                                     f"got {seen[-800:]!r}")
            seen += data
    return seen


def _type_until(master: int, line: bytes, needle: bytes, attempts: int = 10) -> None:
    for _ in range(attempts - 1):
        os.write(master, line)
        try:
            _read_pty_until(master, needle, timeout=3)
            return
        except AssertionError:
            continue
    os.write(master, line)
    _read_pty_until(master, needle)


def test_zun_attach_cli_on_a_terminal_resizes_and_detaches_with_ctrl_bracket(
        berth, zun, make_shell) -> None:
    """``zun attach`` on a real terminal of 43x131: it sends its size (visible with
    ``stty size``), relays a shell round trip, and Ctrl-] detaches it while the
    container goes on running."""
    c = make_shell(zun)
    master, slave = pty.openpty()
    _set_size(slave, 43, 131)
    proc = subprocess.Popen(
        [bin_path("zun"), "--bypass-url", f"{berth.url}/v1", "attach", c.uuid],
        stdin=slave, stdout=slave, stderr=slave, env=berth.zun_cli_env(),
        start_new_session=True)
    os.close(slave)
    try:
        _read_pty_until(master, b"connected to")
        # The shell redraws its prompt (and may drop a line being typed) when the
        # client's resize reaches it, so type until the answer shows.
        _type_until(master, b"stty size\r", b"43 131")
        _type_until(master, ECHO.replace(b"\n", b"\r"), ECHOED)
        os.write(master, b"\x1d")                 # Ctrl-]
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(master)
    assert zun.containers.get(c.uuid).status == "Running"
