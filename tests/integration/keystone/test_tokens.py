"""Tokens: only what Keystone accepts gets in; a refusal is a 401 naming Keystone, and a
Keystone that does not answer is a 503 that leaves the agent and cached callers alone."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import httpx
from support import keystone as ks
from support.berth_proc import BerthProcess, wait_for
from support.tcp_relay import TcpRelay

from .conftest import client


def _assert_refused(response: httpx.Response, berth: BerthProcess) -> None:
    assert response.status_code == 401, response.text
    challenge = response.headers["WWW-Authenticate"]
    assert challenge.startswith('Keystone uri="http://127.0.0.1:') and "/v3" in challenge
    error = response.json()["errors"][0]
    assert error["status"] == 401 and error["code"] == "container.not-authenticated"
    assert error["request_id"] == response.headers["x-openstack-request-id"]


def test_a_request_without_a_token_is_401_naming_keystone(berth_ks: BerthProcess) -> None:
    with client(berth_ks, None) as http:
        response = http.get("/v1/containers")
    _assert_refused(response, berth_ks)
    assert "X-Auth-Token" in response.json()["errors"][0]["title"]


def test_a_malformed_token_is_401(berth_ks: BerthProcess) -> None:
    for token in ("not-a-token", "gAAAAA" + "x" * 180, "admin", "admin:admin"):
        with client(berth_ks, token) as http:
            _assert_refused(http.get("/v1/containers"), berth_ks)


def test_noauth_identity_headers_and_stand_in_are_ignored(berth_ks: BerthProcess,
                                                          tokens: dict[str, str]) -> None:
    """A client's own X-User-Id/X-Roles count for nothing, and the noauth Keystone
    stand-in is not there."""
    headers = {"X-Roles": "admin", "X-Project-Id": "other", "X-User-Id": "root"}
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        response = http.get("/v1/hosts", headers=headers)
        assert response.status_code == 403, response.text
        assert "host:get_all" in response.json()["errors"][0]["title"]
        assert http.get("/identity/v3").status_code == 404
    with client(berth_ks, None) as http:
        response = http.post("/identity/v3/auth/tokens", json={})
        assert response.status_code == 401


def test_a_revoked_token_is_401(berth_ks: BerthProcess, keystone: ks.Keystone) -> None:
    token = ks.issue_token("berth-beta-member", project="berth-beta")
    keystone.revoke(token)
    with client(berth_ks, token) as http:
        _assert_refused(http.get("/v1/containers"), berth_ks)


def test_an_expired_token_is_401_even_after_it_was_cached(berth_ks: BerthProcess,
                                                          keystone: ks.Keystone,
                                                          tokens: dict[str, str]) -> None:
    """An application credential's tokens expire with it: a token that worked (and
    was cached) is refused once its expiry passes."""
    token, expires = _application_credential(keystone, "berth-beta-member", "berth-beta",
                                             lifetime=6)
    assert expires is not None
    with client(berth_ks, token) as http:
        assert http.get("/v1/containers").status_code == 200
        time.sleep(max(0.0, (expires - dt.datetime.now(dt.UTC)).total_seconds()) + 1.5)
        _assert_refused(http.get("/v1/containers"), berth_ks)


def test_a_service_token_must_be_valid_too(berth_ks: BerthProcess,
                                           tokens: dict[str, str]) -> None:
    """A service acting for a user sends both tokens (X-Service-Token): the user's
    identity is the caller's; a service token without the service role, or a bad one,
    refuses the request."""
    service = ks.issue_token(ks.SERVICE.name, project=ks.SERVICE.project)
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        assert http.get("/v1/containers").status_code == 200
        both = http.get("/v1/hosts", headers={"X-Service-Token": service})
        assert both.status_code == 403     # the member's rights, not the service's admin
        for bad in ("bogus", tokens["berth-alpha-admin"]):     # an admin is no service
            _assert_refused(http.get("/v1/containers", headers={"X-Service-Token": bad}),
                            berth_ks)


def test_callers_identity_comes_from_keystone(berth_ks: BerthProcess, keystone: ks.Keystone,
                                              tokens: dict[str, str]) -> None:
    """A registry records its creator's user and project as Keystone names them."""
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        response = http.post("/v1/registries", json={"registry": {
            "name": f"who-{uuid.uuid4().hex[:6]}", "domain": "127.0.0.1:5000",
            "username": "u", "password": "p"}})
        assert response.status_code == 201, response.text
        registry = response.json()["registry"]
        try:
            assert registry["user_id"] == keystone.user_ids["berth-alpha-member"]
            assert registry["project_id"] == keystone.project_ids["berth-alpha"]
        finally:
            http.delete(f"/v1/registries/{registry['uuid']}")


