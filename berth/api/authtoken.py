"""Keystone tokens (``[api]auth_strategy = keystone``): who is calling, as Keystone says.

keystonemiddleware's ``AuthProtocol`` is a WSGI middleware; berth's API is ASGI. Rather
than run the whole API through a WSGI adapter (a thread and a WSGI environ per request),
:class:`TokenValidator` drives ``AuthProtocol.process_request`` itself, on a small WSGI
request that carries only the token headers. Everything keystonemiddleware does is kept:
the ``[keystone_authtoken]`` options, the service user and its session, token
validation against Keystone, service tokens (``X-Service-Token``) and their roles,
access rules of application credentials, token binding, its token cache (in-process or
``memcached_servers``) and its answers: 401 for a missing, malformed, expired or revoked
token, 503 when Keystone cannot be reached.

:class:`KeystoneAuthMiddleware` sits in front of every route but the public ones
(version documents, health, metrics, API docs). A validated token's identity is kept in
:class:`IdentityCache` for ``[keystone_authtoken]token_cache_time`` seconds (never past
the token's expiry), so a request with a known token costs a dict lookup on the event
loop; only a cache miss runs keystonemiddleware, on a worker thread, as that may wait
for Keystone or memcached. (Tokens of application credentials limited by access rules
are checked on every request, against its method and path.) As with keystonemiddleware's own cache, a token revoked in
Keystone is refused once its cached validation expires.

The identity is put on the request's state (``identity``); ``berth.api.auth`` makes the
request context from it and never from ``X-User-Id``/``X-Roles`` headers, which a client
could send itself.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from oslo_config import cfg

from berth.api.errors import berth_error_response
from berth.common import exceptions as exc
from berth.dashboard.paths import is_public as dashboard_public

LOG = logging.getLogger(__name__)

#: Paths answered without a token: version discovery (as in Zun), health, metrics and
#: the API's own documentation.
PUBLIC_PATHS = frozenset({"/", "/v1", "/v1/", "/v1.json", "/healthz", "/readyz",
                          "/healthcheck", "/metrics", "/docs", "/openapi.json"})
#: Identities remembered; beyond this the oldest is forgotten.
MAX_CACHED_TOKENS = 10000


@dataclass(frozen=True, slots=True)
class Identity:
    """The caller a valid token names (a project-scoped token)."""

    user_id: str
    user_name: str | None
    user_domain_id: str | None
    project_id: str
    project_name: str | None
    project_domain_id: str | None
    roles: tuple[str, ...]
    #: Unix time at which Keystone stops accepting the token.
    expires_at: float
    #: An application credential's token limited by access rules: it is checked
    #: against each request's method and path, so never answered from the cache.
    restricted: bool = False


class TokenValidator:
    """Checks tokens with keystonemiddleware (blocking: run it off the event loop).

    Thread-safe as keystonemiddleware is: one keystoneauth session shared by threads."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        from keystonemiddleware import auth_token

        self._protocol = auth_token.AuthProtocol(None, {"oslo_config_config": conf})
        self._conf = conf
        self._challenge: str | None = None
        self._lock = threading.Lock()

    def validate(self, user_token: str | None, service_token: str | None,
                 method: str = "GET", path: str = "/") -> Identity:
        """The identity ``user_token`` names, for a request of ``method`` on ``path``
        (what an application credential's access rules are matched with).

        Raises NotAuthenticated (no token, or one Keystone refuses: malformed, expired,
        revoked, not scoped to a project, or a service token without its role) and
        IdentityServiceUnavailable (Keystone does not answer)."""
        import webob.exc
        from keystoneauth1 import exceptions as ksa_exc
        from keystonemiddleware.auth_token import _request

        headers = {}
        if user_token:
            headers["X-Auth-Token"] = user_token
        if service_token:
            headers["X-Service-Token"] = service_token
        request = _request._AuthTokenRequest.blank(path, headers=headers,
                                                   method=method)
        try:
            self._protocol.process_request(request)
        except webob.exc.HTTPUnauthorized:
            raise exc.NotAuthenticated(reason=_refusal(user_token)) from None
        except webob.exc.HTTPServiceUnavailable as err:
            raise exc.IdentityServiceUnavailable(reason=str(err.detail or err)) from None
        except ksa_exc.ClientException as err:
            # EndpointNotFound, a refused service user, ...: berth cannot validate.
            LOG.error("cannot validate tokens with Keystone: %s", err)
            raise exc.IdentityServiceUnavailable(reason=str(err)) from None
        auth = request.token_auth.user
        if not auth.project_id:
            raise exc.NotAuthenticated(
                reason="the token is not scoped to a project; ask Keystone for a "
                       "project-scoped token (OS_PROJECT_NAME)")
        credential = (request.token_info or {}).get("token", {}).get(
            "application_credential") or {}
        return Identity(
            user_id=auth.user_id, user_name=auth.username,
            user_domain_id=auth.user_domain_id, project_id=auth.project_id,
            project_name=auth.project_name, project_domain_id=auth.project_domain_id,
            roles=tuple(auth.role_names), expires_at=auth.expires.timestamp(),
            restricted=credential.get("access_rules") is not None)

    @property
    def identity_url(self) -> str:
        """Keystone's public URL, where users log in (the web console's login)."""
        opts = self._conf.keystone_authtoken
        return str(opts.www_authenticate_uri or getattr(opts, "auth_url", "") or "")

    def challenge(self) -> str:
        """The ``WWW-Authenticate`` value of a 401 (may ask Keystone once when
        ``www_authenticate_uri`` is unset: call it off the event loop)."""
        with self._lock:
            if self._challenge is None:
                try:
                    uri = self._protocol.www_authenticate_uri
                except Exception as err:  # noqa: BLE001 - Keystone's discovery failed
                    # Not remembered: the next refusal asks again.
                    LOG.warning("cannot find Keystone's public endpoint for 401s (%s); set "
                                "[keystone_authtoken]www_authenticate_uri", err)
                    auth_url = getattr(self._conf.keystone_authtoken, "auth_url", "")
                    return f'Keystone uri="{auth_url or ""}"'
                self._challenge = f'Keystone uri="{uri}"'
            return self._challenge


