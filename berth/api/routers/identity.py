"""A minimal Keystone v3 login for noauth mode, so the ``zun`` CLI works without Keystone.

The legacy ``zun`` CLI has no token option: it always logs in to Keystone v3 with a
password (keystoneauth's generic password plugin: ``GET <auth_url>`` for the version
document, then ``POST <auth_url>/auth/tokens``). In noauth mode berth answers that login
itself under ``/identity/v3`` on its own API port, so
``OS_AUTH_URL=http://host:9517/identity/v3`` is all the CLI needs.

Nothing is checked: any password is accepted and the caller becomes whoever the request
names. The token handed back *is* the identity, ``"<user>:<project>"``, which
:func:`parse_noauth_token` turns back into a caller on every API request. The catalog
lists berth itself (service type ``container``) at the URL the client used to reach it.

This router is mounted only in noauth mode; with Keystone configured it must not be.
"""

from __future__ import annotations

import datetime
import secrets
import uuid
from typing import Any

import fastapi
from fastapi.responses import Response

from berth.api import body as request_body
from berth.api.responses import JSONResponse
from berth.common import exceptions as exc

router = fastapi.APIRouter(prefix="/identity")

ADMIN_TOKEN = "admin"
ANONYMOUS_USER = "anonymous"
DEFAULT_PROJECT = "default"
REGION = "RegionOne"
TOKEN_LIFETIME = datetime.timedelta(hours=24)
_DOMAIN = {"id": "default", "name": "Default"}
_TITLES = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found"}


def token_for(user: str, project: str) -> str:
    """The noauth token naming ``user`` in ``project``; ValueError if it would not parse back."""
    if not user or not project or ":" in user:
        raise ValueError(f"cannot make a noauth token for user {user!r} in project {project!r}")
    return f"{user}:{project}"


def parse_noauth_token(token: str | None) -> tuple[str, str, bool]:
    """``(user_id, project_id, is_admin)`` of the caller presenting ``token`` in noauth mode.

    * missing or blank -> ``("anonymous", "default", False)``;
    * ``"admin"`` -> ``("admin", "admin", True)``;
    * ``"<user>:<project>"`` (both non-empty; split at the first colon) -> that user in that
      project, admin exactly when the user is ``"admin"``;
    * anything else -> a plain user named by the whole token in project ``"default"``.
    """
    token = (token or "").strip()
    if not token:
        return ANONYMOUS_USER, DEFAULT_PROJECT, False
    if token == ADMIN_TOKEN:
        return "admin", "admin", True
    user, sep, project = token.partition(":")
    if sep and user and project:
        return user, project, user == "admin"
    return token, DEFAULT_PROJECT, False


def _header_safe(text: str) -> bool:
    return text.isascii() and text.isprintable()


def _issued_identity(token: object) -> tuple[str, str] | None:
    """(user, project) of a token this module could have issued, else None."""
    if not isinstance(token, str | None):
        return None
    token = (token or "").strip()
    user, sep, project = token.partition(":")
    if token == ADMIN_TOKEN or (sep and user and project):
        return parse_noauth_token(token)[:2]
    return None


#: Keystone's error body, which ``_error`` answers.
ERROR_BODY: dict[str, Any] = {
    "type": "object", "required": ["error"],
    "properties": {"error": {
        "type": "object", "required": ["code", "title", "message"],
        "properties": {"code": {"type": "integer"}, "title": {"type": "string"},
                       "message": {"type": "string"}}}}}


def _answers(*codes: int) -> dict[str, Any]:
    """The route decorator's arguments publishing Keystone's errors ``codes`` (in place
    of berth's own, ``berth.api.openapi``)."""
    return {"openapi_extra": {"x-own-errors": True}, "responses": {
        code: {"description": _TITLES[code], "content": {
            "application/json": {"schema": ERROR_BODY}}} for code in codes}}


def _error(code: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "title": _TITLES[code], "message": message}}, status_code=code
    )


def _base_url(request: fastapi.Request) -> str:
    """scheme://host[:port] as the client reached us, proxies' X-Forwarded-* first."""
    proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip()
    host = request.headers.get("x-forwarded-host", "").split(",")[0].strip()
    return f"{proto or request.url.scheme}://{host or request.url.netloc}"


