"""Consoles over TLS (``[websocket_proxy]ssl_only`` with ``cert`` and ``key``) on a real
``berth serve``: the API hands out wss:// URLs, a WebSocket client that trusts the
test's CA attaches and execs through them, and a plain ws:// connection is refused."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import websocket
from support.tls_ca import TestCA, tls_conf

ECHO = b"echo hi-$((1+1))\n"
ECHOED = b"hi-2"


@pytest.fixture
def tls_berth(berth_factory, tmp_path: Path):  # type: ignore[no-untyped-def]
    ca = TestCA(tmp_path / "ca")
    return berth_factory(tls_conf(ca), ca_file=str(ca.cert)).start()


def _open(url: str, ca_file: str | None, origin: str) -> websocket.WebSocket:
    sslopt: dict[str, Any] = ({"cert_reqs": ssl.CERT_REQUIRED, "ca_certs": ca_file}
                              if ca_file else {})
    return websocket.create_connection(url, timeout=20, origin=origin, sslopt=sslopt,
                                       subprotocols=["binary", "base64"],
                                       skip_utf8_validation=True)


def test_attach_and_exec_over_wss(tls_berth, make_shell, read_until,
                                  read_until_closed) -> None:
    zun = tls_berth.client()
    origin = f"https://127.0.0.1:{tls_berth.wsport}"     # what zunclient sends for wss
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    assert urlsplit(url)[:2] == ("wss", f"127.0.0.1:{tls_berth.wsport}")
    ws = _open(url, tls_berth.ca_file, origin)
    try:
        ws.send_binary(ECHO)
        read_until(ws, ECHOED)
    finally:
        ws.close()
    answer = zun.containers.execute(c.uuid, command="sh", run=False, interactive=True)
    assert answer["proxy_url"].startswith(f"wss://127.0.0.1:{tls_berth.wsport}/")
    ws = _open(answer["proxy_url"], tls_berth.ca_file, origin)
    try:
        ws.send_binary(b"echo exec-$((40+2))\nexit\n")
        read_until(ws, b"exec-42")
        read_until_closed(ws)
    finally:
        ws.close()


def test_plain_ws_and_untrusted_clients_are_refused(tls_berth, make_shell) -> None:
    zun = tls_berth.client()
    c = make_shell(zun)
    url = zun.containers.attach(c.uuid)
    plain = urlunsplit(("ws", *urlsplit(url)[1:]))
    with pytest.raises((websocket.WebSocketException, OSError)):
        _open(plain, None, f"http://127.0.0.1:{tls_berth.wsport}")
    with pytest.raises(ssl.SSLCertVerificationError):      # the system CAs do not know it
        websocket.create_connection(url, timeout=20, sslopt={"cert_reqs": ssl.CERT_REQUIRED})
    # the token was not spent by the refused attempts: the right client still gets in
    ws = _open(url, tls_berth.ca_file, f"https://127.0.0.1:{tls_berth.wsport}")
    ws.close()
