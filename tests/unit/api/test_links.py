"""links.base_url: the public endpoint when set, else the address the client used,
proxies' X-Forwarded-Proto / X-Forwarded-Host first."""

from __future__ import annotations

from types import SimpleNamespace

from starlette.requests import Request

from berth.api.links import base_url, links


def _request(headers: dict[str, str], scheme: str = "http",
             public: str | None = None) -> Request:
    return Request({"type": "http", "scheme": scheme, "server": ("10.0.0.5", 9517),
                    "path": "/v1/containers", "query_string": b"",
                    "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
                    "app": SimpleNamespace(state=SimpleNamespace(public_endpoint=public))})


def test_the_address_the_client_used() -> None:
    assert base_url(_request({"Host": "berth.example:9517"})) == "http://berth.example:9517"
    assert base_url(_request({"Host": "h:1"}, scheme="https")) == "https://h:1"
    assert base_url(_request({})) == "http://10.0.0.5:9517"     # no Host header


def test_forwarded_headers_win_and_the_first_of_a_list_counts() -> None:
    req = _request({"Host": "inner:9517", "X-Forwarded-Proto": "https, http",
                    "X-Forwarded-Host": "cloud.example:8443, inner:9517"})
    assert base_url(req) == "https://cloud.example:8443"
    assert links(req, "containers", "u1") == [
        {"href": "https://cloud.example:8443/v1/containers/u1", "rel": "self"},
        {"href": "https://cloud.example:8443/containers/u1", "rel": "bookmark"}]


def test_the_public_endpoint_wins() -> None:
    req = _request({"Host": "inner:9517"}, public="https://api.example/container/")
    assert base_url(req) == "https://api.example/container"
