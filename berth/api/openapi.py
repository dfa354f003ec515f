"""The OpenAPI document (``/openapi.json``): every request body and every query
parameter as it is declared and checked (:mod:`berth.api.schemas`), and Zun's error
body for every error status.

A route names its body's declaration with :func:`request_body` and its query
parameters' with :func:`query_params`; :func:`install` publishes each, in the document FastAPI makes, with the app's own settings (a create's bounds come from the
configuration), so the document always says what this deployment accepts. FastAPI's
own 422 "Validation Error" answers do not exist in berth (its errors are Zun's 400s)
and are replaced by them.

A create's answer carries OpenAPI links (:data:`CREATED_BY`) to every operation on
what it created: the ``uuid`` it answers is their path's ``{ident}``. Clients that
follow links, and stateful fuzzing (``tests/unit/api/test_openapi_fuzz.py``), chain a
create to its show, update, actions and delete with them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from berth.api.microversions import Availability
from berth.api.schemas.queries import QueryParams
from berth.api.schemas.validation import RequestSchema
from berth.api.state import ApiSettings

_F = TypeVar("_F", bound=Callable[..., Any])
BodyOf = Callable[[ApiSettings], RequestSchema]
QueryOf = Callable[[ApiSettings], QueryParams]

#: Zun's error envelope (berth.api.errors.envelope).
ERROR_BODY: dict[str, Any] = {
    "type": "object", "required": ["errors"],
    "properties": {"errors": {"type": "array", "items": {
        "type": "object",
        "required": ["request_id", "code", "status", "title", "detail", "links"],
        "properties": {
            "request_id": {"type": "string"}, "code": {"type": "string"},
            "status": {"type": "integer"}, "title": {"type": "string"},
            "detail": {"type": "string"}, "links": {"type": "array"}}}}}}

_ERRORS = {
    "400": "The request is not valid: the detail names the field and what it accepts.",
    "403": "A policy forbids the request (the detail names the rule) or a quota is "
           "exceeded.",
    "404": "No such resource (or not visible to the caller's project).",
    "406": "The requested microversion does not offer this request.",
    "409": "The resource is not in a state that allows the request.",
    "503": "A service berth needs (its database, a compute agent) does not answer, or "
           "berth lacks the configuration the request needs; the detail says which.",
}
#: Only the versioned API negotiates a microversion (berth.api.middleware).
_VERSIONED = "/v1"


_UNSUPPORTED = "The body is not sent as application/json."

#: The creates whose answer names what they made by its ``uuid``: (path, method,
#: status) of the create, and the path under which every operation on it lives.
CREATED_BY: tuple[tuple[str, str, str, str], ...] = (
    ("/v1/containers", "post", "202", "/v1/containers/{ident}"),
    ("/v1/capsules", "post", "202", "/v1/capsules/{ident}"),
    ("/v1/networks", "post", "200", "/v1/networks/{ident}"),
)


def request_body(body_of: BodyOf) -> Callable[[_F], _F]:
    """Mark a route's endpoint as reading the body ``body_of(settings)`` declares."""
    def mark(endpoint: _F) -> _F:
        endpoint.__berth_body__ = body_of  # type: ignore[attr-defined]
        return endpoint
    return mark


def query_params(query_of: QueryOf) -> Callable[[_F], _F]:
    """Mark a route's endpoint as reading the query parameters ``query_of(settings)``
    declares."""
    def mark(endpoint: _F) -> _F:
        endpoint.__berth_query__ = query_of  # type: ignore[attr-defined]
        return endpoint
    return mark


def available(versions: Availability) -> Callable[[_F], _F]:
    """Mark a route's endpoint as existing only in the versions ``versions`` names (its
    ``require`` is the check): published as the operation's version header."""
    def mark(endpoint: _F) -> _F:
        endpoint.__berth_versions__ = lambda settings: versions  # type: ignore[attr-defined]
        return endpoint
    return mark


def _declared(routers: Iterable[APIRouter], mark: str, settings: ApiSettings
              ) -> dict[tuple[str, str], Any]:
    return {(route.path_format, method.lower()): of(settings)
            for router in routers for route in router.routes
            if isinstance(route, APIRoute) and route.include_in_schema
            and (of := getattr(route.endpoint, mark, None)) is not None
            for method in route.methods or ()}


