"""The Origin rule of the console proxy (api-v1.md §7.8)."""

from __future__ import annotations

import pytest

from berth.console.origin import OriginRefused, check_origin, host_of, websocket_scheme


def test_missing_origin_is_accepted() -> None:
    check_origin(None, "127.0.0.1:6784", "ws", [])


@pytest.mark.parametrize("origin, host", [
    ("http://127.0.0.1:6784", "127.0.0.1:6784"),   # what python-zunclient sends
    ("http://127.0.0.1", "127.0.0.1:6784"),        # the port is not compared
    ("http://Console.Example.org:80", "console.example.org"),
    ("http://[::1]:6784", "[::1]:6784"),
    ("ws://127.0.0.1:6784", "127.0.0.1:6784"),
])
def test_origin_of_the_host_itself_is_accepted(origin: str, host: str) -> None:
    check_origin(origin, host, "ws", [])


def test_foreign_origin_is_refused() -> None:
    with pytest.raises(OriginRefused, match="allowed_origins"):
        check_origin("http://evil.example.com", "127.0.0.1:6784", "ws", [])


@pytest.mark.parametrize("allowed", [["console.example.org"], ["https://console.example.org"],
                                     [" console.example.org:443 "]])
def test_allowed_origins_admit_other_hosts(allowed: list[str]) -> None:
    check_origin("https://console.example.org", "10.0.0.5:6784", "wss", allowed)


def test_allowed_origins_do_not_admit_everyone() -> None:
    with pytest.raises(OriginRefused):
        check_origin("https://evil.example.com", "10.0.0.5:6784", "wss",
                     ["console.example.org"])


def test_without_host_header_only_allowed_origins_pass() -> None:
    with pytest.raises(OriginRefused):
        check_origin("http://127.0.0.1:6784", None, "ws", [])
    check_origin("http://127.0.0.1:6784", None, "ws", ["127.0.0.1"])


@pytest.mark.parametrize("origin, scheme", [
    ("https://127.0.0.1:6784", "ws"),
    ("http://127.0.0.1:6784", "wss"),
])
def test_origin_scheme_must_match_the_websocket_scheme(origin: str, scheme: str) -> None:
    with pytest.raises(OriginRefused, match="scheme"):
        check_origin(origin, "127.0.0.1:6784", scheme, [])


@pytest.mark.parametrize("origin", ["null", "127.0.0.1:6784", "http://", "file:///x"])
def test_malformed_origin_is_refused(origin: str) -> None:
    with pytest.raises(OriginRefused):
        check_origin(origin, "127.0.0.1:6784", "ws", [])


@pytest.mark.parametrize("forwarded, tls, base_url, expected", [
    (None, False, "ws://h:6784/", "ws"),
    (None, False, "wss://h/console", "wss"),
    (None, True, "ws://h:6784/", "wss"),
    ("https", False, "ws://h:6784/", "wss"),
    ("https, http", False, "ws://h:6784/", "wss"),
    ("http", False, "wss://h/", "ws"),
    ("bogus", False, "ws://h/", "ws"),
])
def test_websocket_scheme_honours_x_forwarded_proto(forwarded: str | None, tls: bool,
                                                    base_url: str, expected: str) -> None:
    assert websocket_scheme(forwarded, tls, base_url) == expected


@pytest.mark.parametrize("header, host", [("h:1", "h"), ("H", "h"), ("[::1]:80", "::1"),
                                          ("[fe80::1]", "fe80::1")])
def test_host_of(header: str, host: str) -> None:
    assert host_of(header) == host