def _version_doc(request: fastapi.Request) -> dict[str, Any]:
    return {
        "id": "v3.14",
        "status": "stable",
        "updated": "2020-04-07T00:00:00Z",
        "links": [{"rel": "self", "href": f"{_base_url(request)}/identity/v3/"}],
        "media-types": [
            {"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}
        ],
    }


def _catalog(request: fastapi.Request) -> list[dict[str, Any]]:
    url = f"{_base_url(request)}/v1"
    endpoints = [
        {
            "id": uuid.uuid5(uuid.NAMESPACE_URL, f"{iface} {url}").hex,
            "interface": iface,
            "region": REGION,
            "region_id": REGION,
            "url": url,
        }
        for iface in ("public", "internal", "admin")
    ]
    service_id = uuid.uuid5(uuid.NAMESPACE_URL, f"container {url}").hex
    return [{"id": service_id, "type": "container", "name": "zun", "endpoints": endpoints}]


def _isotime(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _token_response(
    request: fastapi.Request,
    user: str,
    project: str,
    method: str,
    status: int,
    token_id: str | None = None,
) -> JSONResponse:
    token_id = token_id or token_for(user, project)
    roles = ["admin", "member", "reader"] if user == "admin" else ["member", "reader"]
    now = datetime.datetime.now(datetime.UTC)
    body: dict[str, Any] = {
        "methods": [method],
        "user": {"id": user, "name": user, "domain": dict(_DOMAIN), "password_expires_at": None},
        "project": {"id": project, "name": project, "domain": dict(_DOMAIN)},
        "roles": [{"id": role, "name": role} for role in roles],
        "expires_at": _isotime(now + TOKEN_LIFETIME),
        "issued_at": _isotime(now),
        "audit_ids": [secrets.token_urlsafe(16)],
        "is_domain": False,
    }
    # keystoneauth appends ?nocatalog when a plugin is built with include_catalog=False.
    if "nocatalog" not in request.query_params:
        body["catalog"] = _catalog(request)
    return JSONResponse({"token": body}, status_code=status, headers={"X-Subject-Token": token_id})


#: What a noauth token can carry: it goes back in the X-Subject-Token header.
_TOKEN_TEXT = "^[ -~]*$"     # (empty: the next of name, id, the default)
_NAME = {"type": "string", "minLength": 1, "pattern": "^[ -9;-~]+$",
         "description": "A user name or id: printable ASCII without ':' (a noauth token "
                        "carries it in a header)."}
#: A JSON value Python takes as false (a user's name of that kind: its id is used).
_FALSY: dict[str, list[Any]] = {"enum": ["", None, False, 0, [], {}]}
_PROJECT = {"type": "object", "properties": {   # any value is taken as its text
    "name": {"pattern": _TOKEN_TEXT}, "id": {"pattern": _TOKEN_TEXT}}}
#: The login bodies ``issue_token`` takes (published; the handler checks them in
#: Keystone's words): a password login naming a user, or a token to re-scope.
TOKEN_REQUEST: dict[str, Any] = {
    "type": "object", "required": ["auth"],
    "properties": {"auth": {
        "type": "object", "required": ["identity"],
        "properties": {
            "identity": {"anyOf": [
                {"type": "object", "required": ["methods", "password"],
                 "properties": {
                     "methods": {"type": "array", "minItems": 1,
                                 "contains": {"const": "password"}},
                     "password": {"type": "object", "required": ["user"], "properties": {
                         "user": {"anyOf": [
                             {"type": "object", "required": ["name"],
                              "properties": {"name": _NAME}},
                             {"type": "object", "required": ["id"],
                              "properties": {"name": _FALSY,
                                             "id": _NAME}}]}}}}},
                {"type": "object", "required": ["methods", "token"],
                 "properties": {
                     "methods": {"type": "array", "minItems": 1,
                                 "items": {"not": {"const": "password"}},
                                 "contains": {"const": "token"}},
                     "token": {"type": "object", "required": ["id"]}}}]},
            "scope": {"anyOf": [   # other values are ignored (no scope)
                {"type": "object", "properties": {"project": {
                    "anyOf": [_PROJECT, {"not": {"type": "object"}}]}}},
                {"not": {"type": "object"}}]}}}}}


def _with_body(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    extra = {**arguments["openapi_extra"], "requestBody": {
        "required": True, "content": {"application/json": {"schema": schema}}}}
    return {**arguments, "openapi_extra": extra}


async def _json_body(request: fastapi.Request) -> Any:
    """The parsed request body; None when it is missing or not JSON; the refusal
    itself when it holds a string berth cannot pass on (a NUL, a lone surrogate:
    ``berth.api.body.refuse_unstorable``), whose message names the field.

    Read here rather than through a pydantic model so that bad input gets Keystone's
    error body instead of FastAPI's 422.
    """
    try:
        return request_body.decode(await request_body.read_bounded(request))
    except exc.InvalidParameterValue as err:
        return err
    except exc.Invalid:
        return None


def _scoped_project(auth: dict[str, Any], fallback: str) -> str:
    """Project name (or id when only an id is given) of the request's project scope."""
    scope = auth.get("scope")
    project = scope.get("project") if isinstance(scope, dict) else None
    if isinstance(project, dict):
        return str(project.get("name") or project.get("id") or fallback)
    return fallback


@router.get("", status_code=300, **_answers())
@router.get("/", status_code=300, include_in_schema=False)
def list_versions(request: fastapi.Request) -> dict[str, Any]:
    """Keystone's root: the list of API versions (300 Multiple Choices, as Keystone)."""
    return {"versions": {"values": [_version_doc(request)]}}


@router.get("/v3", **_answers())
@router.get("/v3/", include_in_schema=False)
def show_v3(request: fastapi.Request) -> dict[str, Any]:
    """The v3 version document keystoneauth's discovery reads."""
    return {"version": _version_doc(request)}


@router.post("/v3/auth/tokens", response_model=None, status_code=201,
             **_with_body(_answers(400, 401), TOKEN_REQUEST))
def issue_token(
    request: fastapi.Request, body: Any = fastapi.Depends(_json_body)
) -> JSONResponse:
    """Log in: any password is accepted; a token method re-scopes an existing token."""
    if isinstance(body, exc.InvalidParameterValue):
        return _error(400, body.msg)
    auth = body.get("auth") if isinstance(body, dict) else None
    identity = auth.get("identity") if isinstance(auth, dict) else None
    if not isinstance(auth, dict) or not isinstance(identity, dict):
        return _error(400, "Expecting a JSON body of the form {\"auth\": {\"identity\": ...}}.")
    methods = identity.get("methods")
    if not isinstance(methods, list) or not methods:
        return _error(400, "auth.identity.methods must be a non-empty list.")
    if "password" in methods:
        password = identity.get("password")
        user = password.get("user") if isinstance(password, dict) else None
        name = (user.get("name") or user.get("id")) if isinstance(user, dict) else None
        if not isinstance(name, str) or not name:
            return _error(400, "auth.identity.password.user needs a name or an id.")
        if ":" in name:
            return _error(400, "User names containing ':' cannot be used in noauth mode.")
        project = _scoped_project(auth, DEFAULT_PROJECT)
        if not _header_safe(name) or not _header_safe(project):
            return _error(400, "In noauth mode user and project names must be printable "
                               "ASCII: the token that carries them is a header.")
        return _token_response(request, name, project, "password", 201)
    if "token" in methods:
        token = identity.get("token")
        known = _issued_identity(token.get("id") if isinstance(token, dict) else None)
        if known is None:
            return _error(401, "The token to re-scope was not issued by this service.")
        project = _scoped_project(auth, known[1])
        if not _header_safe(project):
            return _error(400, "In noauth mode project names must be printable ASCII: the "
                               "token that carries them is a header.")
        return _token_response(request, known[0], project, "token", 201)
    return _error(401, f"Unsupported authentication methods {methods}: use password or token.")


@router.get("/v3/auth/tokens", response_model=None, **_answers(404))
@router.head("/v3/auth/tokens", response_model=None, **_answers(404))
def validate_token(request: fastapi.Request) -> Response:
    """Validate the token in X-Subject-Token; 404 when this service could not have issued it."""
    token = request.headers.get("x-subject-token", "").strip()
    known = _issued_identity(token)
    if known is None:
        return _error(404, "Could not find the token named by X-Subject-Token.")
    return _token_response(request, known[0], known[1], "token", 200, token_id=token)
