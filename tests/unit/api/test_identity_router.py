"""The noauth Keystone v3 stand-in, checked with TestClient and with the real clients."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import fastapi
import pytest
import uvicorn
from fastapi.testclient import TestClient
from keystoneauth1 import session as ks_session
from keystoneauth1.identity import generic, v3

from berth.api.routers import identity
from berth.api.routers.identity import parse_noauth_token, token_for

ZUN = Path(sys.executable).with_name("zun")


def make_app(seen_tokens: list[str | None] | None = None) -> fastapi.FastAPI:
    """The identity router plus a fake Zun root, so the zun CLI can finish its discovery."""
    app = fastapi.FastAPI()
    app.include_router(identity.router)

    @app.get("/")
    def root(request: fastapi.Request) -> dict[str, object]:
        if seen_tokens is not None:
            seen_tokens.append(request.headers.get("x-auth-token"))
        return {
            "versions": [
                {"id": "v1", "status": "CURRENT", "min_version": "1.1", "max_version": "1.40"}
            ]
        }

    return app


@pytest.fixture
def client() -> TestClient:
    return TestClient(make_app(), base_url="http://berth.test:9517")


@pytest.fixture
def seen_tokens() -> list[str | None]:
    return []


@pytest.fixture
def live_url(seen_tokens: list[str | None]) -> Iterator[str]:
    """The app served by uvicorn on 127.0.0.1 (an OS-chosen port) in a background thread."""
    server = uvicorn.Server(
        uvicorn.Config(make_app(seen_tokens), host="127.0.0.1", port=0, log_level="warning")
    )
    thread = threading.Thread(target=server.run, name="identity-test-uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def password_body(user: str = "alice", scope: object = None) -> dict[str, object]:
    auth: dict[str, object] = {
        "identity": {"methods": ["password"], "password": {"user": {"name": user, "password": "x"}}}
    }
    if scope is not None:
        auth["scope"] = scope
    return {"auth": auth}


# --- parse_noauth_token / token_for ---------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        (None, ("anonymous", "default", False)),
        ("", ("anonymous", "default", False)),
        ("   ", ("anonymous", "default", False)),
        ("admin", ("admin", "admin", True)),
        ("admin:p1", ("admin", "p1", True)),
        ("alice:p1", ("alice", "p1", False)),
        ("alice:p1:x", ("alice", "p1:x", False)),
        ("stub-keystone-token-0123", ("stub-keystone-token-0123", "default", False)),
        ("alice:", ("alice:", "default", False)),
        (":p1", (":p1", "default", False)),
    ],
)
def test_parse_noauth_token_applies_the_noauth_rules(
    token: str | None, expected: tuple[str, str, bool]
) -> None:
    assert parse_noauth_token(token) == expected


def test_token_for_round_trips_through_parse_noauth_token() -> None:
    assert token_for("alice", "p1") == "alice:p1"
    assert parse_noauth_token(token_for("bob", "team:a")) == ("bob", "team:a", False)
    assert parse_noauth_token(token_for("admin", "admin")) == ("admin", "admin", True)


@pytest.mark.parametrize(("user", "project"), [("", "p"), ("u", ""), ("a:b", "p")])
def test_token_for_refuses_tokens_that_would_not_parse_back(user: str, project: str) -> None:
    with pytest.raises(ValueError):
        token_for(user, project)


# --- documents ------------------------------------------------------------------------------


def test_root_lists_the_v3_version(client: TestClient) -> None:
    resp = client.get("/identity")
    assert resp.status_code == 300
    (version,) = resp.json()["versions"]["values"]
    assert version["id"] == "v3.14"
    assert version["links"] == [{"rel": "self", "href": "http://berth.test:9517/identity/v3/"}]


@pytest.mark.parametrize("path", ["/identity/v3", "/identity/v3/"])
def test_v3_document_links_to_itself(client: TestClient, path: str) -> None:
    resp = client.get(path)
    assert resp.status_code == 200
    version = resp.json()["version"]
    assert version["id"] == "v3.14" and version["status"] == "stable"
    assert version["links"] == [{"rel": "self", "href": "http://berth.test:9517/identity/v3/"}]
    assert version["media-types"][0]["base"] == "application/json"


def test_password_login_returns_token_naming_user_and_project(client: TestClient) -> None:
    resp = client.post(
        "/identity/v3/auth/tokens", json=password_body("alice", {"project": {"name": "p1"}})
    )
    assert resp.status_code == 201
    assert resp.headers["X-Subject-Token"] == "alice:p1"
    token = resp.json()["token"]
    assert token["methods"] == ["password"]
    assert token["user"]["id"] == token["user"]["name"] == "alice"
    assert token["user"]["domain"]["id"] == "default"
    assert token["project"]["id"] == token["project"]["name"] == "p1"
    assert [r["name"] for r in token["roles"]] == ["member", "reader"]
    assert len(token["audit_ids"]) == 1
    issued = datetime.datetime.strptime(token["issued_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    expires = datetime.datetime.strptime(token["expires_at"], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert expires - issued == datetime.timedelta(hours=24)
    (service,) = token["catalog"]
    assert (service["type"], service["name"]) == ("container", "zun")
    assert sorted(e["interface"] for e in service["endpoints"]) == ["admin", "internal", "public"]
    for endpoint in service["endpoints"]:
        assert endpoint["url"] == "http://berth.test:9517/v1"
        assert endpoint["region"] == endpoint["region_id"] == "RegionOne"


def test_admin_user_gets_admin_role(client: TestClient) -> None:
    resp = client.post(
        "/identity/v3/auth/tokens", json=password_body("admin", {"project": {"name": "admin"}})
    )
    assert resp.headers["X-Subject-Token"] == "admin:admin"
    assert [r["name"] for r in resp.json()["token"]["roles"]] == ["admin", "member", "reader"]


@pytest.mark.parametrize(
    ("scope", "project"),
    [(None, "default"), ({"project": {"id": "p-id"}}, "p-id"), ("unscoped", "default")],
)
def test_project_comes_from_scope_name_or_id(
    client: TestClient, scope: object, project: str
) -> None:
    resp = client.post("/identity/v3/auth/tokens", json=password_body("bob", scope))
    assert resp.status_code == 201
    assert resp.headers["X-Subject-Token"] == f"bob:{project}"


def test_catalog_follows_forwarded_headers(client: TestClient) -> None:
    resp = client.post(
        "/identity/v3/auth/tokens",
        json=password_body(),
        headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "cloud.example:8443"},
    )
    urls = {e["url"] for e in resp.json()["token"]["catalog"][0]["endpoints"]}
    assert urls == {"https://cloud.example:8443/v1"}


def test_nocatalog_leaves_the_catalog_out(client: TestClient) -> None:
    resp = client.post("/identity/v3/auth/tokens?nocatalog", json=password_body())
    assert resp.status_code == 201 and "catalog" not in resp.json()["token"]


def test_token_method_rescopes_an_issued_token(client: TestClient) -> None:
    body = {
        "auth": {
            "identity": {"methods": ["token"], "token": {"id": "alice:p1"}},
            "scope": {"project": {"name": "p2"}},
        }
    }
    resp = client.post("/identity/v3/auth/tokens", json=body)
    assert resp.status_code == 201 and resp.headers["X-Subject-Token"] == "alice:p2"
    assert resp.json()["token"]["methods"] == ["token"]
    del body["auth"]["scope"]
    assert client.post("/identity/v3/auth/tokens", json=body).headers["X-Subject-Token"] == (
        "alice:p1"
    )


@pytest.mark.parametrize(
    "content", [b"", b"not json", b"[]", b'{"auth": {}}', b'{"auth": {"identity": {}}}']
)
def test_malformed_login_is_400_in_keystone_format(client: TestClient, content: bytes) -> None:
    resp = client.post(
        "/identity/v3/auth/tokens", content=content, headers={"Content-Type": "application/json"}
    )
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert (error["code"], error["title"]) == (400, "Bad Request") and error["message"]


def test_a_login_holding_a_nul_names_the_field_in_keystone_format(client: TestClient) -> None:
    content = (b'{"auth": {"identity": {"methods": ["password"], "password": {"user": '
               b'{"name": "alice"}}}, "sc\\u0000pe": {}}}')
    resp = client.post("/identity/v3/auth/tokens", content=content,
                       headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert (error["code"], error["title"]) == (400, "Bad Request")
    assert "auth.sc\\u0000pe" in error["message"] and "NUL" in error["message"]


@pytest.mark.parametrize(
    "identity_doc",
    [
        {"methods": ["totp"], "totp": {}},
        {"methods": ["token"], "token": {"id": "not-one-of-ours"}},
    ],
)
def test_unusable_method_is_401(client: TestClient, identity_doc: dict[str, object]) -> None:
    resp = client.post("/identity/v3/auth/tokens", json={"auth": {"identity": identity_doc}})
    assert resp.status_code == 401
    assert resp.json()["error"]["title"] == "Unauthorized"


def test_validate_returns_the_token_body(client: TestClient) -> None:
    resp = client.get("/identity/v3/auth/tokens", headers={"X-Subject-Token": "alice:p1"})
    assert resp.status_code == 200 and resp.headers["X-Subject-Token"] == "alice:p1"
    assert resp.json()["token"]["project"]["name"] == "p1"
    head = client.head("/identity/v3/auth/tokens", headers={"X-Subject-Token": "admin"})
    assert head.status_code == 200 and head.headers["X-Subject-Token"] == "admin"


@pytest.mark.parametrize("headers", [{}, {"X-Subject-Token": "garbage"}])
def test_validate_unknown_token_is_404(client: TestClient, headers: dict[str, str]) -> None:
    resp = client.get("/identity/v3/auth/tokens", headers=headers)
    assert resp.status_code == 404 and resp.json()["error"]["code"] == 404
    assert client.head("/identity/v3/auth/tokens", headers=headers).status_code == 404


# --- real clients ---------------------------------------------------------------------------


def test_keystoneauth_v3_password_plugin_logs_in(live_url: str) -> None:
    auth = v3.Password(
        auth_url=f"{live_url}/identity/v3",
        username="alice",
        password="x",
        project_name="p1",
        user_domain_id="default",
        project_domain_id="default",
    )
    sess = ks_session.Session(auth=auth)
    assert sess.get_token() == "alice:p1"
    assert sess.get_endpoint(service_type="container", interface="public") == f"{live_url}/v1"
    assert sess.get_project_id() == "p1" and sess.get_user_id() == "alice"


def test_keystoneauth_generic_password_plugin_discovers_v3(live_url: str) -> None:
    # The zun CLI uses the generic plugin, which first GETs the auth URL's version document.
    auth = generic.Password(
        auth_url=f"{live_url}/identity/v3", username="admin", password="x", project_name="admin"
    )
    sess = ks_session.Session(auth=auth)
    assert sess.get_token() == "admin:admin"
    assert sess.get_endpoint(service_type="container", interface="internal") == f"{live_url}/v1"


@pytest.mark.skipif(not ZUN.exists(), reason="zun CLI not installed next to this python")
def test_zun_cli_logs_in_and_reaches_berth_through_the_catalog(
    live_url: str, seen_tokens: list[str | None]
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OS_", "ZUN_", "BYPASS_"))}
    env.update(
        OS_AUTH_URL=f"{live_url}/identity/v3",
        OS_USERNAME="carol",
        OS_PASSWORD="x",
        OS_PROJECT_NAME="team1",
    )
    result = subprocess.run(
        [str(ZUN), "version-list"], env=env, check=False, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "1.40" in result.stdout
    # No --bypass-url: the CLI found berth in the catalog and sent the issued token.
    assert seen_tokens and set(seen_tokens) == {"carol:team1"}
