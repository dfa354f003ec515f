"""The Origin rule of the console proxy (api-v1.md §7.8).

A browser page from any site can open a websocket to the proxy; the Origin header is
how the proxy tells such cross-site requests from a user's own client:

* no Origin header: accepted (command-line clients need not send one);
* the Origin's host must be the host the client connected to (the ``Host`` header's
  host) or one of ``[websocket_proxy] allowed_origins`` (host names; full origins
  such as ``https://console.example.org`` are accepted too and their host is used);
* the Origin's scheme must go with the websocket's: ``http`` (or ``ws``) for ``ws``,
  ``https`` (or ``wss``) for ``wss``. The websocket's scheme is taken from
  ``X-Forwarded-Proto`` when a TLS-terminating proxy in front sets it, else from
  whether this proxy itself serves TLS, else from ``[websocket_proxy] base_url``.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

_PEER = {"ws": "http", "wss": "https", "http": "http", "https": "https"}


class OriginRefused(Exception):
    """The Origin header does not pass; the message says why."""


def host_of(host_header: str) -> str:
    """The host part of a ``Host`` header value (``[::1]:80`` -> ``::1``)."""
    value = host_header.strip()
    if value.startswith("["):
        return value[1:].split("]", 1)[0].lower()
    return value.rsplit(":", 1)[0].lower() if value.count(":") == 1 else value.lower()


def _allowed_hosts(allowed_origins: Sequence[str]) -> set[str]:
    hosts = set()
    for entry in allowed_origins:
        entry = entry.strip()
        if not entry:
            continue
        hosts.add((urlsplit(entry).hostname or "") if "://" in entry else host_of(entry))
    return hosts


def websocket_scheme(forwarded_proto: str | None, serves_tls: bool, base_url: str) -> str:
    """``ws`` or ``wss``: the scheme the client used to reach the console."""
    if forwarded_proto:
        proto = forwarded_proto.split(",")[0].strip().lower()
        if proto in _PEER:
            return "wss" if _PEER[proto] == "https" else "ws"
    if serves_tls:
        return "wss"
    return "wss" if urlsplit(base_url).scheme.lower() in ("wss", "https") else "ws"


def check_origin(origin: str | None, host_header: str | None, scheme: str,
                 allowed_origins: Sequence[str]) -> None:
    """Return if ``origin`` may open a console reached as ``scheme`` (``ws``/``wss``)
    at ``host_header``; raise :class:`OriginRefused` otherwise."""
    if origin is None:
        return
    parts = urlsplit(origin.strip())
    origin_host = (parts.hostname or "").lower()
    origin_scheme = parts.scheme.lower()
    if not origin_host or not origin_scheme:
        raise OriginRefused(f"Origin header {origin!r} is not a valid origin")
    expected = set(_allowed_hosts(allowed_origins))
    if host_header:
        expected.add(host_of(host_header))
    if origin_host not in expected:
        raise OriginRefused(
            f"Origin {origin} is not this console's host; add {origin_host} to "
            f"[websocket_proxy] allowed_origins to allow it")
    if _PEER.get(origin_scheme) != _PEER[scheme]:
        raise OriginRefused(f"Origin scheme {origin_scheme} does not match the "
                            f"websocket's scheme {scheme}")
