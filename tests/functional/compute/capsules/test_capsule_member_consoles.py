"""``zun attach`` and TTY resizes on a capsule's members, on both capsule drivers:
Docker's attach and resize with ``docker``; containerd's streaming server (Attach,
Exec, and its resize channel) behind berth-wsproxy with ``cri``."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from typing import Any

import pytest
import websocket
from support.berth_proc import TEST_IMAGE, BerthProcess, bin_path, wait_for

pytestmark = pytest.mark.functional

LATEST = "container 1.40"


@pytest.fixture(params=["docker", "cri"])
def engine(request: pytest.FixtureRequest) -> BerthProcess:
    return request.getfixturevalue("berth" if request.param == "docker" else "cri_berth")


@pytest.fixture
def capsule(engine: BerthProcess) -> Iterator[dict[str, Any]]:
    tpl = {"kind": "capsule", "metadata": {"name": "consoles"}, "spec": {"containers": [
        {"image": TEST_IMAGE, "name": "shell", "imagePullPolicy": "IfNotPresent",
         "command": ["sh"], "stdin": True, "tty": True,
         "resources": {"requests": {"cpu": 0.1, "memory": 32}}},
        {"image": TEST_IMAGE, "name": "quiet", "imagePullPolicy": "IfNotPresent",
         "command": ["sleep", "3600"],
         "resources": {"requests": {"cpu": 0.1, "memory": 32}}}]}}
    with engine.http(version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 202, resp.text
        uuid = resp.json()["uuid"]
        shown = wait_for(lambda: (r := http.get(f"/v1/capsules/{uuid}").json())
                         and r["status"] != "Creating" and r, 60, 0.2, what="the capsule")
        assert isinstance(shown, dict) and shown["status"] == "Running", shown
        yield dict(shown)
        assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 60, 0.2,
                 what="the capsule deleted")


def member(capsule: dict[str, Any], name: str) -> str:
    return next(str(m["uuid"]) for m in capsule["containers"]
                if m["name"].endswith(f"-{name}"))


def connect(engine: BerthProcess, url: str) -> websocket.WebSocket:
    return websocket.create_connection(url, timeout=20,
                                       origin=f"http://127.0.0.1:{engine.wsport}",
                                       subprotocols=["binary", "base64"],
                                       skip_utf8_validation=True)


def received_until(ws: websocket.WebSocket, needle: bytes, timeout: float = 20.0) -> bytes:
    deadline = time.monotonic() + timeout
    seen = b""
    while needle not in seen and time.monotonic() < deadline:
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            data = ws.recv()
        except websocket.WebSocketTimeoutException:
            continue
        except websocket.WebSocketConnectionClosedException:
            break
        if not data:
            break
        seen += data if isinstance(data, bytes) else data.encode()
    assert needle in seen, f"no {needle!r} within {timeout} s: {seen[-300:]!r}"
    return seen


def size_shows(ws: websocket.WebSocket, height: int, width: int) -> None:
    """``stty size`` in the console says ``height width`` (a resize may take a
    moment to reach the stream: asked again until it does)."""
    def shows() -> bool:
        ws.send_binary(b"stty size\n")
        try:
            received_until(ws, f"{height} {width}".encode(), timeout=1.5)
        except AssertionError:
            return False
        return True

    wait_for(shows, 15, 0.1, what=f"the TTY resized to {height}x{width}")


def test_attach_to_a_member_relays_its_tty_and_resizes_it(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    shell = member(capsule, "shell")
    with engine.http(version=LATEST) as http:
        resp = http.get(f"/v1/containers/{shell}/attach")
        assert resp.status_code == 200, resp.text
        url = resp.json()
        ws = connect(engine, url)
        try:
            ws.send_binary(b"echo attached-$((6*7))\n")
            received_until(ws, b"attached-42")
            resp = http.post(f"/v1/containers/{shell}/resize", params={"h": 33, "w": 101})
            assert resp.status_code == 200, resp.text
            size_shows(ws, 33, 101)
            resp = http.post(f"/v1/containers/{shell}/resize", params={"h": 40, "w": 120})
            assert resp.status_code == 200, resp.text
            size_shows(ws, 40, 120)
        finally:
            ws.close()
        # Closing the console detached: the member goes on running, and the URL was
        # single-use.
        shown = http.get(f"/v1/capsules/{capsule['uuid']}").json()
        assert shown["status"] == "Running", shown
        with pytest.raises(websocket.WebSocketBadStatusException):
            connect(engine, url)
        # A member without stdin cannot be attached to: a 400 naming the flag.
        resp = http.get(f"/v1/containers/{member(capsule, 'quiet')}/attach")
        assert resp.status_code == 400, resp.text
        assert "interactive" in resp.text.lower(), resp.text


def test_an_interactive_exec_in_a_member_is_resized(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    shell = member(capsule, "shell")
    with engine.http(version=LATEST) as http:
        resp = http.post(f"/v1/containers/{shell}/execute",
                         params={"run": "false", "interactive": "true", "command": "sh"})
        assert resp.status_code == 200, resp.text
        answer = resp.json()
        ws = connect(engine, answer["proxy_url"])
        try:
            ws.send_binary(b"echo exec-$((6*7))\n")
            received_until(ws, b"exec-42")
            resp = http.post(f"/v1/containers/{shell}/execute_resize",
                             params={"exec_id": answer["exec_id"], "h": 27, "w": 91})
            assert resp.status_code == 200, resp.text
            size_shows(ws, 27, 91)
        finally:
            ws.close()
        # An exec id this member never made: a 400, nothing resized.
        resp = http.post(f"/v1/containers/{shell}/execute_resize",
                         params={"exec_id": "0" * 64, "h": 27, "w": 91})
        assert resp.status_code == 400, resp.text
        # A bad size: a 400 naming it.
        resp = http.post(f"/v1/containers/{shell}/resize", params={"h": 0, "w": 91})
        assert resp.status_code == 400 and "'h'" in resp.text, resp.text


def _pty_until(master: int, needle: bytes, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    seen = b""
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:       # EIO: the client closed the terminal
                return False
            if not data:
                return False
            seen += data
    return needle in seen


def test_zun_attach_on_a_terminal_sends_its_size_and_ctrl_bracket_detaches(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    """``zun attach <member>`` on a real terminal of 43x131: zunclient's own resize
    reaches the member (``stty size``), and Ctrl-] ends the console while the member
    goes on running."""
    shell = member(capsule, "shell")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 43, 131, 0, 0))
    proc = subprocess.Popen(
        [bin_path("zun"), "--bypass-url", f"{engine.url}/v1", "attach", shell],
        stdin=slave, stdout=slave, stderr=slave, env=engine.zun_cli_env(),
        start_new_session=True)
    os.close(slave)
    try:
        assert _pty_until(master, b"connected to", 30)
        # The shell may drop a line typed while the resize reaches it: type again.
        for _ in range(20):
            os.write(master, b"stty size\r")
            if _pty_until(master, b"43 131", 2):
                break
        else:
            raise AssertionError("the member's TTY never showed 43 131")
        os.write(master, b"\x1d")                 # Ctrl-]
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        os.close(master)
    with engine.http(version=LATEST) as http:
        shown = http.get(f"/v1/capsules/{capsule['uuid']}").json()
    assert shown["status"] == "Running" and all(
        m["status"] == "Running" for m in shown["containers"]), shown