def _refusal(token: str | None) -> str:
    if not token or not token.strip():
        return "send a Keystone token in the X-Auth-Token header."
    return "Keystone does not accept the token (malformed, expired or revoked); get a new one."


class IdentityCache:
    """Validated identities by (user token, service token), each kept for at most
    ``ttl`` seconds and never past its token's expiry; the oldest are dropped beyond
    ``capacity``. ``ttl`` <= 0
    disables it (keystonemiddleware's ``token_cache_time = -1``)."""

    def __init__(self, ttl: float, clock: Callable[[], float] = time.time,
                 capacity: int = MAX_CACHED_TOKENS) -> None:
        self.ttl = ttl
        self._clock = clock
        self._capacity = capacity
        self._items: collections.OrderedDict[tuple[str, str | None],
                                             tuple[float, Identity]] = \
            collections.OrderedDict()

    def get(self, key: tuple[str, str | None]) -> Identity | None:
        entry = self._items.get(key)
        if entry is None:
            return None
        until, identity = entry
        if self._clock() >= until:
            self._items.pop(key, None)
            return None
        return identity

    def put(self, key: tuple[str, str | None], identity: Identity) -> None:
        if self.ttl <= 0:
            return
        until = min(self._clock() + self.ttl, identity.expires_at)
        self._items[key] = (until, identity)
        self._items.move_to_end(key)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)


class KeystoneAuthMiddleware:
    """ASGI: refuse requests without a valid Keystone token; put the caller's
    :class:`Identity` on ``scope["state"]["identity"]``."""

    def __init__(self, app: Any, validator: TokenValidator, cache: IdentityCache) -> None:
        self.app = app
        self.validator = validator
        self.cache = cache

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        # Only HTTP is checked: the API has no WebSocket route (consoles are served by
        # berth-wsproxy, with console tokens of their own), and lifespan events pass.
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS \
                or dashboard_public(scope["path"]):
            await self.app(scope, receive, send)
            return
        user_token = service_token = None
        for name, value in scope["headers"]:
            if name == b"x-auth-token":
                user_token = value.decode("latin-1").strip()
            elif name == b"x-service-token":
                service_token = value.decode("latin-1").strip()
        state = scope.setdefault("state", {})
        identity = self.cache.get((user_token, service_token)) if user_token else None
        if identity is None or identity.restricted:
            try:
                identity = await anyio.to_thread.run_sync(
                    self.validator.validate, user_token, service_token, scope["method"],
                    scope["path"])
            except exc.NotAuthenticated as err:
                challenge = await anyio.to_thread.run_sync(self.validator.challenge)
                await self._refuse(scope, receive, send, err, challenge)
                return
            except exc.IdentityServiceUnavailable as err:
                LOG.warning("request %s refused: %s", state.get("request_id"), err.msg)
                await self._refuse(scope, receive, send, err, None)
                return
            assert user_token is not None
            self.cache.put((user_token, service_token), identity)
        state["identity"] = identity
        await self.app(scope, receive, send)

    @staticmethod
    async def _refuse(scope: dict, receive: Any, send: Any, err: exc.BerthError,
                      challenge: str | None) -> None:
        response = berth_error_response(scope.get("state", {}).get("request_id", ""), err)
        if challenge:
            response.headers["WWW-Authenticate"] = challenge
        await response(scope, receive, send)

