"""``zun logs`` and ``zun exec`` on a capsule's members, on both capsule drivers:
Docker's logs and exec with ``docker``; containerd's CRI log files and ExecSync with
``cri``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import websocket
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

pytestmark = pytest.mark.functional

LATEST = "container 1.40"
TALK = ('echo out-one; echo err-one >&2; sleep 1.5; echo out-two; '
        'trap "exit 0" TERM; sleep 300 & wait')


@pytest.fixture(params=["docker", "cri"])
def engine(request: pytest.FixtureRequest) -> BerthProcess:
    return request.getfixturevalue("berth" if request.param == "docker" else "cri_berth")


@pytest.fixture
def capsule(engine: BerthProcess) -> Iterator[dict[str, Any]]:
    tpl = {"kind": "capsule", "metadata": {"name": "talks"}, "spec": {"containers": [
        {"image": TEST_IMAGE, "name": "talker", "imagePullPolicy": "IfNotPresent",
         "command": ["sh", "-c", TALK],
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


def logs(berth: BerthProcess, ident: str, **params: Any) -> str:
    with berth.http(version=LATEST) as http:
        resp = http.get(f"/v1/containers/{ident}/logs", params=params)
    assert resp.status_code == 200, resp.text
    return str(resp.json())


def test_logs_of_a_member_with_streams_timestamps_tail_and_since(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    member = capsule["containers"][0]["uuid"]
    full = wait_for(lambda: (text := logs(engine, member)) and "out-two" in text and text,
                    30, 0.2, what="the member's second line")
    assert isinstance(full, str)
    # Two pipes: the engine keeps no order between stdout and stderr.
    assert sorted(full.splitlines()) == ["err-one", "out-one", "out-two"]
    assert logs(engine, member, stderr="false").splitlines() == ["out-one", "out-two"]
    assert logs(engine, member, stdout="false").splitlines() == ["err-one"]
    assert logs(engine, member, tail="1").splitlines() == ["out-two"]
    stamped = logs(engine, member, timestamps="true").splitlines()
    # (stderr's line may come first: the two pipes are not ordered)
    assert len(stamped) == 3 and sorted(line.split(" ", 1)[1] for line in stamped) == \
        ["err-one", "out-one", "out-two"]
    assert all(line.split(" ", 1)[0].startswith("20") for line in stamped)  # RFC 3339
    assert logs(engine, member, since=str(int(time.time()) + 3600)) == ""


def test_exec_in_a_member_returns_output_and_exit_code(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    member = capsule["containers"][0]["uuid"]
    with engine.http(version=LATEST) as http:
        resp = http.post(f"/v1/containers/{member}/execute",
                         params={"run": "true", "command": "sh -c 'hostname; exit 7'"})
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    assert answer["exit_code"] == 7 and answer["output"].strip(), answer


def test_a_member_is_still_not_listed_as_a_container(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    member = capsule["containers"][0]["uuid"]
    with engine.http(version=LATEST) as http:
        assert http.get(f"/v1/containers/{member}").status_code == 404
        listed = http.get("/v1/containers/").json()["containers"]
    assert member not in {c["uuid"] for c in listed}


def _received_until(ws: websocket.WebSocket, needle: bytes, closed: bool = False,
                    timeout: float = 20.0) -> bytes:
    """What the console sent until ``needle`` shows (or, with ``closed``, until the
    proxy closes it); AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    seen = b""
    while (closed or needle not in seen) and time.monotonic() < deadline:
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
    assert needle in seen and not closed, f"no {needle!r} within {timeout} s: {seen[-300:]!r}"
    return seen


def test_an_interactive_exec_in_a_member_goes_through_the_console_proxy(
        engine: BerthProcess, capsule: dict[str, Any]) -> None:
    member = capsule["containers"][0]["uuid"]
    with engine.http(version=LATEST) as http:
        resp = http.post(f"/v1/containers/{member}/execute",
                         params={"run": "false", "interactive": "true", "command": "sh"})
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    assert len(answer["exec_id"]) == 64 and answer["proxy_url"], answer
    ws = websocket.create_connection(answer["proxy_url"], timeout=20,
                                     origin=f"http://127.0.0.1:{engine.wsport}",
                                     subprotocols=["binary", "base64"],
                                     skip_utf8_validation=True)
    try:
        ws.send_binary(b"echo hi-$((1+1))\n")
        assert b"hi-2" in _received_until(ws, b"hi-2")
        ws.send_binary(b"exit\n")
        _received_until(ws, b"", closed=True)       # the exec's end closes the console
    finally:
        ws.close()
    # The token was single-use: the same URL is refused now.
    with pytest.raises(websocket.WebSocketBadStatusException):
        websocket.create_connection(answer["proxy_url"], timeout=20,
                                    origin=f"http://127.0.0.1:{engine.wsport}")
