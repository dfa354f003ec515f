"""berth.api.middleware: a NUL or lone surrogate in the request's path, a query
parameter or a header is a 400 naming it, answered before any route runs (issue 42)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from berth.api.middleware import BerthMiddleware, unstorable_in_request


def scope(path: str = "/v1/containers", query: bytes = b"",
          headers: list[tuple[bytes, bytes]] | None = None) -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": path, "raw_path": path.encode("utf-8", "surrogatepass"),
            "query_string": query, "headers": headers or []}


@pytest.mark.parametrize(("where", "field"), [
    (scope(query=b"name=a%00b"), "Invalid input for field 'name'. Value: 'a\\u0000b'"),
    (scope(query=b"all_projects=1&host%00=x"), "field 'host\\u0000'"),
    (scope(path="/v1/containers/a\x00b"), "field 'path'"),
    (scope(path="/v1/containers/a\udc00"), "field 'path'"),
    (scope(headers=[(b"x-auth-token", b"ad\x00min")]), "field 'header x-auth-token'"),
])
def test_each_place_is_refused_naming_it(where: dict[str, Any], field: str) -> None:
    refused = unstorable_in_request(where)
    assert refused is not None and field in str(refused)


@pytest.mark.parametrize("where", [
    scope(query=b"name=%C3%A9&host=%F0%9F%98%80"), scope(query=b"name=%ED%A0%80"),
    scope(path="/v1/containers/été"), scope(headers=[(b"x-auth-token", b"admin\xe9")]),
    scope(query=b"name=%2500"),
])
def test_other_characters_pass(where: dict[str, Any]) -> None:
    assert unstorable_in_request(where) is None


def test_the_refusal_is_zuns_400_before_the_app_runs() -> None:
    called: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        called.append(scope["path"])

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    asyncio.run(BerthMiddleware(app)(scope(query=b"name=%00"), receive, send))
    assert called == []
    assert sent[0]["status"] == 400
    (err,) = json.loads(sent[1]["body"])["errors"]
    assert err["code"] == "container.invalid-parameter-value"
    assert "field 'name'" in err["detail"] and "NUL" in err["detail"]
