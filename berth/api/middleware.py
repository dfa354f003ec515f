"""ASGI middleware for every request (plain ASGI, no per-request task overhead):

* a request id (``req-<uuid>``) on ``request.state`` and in ``x-openstack-request-id``;
* Zun's unversioned paths: any path whose first segment is not ``v1`` (nor one of
  berth's own roots) is served as if it began with ``/v1``;
* microversions under ``/v1``: the negotiated version on ``request.state`` and the
  four version headers on the response; a bad header is a 406 in Zun's envelope;
* strings berth cannot store or pass on (``berth.common.unstorable``): a NUL or a lone
  surrogate in the path, a query parameter or a header is a 400 naming it, before any
  route runs (a body's are refused where it is decoded, ``berth.api.body``);
* metrics: each answered request counted and timed by method, route *template*
  (``/v1/containers/{ident}``, known only once routing has run; ``unmatched``
  otherwise) and status (``berth.metrics.catalog.observe_request``).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import MutableMapping
from typing import Any

from berth.api import microversions as mv
from berth.api.errors import berth_error_response, envelope, internal_error
from berth.api.schemas.types import invalid
from berth.common import exceptions as exc
from berth.common import unstorable
from berth.common.context import new_request_id
from berth.metrics.catalog import observe_request

_OWN_ROOTS = {"", "v1", "identity", "healthcheck", "docs", "openapi.json", "metrics",
              "healthz", "readyz", "dashboard"}
_VERSION_HEADERS = [
    (b"openstack-api-minimum-version", f"{mv.SERVICE} {mv.MIN_VERSION}".encode()),
    (b"openstack-api-maximum-version", f"{mv.SERVICE} {mv.MAX_VERSION}".encode()),
    (b"vary", mv.HEADER.encode()),
]


class BerthMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        request_id = new_request_id()
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        path: str = scope["path"]
        first = path.lstrip("/").split("/", 1)[0]
        if first.endswith(".json") and first != "openapi.json":
            first = first[:-5]
        if first not in _OWN_ROOTS:
            path = "/v1" + (path if path.startswith("/") else "/" + path)
            scope["path"] = path
            scope["raw_path"] = path.encode()
        extra = [(b"x-openstack-request-id", request_id.encode())]
        refused = unstorable_in_request(scope)
        if refused is not None:
            await berth_error_response(request_id, refused)(scope, receive, send)
            observe_request(scope["method"], _UNMATCHED, 400, time.perf_counter() - began)
            return
        if path in ("/v1", "/v1.json") or path.startswith("/v1/"):
            header = _header(scope, mv.HEADER)
            try:
                version = mv.negotiate(header)
            except exc.NotAcceptable as err:
                await _send_406(send, request_id, err)
                observe_request(scope["method"], _UNMATCHED, 406, time.perf_counter() - began)
                return
            state["api_version"] = version
            extra += _VERSION_HEADERS + [
                (b"openstack-api-version", f"{mv.SERVICE} {version}".encode())]

        started = False
        status = 500

        async def send_with_headers(message: MutableMapping[str, Any]) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                started = True
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = list(message["headers"]) + extra
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as err:  # the request's boundary
            # Starlette answers unhandled errors outside every user middleware, so
            # that 500 would lack the request id and version headers: answer it here.
            if started:
                raise
            await internal_error(request_id, err)(scope, receive, send_with_headers)
        finally:
            observe_request(scope["method"], _route_of(scope), status,
                            time.perf_counter() - began)


_UNMATCHED = "unmatched"


def unstorable_in_request(scope: dict) -> exc.InvalidParameterValue | None:
    """The 400 for the first NUL or lone surrogate in the request's path, query
    parameters (names and values, as Starlette decodes them) or headers; None when
    there is none. A query string is decoded only when it holds ``%00`` (a NUL), the
    one unstorable character its decoding can yield (a surrogate's UTF-8 bytes become
    U+FFFD); a header is bytes, read as Latin-1 (no surrogates there either)."""
    path: str = scope["path"]
    if unstorable.UNSTORABLE.search(path):
        return invalid("path", unstorable.escaped(path), unstorable.why(path))
    query: bytes = scope.get("query_string", b"")
    if b"%00" in query or b"\x00" in query:
        for name, value in urllib.parse.parse_qsl(query.decode("latin-1"),
                                                  keep_blank_values=True):
            for text in (name, value):
                if unstorable.UNSTORABLE.search(text):
                    return invalid(unstorable.escaped(name), unstorable.escaped(value),
                                   unstorable.why(text))
    for key, raw in scope.get("headers", []):
        if b"\x00" in raw or b"\x00" in key:
            name = unstorable.escaped(key.decode("latin-1"))
            value = raw.decode("latin-1")
            return invalid(f"header {name}", unstorable.escaped(value), unstorable.why(value))
    return None


def _route_of(scope: dict) -> str:
    """The template of the route that answered (Starlette puts it in the scope)."""
    route = scope.get("route")
    return getattr(route, "path_format", None) or _UNMATCHED


def _header(scope: dict, name: str) -> str | None:
    wanted = name.lower().encode()
    for key, value in scope.get("headers", []):
        if key.lower() == wanted:
            return value.decode("latin-1")
    return None


async def _send_406(send: Any, request_id: str, err: exc.NotAcceptable) -> None:
    title = str(err.kwargs.get("title") or "Not Acceptable")
    body = json.dumps(envelope(request_id, 406, "container.", title, err.msg)).encode()
    await send({"type": "http.response.start", "status": 406, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"x-openstack-request-id", request_id.encode())]})
    await send({"type": "http.response.body", "body": body})
