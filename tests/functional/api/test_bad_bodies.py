"""Bodies the API cannot or will not parse (issue 24 item 2), against a real
``berth serve``: on every route that takes a body, a body nested 100,000 deep is a 400
in Zun's error format (before: RecursionError, a 500), and so is one over
``[api]max_request_body_size``; nothing is left behind."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

from berth.api.app import create_app

pytestmark = pytest.mark.functional

DEEP = b'{"name": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
JSON = {"Content-Type": "application/json"}
#: Routes whose request has no body in Zun's API: the API never reads one there (and
#: would carry out the action).
TAKE_NO_BODY = {"/v1/containers/{ident}/start", "/v1/containers/{ident}/pause",
                "/v1/containers/{ident}/unpause"}


def body_routes() -> list[tuple[str, str]]:
    """(method, path) of every route of the app that takes a body, from its OpenAPI
    document (the aliases left out of it share their handlers)."""
    paths = create_app(None).openapi()["paths"]  # type: ignore[arg-type]
    return sorted((method.upper(), path) for path, item in paths.items()
                  for method in item if method in ("post", "put", "patch"))


@pytest.fixture(scope="module")
def container(berth: BerthProcess) -> Iterator[str]:
    with berth.http() as http:
        resp = http.post("/v1/containers", json={
            "image": TEST_IMAGE, "command": ["sleep", "300"],
            "image_pull_policy": "ifnotpresent"})
        assert resp.status_code == 202, resp.text
        uuid = str(resp.json()["uuid"])
        wait_for(lambda: http.get(f"/v1/containers/{uuid}").json()["status"] == "Created",
                 60, what="Created")
        yield uuid
        http.delete(f"/v1/containers/{uuid}", params={"force": "true"})


def concrete(path: str, uuid: str) -> str:
    return re.sub(r"\{[^}]+\}", lambda m: uuid if m.group(0) == "{ident}" else "bodytest",
                  path)


def assert_refused(resp: httpx.Response, path: str, words: str) -> None:
    assert resp.status_code == 400, (path, resp.status_code, resp.text[:300])
    if path.startswith("/identity"):
        assert resp.json()["error"]["code"] == 400
        return
    (err,) = resp.json()["errors"]
    assert err["status"] == 400 and err["code"].startswith("container.")
    assert words in err["detail"], (path, err["detail"])


def test_every_route_that_takes_a_body_refuses_a_deep_one(
        berth: BerthProcess, container: str) -> None:
    routes = body_routes()
    assert len(routes) > 20
    with berth.http() as http:
        before = http.get("/v1/containers").json()["containers"]
        for method, path in routes:
            if path in TAKE_NO_BODY:
                continue
            url = concrete(path, container)
            resp = http.request(method, url, content=DEEP, headers=JSON)
            if resp.status_code == 406:      # a route of older microversions only
                resp = http.request(method, url, content=DEEP,
                                    headers={**JSON, "OpenStack-API-Version": "container 1.1"})
            assert_refused(resp, path, "levels deep")
        after = http.get("/v1/containers").json()["containers"]
    assert [c["uuid"] for c in after] == [c["uuid"] for c in before]
    assert "RecursionError" not in berth.log_text()


@pytest.mark.parametrize("path", ["/v1/containers", "/v1/quotas/bodytest", "/v1/images"])
def test_a_body_over_the_size_limit_is_refused(berth: BerthProcess, path: str) -> None:
    big = b'{"name": "' + b"x" * (10 * 1024 * 1024) + b'"}'
    with berth.http() as http:
        method = "PUT" if "quotas" in path else "POST"
        resp = http.request(method, path, content=big, headers=JSON)
    assert_refused(resp, path, "max_request_body_size")


def test_a_declared_json_body_that_does_not_parse_is_400_even_where_none_is_needed(
        berth: BerthProcess, container: str) -> None:
    with berth.http() as http:
        resp = http.post(f"/v1/containers/{container}/rename", content=b"{nope",
                         headers={**JSON, "OpenStack-API-Version": "container 1.1"})
    assert_refused(resp, "/v1/containers/{ident}/rename", "not valid JSON")
