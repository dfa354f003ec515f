"""Zun's error envelope, and the one mapping from berth's exceptions to HTTP.

    {"errors": [{"request_id": "req-…", "code": "container.container-not-found",
                 "status": 404, "title": "…", "detail": "…", "links": []}]}

Unlike Zun, ``request_id`` carries the request's id (the same as the
``x-openstack-request-id`` header). 5xx bodies say only that something failed and
give a correlation id that is also in the log.
"""

from __future__ import annotations

import http
import logging
import uuid

import sqlalchemy.exc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from berth.api.responses import JSONResponse
from berth.common import exceptions as exc
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

_STATUS: list[tuple[type[BaseException], int]] = [
    (exc.Invalid, 400),
    (exc.NotAuthenticated, 401),
    (rt.RuntimeInvalid, 400),
    (exc.NotAuthorized, 403),
    (exc.NotFound, 404),
    (rt.RuntimeNotFound, 404),
    (exc.NotAcceptable, 406),
    (exc.Conflict, 409),
    (rt.RuntimeConflict, 409),
    (exc.UnsupportedMediaType, 415),
    (exc.RPCTimeout, 504),
    (exc.RPCError, 503),
    (exc.ServiceUnavailable, 503),
    (rt.RuntimeUnavailable, 503),
]


def status_of(err: BaseException) -> int:
    for cls, status in _STATUS:
        if isinstance(err, cls):
            return status
    return 500


def request_id_of(request: Request) -> str:
    return getattr(request.state, "request_id", "") or ""


def envelope(request_id: str, status: int, code: str, title: str, detail: str
             ) -> dict[str, object]:
    return {"errors": [{"request_id": request_id, "code": code, "status": status,
                        "title": title, "detail": detail, "links": []}]}


def error_response(request_id: str, status: int, code: str, title: str, detail: str
                   ) -> JSONResponse:
    return JSONResponse(envelope(request_id, status, code, title, detail), status_code=status)


def berth_error_response(request_id: str, err: exc.BerthError) -> JSONResponse:
    status = status_of(err)
    if status >= 500 and not isinstance(err, (exc.RPCError, rt.RuntimeUnavailable,
                                               exc.ServiceUnavailable)):
        return internal_error(request_id, err)
    title = str(err.kwargs.get("title") or err.msg) if status == 406 else err.msg
    return error_response(request_id, status, "container." + exc.kebab(error_name(err)),
                          title, err.msg)


def error_name(err: BaseException) -> str:
    """The exception's class name; oslo.messaging re-raises an agent's error as a
    subclass named ``<Name>_Remote``, which must not leak into the error code."""
    name = type(err).__name__
    return name.removesuffix("_Remote")


def internal_error(request_id: str, err: BaseException) -> JSONResponse:
    correlation = str(uuid.uuid4())
    LOG.error("unexpected error (correlation id %s, request %s)", correlation, request_id,
              exc_info=err)
    return error_response(request_id, 500, "container.", "Internal Server Error",
                          f"The server hit an unexpected error. Give the operator this id "
                          f"to find it in berth's log: {correlation}")


def install(app: FastAPI) -> None:
    @app.exception_handler(exc.BerthError)
    async def _berth(request: Request, err: exc.BerthError) -> JSONResponse:
        return berth_error_response(request_id_of(request), err)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, err: StarletteHTTPException) -> JSONResponse:
        phrase = http.HTTPStatus(err.status_code).phrase
        detail = err.detail if isinstance(err.detail, str) else phrase
        if err.status_code == 404 and detail == "Not Found":
            detail = f"The resource {request.url.path} could not be found."
        if err.status_code == 405:
            detail = f"Method {request.method} is not allowed on {request.url.path}."
        response = error_response(request_id_of(request), err.status_code, "container.",
                                  phrase, detail)
        response.headers.update(err.headers or {})     # a 405's Allow (RFC 9110)
        if err.status_code == 405:
            from berth.api.openapi import allowed_methods

            allowed = allowed_methods(request.app, request.url.path)
            if allowed:
                response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, err: RequestValidationError) -> JSONResponse:
        msgs = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}"
                         for e in err.errors())
        return error_response(request_id_of(request), 400, "container.invalid",
                              msgs, msgs)

    @app.exception_handler(sqlalchemy.exc.OperationalError)
    async def _database(request: Request, err: sqlalchemy.exc.OperationalError
                        ) -> JSONResponse:
        # The database is unreachable (stopped, restarting, network): nothing the
        # client sent is wrong, and the same request may succeed in a moment.
        LOG.warning("request %s: the database does not answer (%s)", request_id_of(request),
                    str(err.orig or err).splitlines()[0][:200])
        return error_response(request_id_of(request), 503, "container.service-unavailable",
                              "Service Unavailable",
                              "berth's database does not answer; try again in a moment.")

    @app.exception_handler(Exception)
    async def _any(request: Request, err: Exception) -> JSONResponse:
        return internal_error(request_id_of(request), err)
