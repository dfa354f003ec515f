"""The seed's console token, on Zun and on berth: one attach URL used twice.

Zun stores one token on the container's row; zun-wsproxy compares the URL's token with
it and nothing else, so the URL opens the console as often as it is used, until the
next attach overwrites it (seed: "It does not expire and is not single-use"). berth's
token is single-use (and expires): the second use is refused with 403 (design.md,
item 6).

Both consoles are opened as python-zunclient opens them (subprotocols binary and
base64, the Origin of the proxy's own address), and each use that opens must carry a
command and its output through the container's shell.
"""

from __future__ import annotations

import time
import uuid as uuidlib
from typing import Any
from urllib.parse import urlsplit

import httpx
import websocket
from support.berth_proc import TEST_IMAGE

from compat.zun_client import ZUN_IMAGE
from compat.zun_services import DEFECTS_OPT_IN, force_delete, settle, zun_network_id

pytestmark = DEFECTS_OPT_IN

ECHO = b"echo hi-$((20+1))\n"
ECHOED = b"hi-21"


def open_console(url: str) -> websocket.WebSocket:
    origin = "http://" + urlsplit(url).netloc
    return websocket.create_connection(url, timeout=30, origin=origin,
                                       subprotocols=["binary", "base64"],
                                       skip_utf8_validation=True)


def echoed(ws: websocket.WebSocket, timeout: float = 30) -> bytes:
    """Send ``ECHO`` through the console; what came back until ``ECHOED``."""
    ws.send_binary(ECHO)
    seen, deadline = b"", time.monotonic() + timeout
    while ECHOED not in seen:
        ws.settimeout(max(0.1, deadline - time.monotonic()))
        if time.monotonic() > deadline:
            raise AssertionError(f"no {ECHOED!r} within {timeout} s; got {seen[-300:]!r}")
        try:
            data = ws.recv()
        except websocket.WebSocketTimeoutException:
            continue
        if not data:
            raise AssertionError(f"the console closed; got {seen[-300:]!r}")
        seen += data if isinstance(data, bytes) else data.encode()
    return seen


def shell(client: httpx.Client, image: str, **extra: Any) -> str:
    r = client.post("/v1/containers", params={"run": "true"}, json={
        "name": f"console-{uuidlib.uuid4().hex[:6]}", "image": image, "command": ["sh"],
        "interactive": True, "tty": True, "image_pull_policy": "ifnotpresent", **extra})
    assert r.status_code == 202, r.text
    uuid = r.json()["uuid"]
    body = settle(client, uuid, ("Running", "Error", "Stopped"))
    assert body["status"] == "Running", body["status_reason"]
    return uuid


def use_twice(url: str) -> tuple[bytes, bytes | int]:
    """The first use's echo, and the second's (or the status it was refused with)."""
    first = open_console(url)
    try:
        once = echoed(first)
    finally:
        first.close()
    try:
        second = open_console(url)
    except websocket.WebSocketBadStatusException as err:
        return once, err.status_code
    try:
        return once, echoed(second)
    finally:
        second.close()


def test_zun_s_attach_url_opens_the_console_again_after_use(zun: httpx.Client) -> None:
    uuid = shell(zun, ZUN_IMAGE, nets=[{"network": zun_network_id()}])
    try:
        r = zun.get(f"/v1/containers/{uuid}/attach")
        assert r.status_code == 200, r.text
        url = r.json()
        once, again = use_twice(url)
        print(f"\n[zun] one attach URL used twice: the second use "
              f"{'opened the console' if isinstance(again, bytes) else f'got {again}'}")
        assert ECHOED in once
        assert isinstance(again, bytes) and ECHOED in again
    finally:
        force_delete(zun, uuid)


def test_berth_s_attach_url_opens_the_console_once(berth: httpx.Client) -> None:
    uuid = shell(berth, TEST_IMAGE)
    try:
        r = berth.get(f"/v1/containers/{uuid}/attach")
        assert r.status_code == 200, r.text
        once, again = use_twice(r.json())
        print(f"\n[berth] one attach URL used twice: the second use got {again!r}")
        assert ECHOED in once
        assert again == 403
    finally:
        berth.delete(f"/v1/containers/{uuid}", params={"force": "true"})

