"""Keystone token checks in front of the API (pure logic, with a stand-in validator):
what is cached and for how long, which paths are public, what a refusal looks like."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from berth.api.authtoken import PUBLIC_PATHS, Identity, IdentityCache, KeystoneAuthMiddleware
from berth.common import exceptions as exc

CHALLENGE = 'Keystone uri="http://keystone.example/v3"'


def identity(expires_at: float = 4e9, project: str = "p1") -> Identity:
    return Identity(user_id="u1", user_name="alice", user_domain_id="default",
                    project_id=project, project_name="alpha", project_domain_id="default",
                    roles=("member", "reader"), expires_at=expires_at)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_cache_keeps_an_identity_for_its_ttl() -> None:
    clock = Clock()
    cache = IdentityCache(300, clock=clock)
    cache.put(("t", None), identity())
    clock.now += 299
    assert cache.get(("t", None)) == identity()
    clock.now += 1
    assert cache.get(("t", None)) is None


def test_cache_never_outlives_the_token() -> None:
    clock = Clock()
    cache = IdentityCache(300, clock=clock)
    cache.put(("t", None), identity(expires_at=clock.now + 10))
    clock.now += 10
    assert cache.get(("t", None)) is None


def test_a_service_token_is_part_of_the_key() -> None:
    cache = IdentityCache(300, clock=Clock())
    cache.put(("t", "svc"), identity())
    assert cache.get(("t", None)) is None and cache.get(("t", "svc")) is not None


def test_cache_time_minus_one_caches_nothing() -> None:
    cache = IdentityCache(-1, clock=Clock())
    cache.put(("t", None), identity())
    assert cache.get(("t", None)) is None


def test_cache_forgets_the_oldest_beyond_its_capacity() -> None:
    cache = IdentityCache(300, clock=Clock(), capacity=2)
    for token in ("a", "b", "c"):
        cache.put((token, None), identity())
    assert cache.get(("a", None)) is None
    assert cache.get(("b", None)) and cache.get(("c", None))


class StandInValidator:
    """Accepts the token ``good``; ``down`` plays a Keystone that does not answer."""

    def __init__(self) -> None:
        self.calls = 0
        self.seen = ("", "")

    def validate(self, user_token: str | None, service_token: str | None,
                 method: str = "GET", path: str = "/") -> Identity:
        self.calls += 1
        self.seen = (method, path)
        if user_token == "good" and service_token in (None, "svc"):
            return identity()
        if user_token == "restricted":
            return dataclasses.replace(identity(), restricted=True)
        if user_token == "down":
            raise exc.IdentityServiceUnavailable(reason="connection refused")
        raise exc.NotAuthenticated(reason="Keystone does not accept the token.")

    def challenge(self) -> str:
        return CHALLENGE


def _whoami(request: Request) -> JSONResponse:
    found: Any = request.scope["state"].get("identity")
    return JSONResponse({"user": found.user_id if found else None})


@pytest.fixture
def validator() -> StandInValidator:
    return StandInValidator()


@pytest.fixture
def http(validator: StandInValidator) -> TestClient:
    app = Starlette(routes=[Route("/v1/containers", _whoami), Route("/healthz", _whoami)])
    wrapped = KeystoneAuthMiddleware(app, validator, IdentityCache(300))  # type: ignore[arg-type]
    return TestClient(wrapped)


def test_a_valid_token_is_checked_once_then_served_from_the_cache(
        http: TestClient, validator: StandInValidator) -> None:
    for _ in range(3):
        response = http.get("/v1/containers", headers={"X-Auth-Token": "good"})
        assert response.json() == {"user": "u1"}
    assert validator.calls == 1


def test_a_token_limited_by_access_rules_is_checked_on_every_request(
        http: TestClient, validator: StandInValidator) -> None:
    for _ in range(2):
        assert http.get("/v1/containers", headers={"X-Auth-Token": "restricted"}
                        ).status_code == 200
    assert validator.calls == 2 and validator.seen == ("GET", "/v1/containers")


@pytest.mark.parametrize("headers", [{}, {"X-Auth-Token": "bad"},
                                     {"X-Auth-Token": "good", "X-Service-Token": "bad"}])
def test_refusals_are_401_with_the_keystone_challenge(http: TestClient,
                                                      headers: dict[str, str]) -> None:
    response = http.get("/v1/containers", headers=headers)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == CHALLENGE
    error = response.json()["errors"][0]
    assert error["code"] == "container.not-authenticated" and error["status"] == 401


def test_keystone_down_is_a_503_that_says_so(http: TestClient) -> None:
    response = http.get("/v1/containers", headers={"X-Auth-Token": "down"})
    assert response.status_code == 503
    assert "WWW-Authenticate" not in response.headers
    assert "Keystone" in response.json()["errors"][0]["title"]


def test_public_paths_need_no_token(http: TestClient, validator: StandInValidator) -> None:
    assert "/healthz" in PUBLIC_PATHS and "/v1/containers" not in PUBLIC_PATHS
    assert http.get("/healthz").json() == {"user": None}
    assert validator.calls == 0