def test_public_paths_need_no_token(berth_ks: BerthProcess) -> None:
    with client(berth_ks, None) as http:
        for path in ("/", "/v1", "/healthz", "/readyz", "/healthcheck"):
            assert http.get(path).status_code == 200, path


def test_keystone_down_is_503_and_cached_callers_and_the_agent_go_on(
        berth_ks: BerthProcess, keystone_relay: TcpRelay, tokens: dict[str, str]) -> None:
    known = tokens["berth-alpha-member"]
    with client(berth_ks, known) as http:
        assert http.get("/v1/containers").status_code == 200     # validated and cached
    fresh = ks.issue_token("berth-alpha-reader", project="berth-alpha")
    keystone_relay.cut()
    try:
        with client(berth_ks, fresh) as http:
            response = http.get("/v1/containers")
        assert response.status_code == 503, response.text
        error = response.json()["errors"][0]
        assert "Keystone" in error["title"] and "does not answer" in error["title"]
        with client(berth_ks, known) as http:
            assert http.get("/v1/containers").status_code == 200
        with client(berth_ks, None) as http:
            assert http.get("/readyz").status_code == 200   # database, RPC, Docker: fine
    finally:
        keystone_relay.restore()
    with client(berth_ks, fresh) as http:
        wait_for(lambda: http.get("/v1/containers").status_code == 200, 15,
                 what="berth to validate tokens again")


def _application_credential(keystone: ks.Keystone, user: str, project: str,
                            lifetime: float | None = None, **fields: object
                            ) -> tuple[str, dt.datetime | None]:
    """A token of a new application credential of ``user`` with ``fields``, and when
    the credential expires: ``lifetime`` seconds after it is asked for (counted from
    then, not from before the user's own token was issued, which takes seconds on a
    loaded machine: an expiry already past is a 400), or never."""
    token = ks.issue_token(user, project=project)
    expires = None if lifetime is None else \
        dt.datetime.now(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=lifetime)
    if expires is not None:
        fields["expires_at"] = expires.strftime("%Y-%m-%dT%H:%M:%S")
    created = httpx.post(
        f"{ks.AUTH_URL}/users/{keystone.user_ids[user]}/application_credentials",
        timeout=30, headers={"X-Auth-Token": token},
        json={"application_credential": {"name": f"berth-{uuid.uuid4().hex[:8]}",
                                         **fields}})
    created.raise_for_status()
    credential = created.json()["application_credential"]
    issued = httpx.post(f"{ks.AUTH_URL}/auth/tokens", timeout=30, json={"auth": {"identity": {
        "methods": ["application_credential"],
        "application_credential": {"id": credential["id"], "secret": credential["secret"]}}}})
    issued.raise_for_status()
    return issued.headers["X-Subject-Token"], expires


def test_access_rules_of_an_application_credential_hold_on_every_request(
        berth_ks: BerthProcess, keystone: ks.Keystone) -> None:
    keystone.register_berth(berth_ks.url)     # access rules name berth's service type
    token, _ = _application_credential(
        keystone, "berth-beta-member", "berth-beta",
        access_rules=[{"service": "container", "method": "GET", "path": "/v1/containers"}])
    with client(berth_ks, token) as http:
        for _ in range(2):      # the second time too: such tokens are never cached
            assert http.get("/v1/containers").status_code == 200
            _assert_refused(http.get("/v1/registries"), berth_ks)