def install(app: FastAPI, settings: ApiSettings, routers: Iterable[APIRouter]) -> None:
    """Publish the bodies and query parameters that the routes of ``routers`` declare,
    and Zun's errors."""
    routers = list(routers)
    bodies = _declared(routers, "__berth_body__", settings)
    queries = _declared(routers, "__berth_query__", settings)
    versions = _declared(routers, "__berth_versions__", settings)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = _with_zun_errors(FastAPI.openapi(app))
            for (path, method), schema in bodies.items():
                operation = doc["paths"][path][method]
                operation.update(schema.openapi())
                operation["responses"]["415"] = _error(_UNSUPPORTED)
            for (path, method), query in queries.items():
                operation = doc["paths"][path][method]
                published = query.openapi()
                operation["parameters"] = [
                    *(p for p in operation.get("parameters", []) if p.get("in") != "query"),
                    *published.pop("parameters")]
                if published:
                    operation.update(published)
                    operation["responses"]["415"] = _error(_UNSUPPORTED)
            for (path, method), available_in in versions.items():
                operation = doc["paths"][path][method]
                operation.setdefault("parameters", []).append(available_in.header())
            _one_declaration_each(doc)
            _link_creates(doc)
            for operations in doc["paths"].values():
                for operation in operations.values():
                    for part in ("parameters", "requestBody"):
                        if part in operation:
                            operation[part] = storable_strings(operation[part])
            # the bodies FastAPI declares by reference (the console's login, say)
            schemas = doc.get("components", {}).get("schemas", {})
            for name, schema in list(schemas.items()):
                schemas[name] = storable_strings(schema)
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods the document lists for ``path`` (a 405's ``Allow``): Starlette's own
    header names only the first route that matched the path, not every one."""
    for template, operations in app.openapi().get("paths", {}).items():
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            return sorted(method.upper() for method in operations)
    return []


#: What every string of a request may hold: no NUL, no lone surrogate
#: (``berth.common.unstorable``; refused by ``berth.api.body`` and the middleware).
STORABLE = "^[^\\u0000\\ud800-\\udfff]*$"


def storable_strings(node: Any) -> Any:
    """``node`` (a part of the document) with ``STORABLE`` as the pattern of each
    string schema that has no pattern, format or set of values of its own, and of each
    object schema's keys (``propertyNames``), so that the document says what the API
    refuses (a copy: the declarations the checks use stay as they are)."""
    if isinstance(node, list):
        return [storable_strings(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: storable_strings(value) for key, value in node.items()}
    if node.get("type") == "string" and not {"pattern", "format", "enum", "const"} & set(node):
        out["pattern"] = STORABLE
    if node.get("type") == "object" and "propertyNames" not in node:
        out["propertyNames"] = {"pattern": STORABLE}
    return out


def _one_declaration_each(doc: dict[str, Any]) -> None:
    """A parameter a route declares itself (``openapi_extra``) replaces the one FastAPI
    derived from its signature."""
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            if "parameters" in operation:
                last = {(p["name"], p["in"]): p for p in operation["parameters"]}
                operation["parameters"] = list(last.values())


def _link_creates(doc: dict[str, Any]) -> None:
    """Each create's success answer links to every operation under the path of what it
    made, by operationId, with ``{ident}`` its answer's ``uuid``."""
    paths = doc.get("paths", {})
    for path, method, status, under in CREATED_BY:
        answer = paths.get(path, {}).get(method, {}).get("responses", {}).get(status)
        if answer is None:
            continue
        links = answer.setdefault("links", {})
        for template, operations in paths.items():
            if template != under and not template.startswith(under + "/"):
                continue
            for operation in operations.values():
                parameters = {"ident": "$response.body#/uuid"}
                if "{request_id}" in template:   # the create's own action record
                    parameters["request_id"] = "$response.header.x-openstack-request-id"
                links[operation["operationId"]] = {
                    "operationId": operation["operationId"], "parameters": parameters}


def _with_zun_errors(doc: dict[str, Any]) -> dict[str, Any]:
    doc.setdefault("components", {}).setdefault("schemas", {})["ZunError"] = ERROR_BODY
    schemas = doc["components"]["schemas"]
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    for path, operations in doc.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            if operation.pop("x-own-errors", False):
                continue          # a stand-in for another service (Keystone's errors)
            for status, text in _ERRORS.items():
                if status != "406" or path == _VERSIONED or path.startswith(_VERSIONED + "/"):
                    responses.setdefault(status, _error(text))
    return doc


def _error(text: str) -> dict[str, Any]:
    return {"description": text, "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/ZunError"}}}}
