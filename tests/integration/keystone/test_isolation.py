"""Projects are isolated: a member of another project finds nothing of project alpha's
(404 by uuid and by name, as for something that does not exist), changes nothing, and
sees no registry password anywhere; admins see every project's."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support import keystone as ks
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

from .conftest import client, create_container, delete_container

PASSWORD = "registry-secret-pw"
#: Enough for every action's parameters to be valid, so that only the lookup answers.
ACTION_PARAMS = {"command": "true", "repository": "stolen", "path": "/tmp", "h": "10", "w": "10",
                 "name": "default", "network": "none", "signal": "SIGKILL"}


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuidlib.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def alpha(berth_ks: BerthProcess, keystone: ks.Keystone) -> Iterator[dict[str, Any]]:
    """Project alpha's container, registry and capsule, made by its member."""
    token = ks.issue_token("berth-alpha-member", project="berth-alpha")
    with client(berth_ks, token) as http:
        container = create_container(http, name=_unique("alpha-c"))
        registry = http.post("/v1/registries", json={"registry": {
            "name": _unique("alpha-r"), "domain": "127.0.0.1:5000", "username": "alpha",
            "password": PASSWORD}})
        assert registry.status_code == 201, registry.text
        capsule = http.post("/v1/capsules", json={"template": {
            "kind": "capsule", "metadata": {"name": _unique("alpha-k")},
            "spec": {"containers": [{"image": TEST_IMAGE, "imagePullPolicy": "IfNotPresent",
                                     "command": ["sleep", "3600"],
                                     "resources": {"requests": {"cpu": 0.1,
                                                                "memory": 32}}}]}}})
        assert capsule.status_code == 202, capsule.text
        made = {"container": container, "registry": registry.json()["registry"],
                "capsule": capsule.json(), "token": token}
        yield made
        delete_container(http, container["uuid"])
        http.delete(f"/v1/registries/{made['registry']['uuid']}")
        http.delete(f"/v1/capsules/{made['capsule']['uuid']}")
        wait_for(lambda: http.get(f"/v1/capsules/{made['capsule']['uuid']}").status_code
                 == 404, 90, what="the capsule to go")


def _idents(resource: dict[str, Any]) -> list[str]:
    return [resource["uuid"], resource.get("name") or resource.get("meta_name")]


def _assert_404(response: httpx.Response) -> None:
    assert response.status_code == 404, (response.request.method, response.request.url,
                                          response.text)


def test_another_projects_container_is_404_by_uuid_and_name(
        berth_ks: BerthProcess, alpha: dict[str, Any], tokens: dict[str, str]) -> None:
    with client(berth_ks, tokens["berth-beta-member"]) as http:
        for ident in _idents(alpha["container"]):
            base = f"/v1/containers/{ident}"
            _assert_404(http.get(base))
            _assert_404(http.patch(base, json={"name": "stolen"}))
            _assert_404(http.delete(base, params={"stop": "true"}))
            for action in ("stop", "start", "reboot", "pause", "unpause", "kill", "rebuild",
                           "commit", "execute", "resize", "put_archive",
                           "network_detach"):
                # a well-formed request (a malformed one is a 400 wherever it goes)
                _assert_404(http.post(f"{base}/{action}", params=ACTION_PARAMS,
                                      json={"data": "dGFy", "name": "default"}))
            for path in ("logs", "top", "stats", "attach", "get_archive",
                         "container_actions", "network_list"):
                _assert_404(http.get(f"{base}/{path}", params={"path": "/"}))
            _assert_404(http.get(f"{base}/container_actions/req-{uuidlib.uuid4()}"))
        listed = http.get("/v1/containers").json()["containers"]
        assert alpha["container"]["uuid"] not in {c["uuid"] for c in listed}
        refused = http.get("/v1/containers", params={"all_projects": "true"})
        assert refused.status_code == 403
        assert "container:get_all_all_projects" in refused.json()["errors"][0]["title"]
    with client(berth_ks, alpha["token"]) as http:   # nothing changed
        shown = http.get(f"/v1/containers/{alpha['container']['uuid']}").json()
        assert shown["status"] == "Running" and shown["name"] == alpha["container"]["name"]
        actions = http.get(f"/v1/containers/{shown['uuid']}/container_actions").json()
        assert [a["action"] for a in actions["containerActions"]] == ["create"]


def test_another_projects_registry_is_404_and_no_password_shows(
        berth_ks: BerthProcess, alpha: dict[str, Any], tokens: dict[str, str]) -> None:
    with client(berth_ks, tokens["berth-beta-member"]) as http:
        for ident in _idents(alpha["registry"]):
            _assert_404(http.get(f"/v1/registries/{ident}"))
            _assert_404(http.patch(f"/v1/registries/{ident}",
                                   json={"registry": {"username": "stolen"}}))
            _assert_404(http.delete(f"/v1/registries/{ident}"))
        listed = http.get("/v1/registries").json()["registries"]
        assert alpha["registry"]["uuid"] not in {r["uuid"] for r in listed}
        assert http.get("/v1/registries", params={"all_projects": "1"}).status_code == 403
        # Nor can a container of another project pull with alpha's credentials.
        _assert_404(http.post("/v1/containers", json={
            "image": TEST_IMAGE, "registry": alpha["registry"]["uuid"]}))
    with client(berth_ks, tokens["berth-alpha-admin"]) as http:
        everything = http.get("/v1/registries", params={"all_projects": "1"})
        assert alpha["registry"]["uuid"] in {r["uuid"] for r in everything.json()["registries"]}
        assert PASSWORD not in everything.text
        shown = http.get(f"/v1/registries/{alpha['registry']['uuid']}")
        assert shown.status_code == 200 and PASSWORD not in shown.text
        assert shown.json()["registry"]["username"] == "alpha"   # unchanged


def test_another_projects_capsule_is_404(berth_ks: BerthProcess, alpha: dict[str, Any],
                                         tokens: dict[str, str]) -> None:
    with client(berth_ks, tokens["berth-beta-member"]) as http:
        for ident in _idents(alpha["capsule"]):
            _assert_404(http.get(f"/v1/capsules/{ident}"))
            _assert_404(http.delete(f"/v1/capsules/{ident}"))
        listed = http.get("/v1/capsules").json()["capsules"]
        assert alpha["capsule"]["uuid"] not in {c["uuid"] for c in listed}
        # capsule:get_all_all_projects (admin) is needed to list everybody's.
        assert http.get("/v1/capsules", params={"all_projects": "1"}).status_code == 403
    with client(berth_ks, alpha["token"]) as http:
        shown = http.get(f"/v1/capsules/{alpha['capsule']['uuid']}")
        assert shown.status_code == 200 and shown.json()["status"] != "Deleting"
        assert "host" not in shown.json()    # capsule:get:host is admin-only


def test_another_projects_quota_is_refused(berth_ks: BerthProcess, keystone: ks.Keystone,
                                           tokens: dict[str, str]) -> None:
    alpha_id = keystone.project_ids["berth-alpha"]
    with client(berth_ks, tokens["berth-beta-member"]) as http:
        response = http.get(f"/v1/quotas/{alpha_id}")
        assert response.status_code == 403 and "quota:get" in response.text
        refused = http.put(f"/v1/quotas/{alpha_id}", json={"containers": 0})
        assert refused.status_code == 403 and "quota:update" in refused.text
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        assert http.get(f"/v1/quotas/{alpha_id}").status_code == 200
        assert http.get(f"/v1/quotas/{alpha_id}").json()["containers"] != 0


def test_admins_see_every_project_and_the_hidden_fields(
        berth_ks: BerthProcess, alpha: dict[str, Any], tokens: dict[str, str]) -> None:
    uuid = alpha["container"]["uuid"]
    hidden = {"host", "image_pull_policy", "privileged", "runtime"}
    with client(berth_ks, alpha["token"]) as http:
        own = http.get(f"/v1/containers/{uuid}").json()
        assert not hidden & set(own)
        listed = http.get("/v1/containers").json()["containers"]
        assert all(not hidden & set(c) for c in listed)
        refused = http.get("/v1/containers", params={"host": "x"})
        assert refused.status_code == 403 and "container:get_one:host" in refused.text
    with client(berth_ks, tokens["berth-alpha-admin"]) as http:
        # The admin of project alpha is an admin everywhere (role admin, as in Zun).
        shown = http.get(f"/v1/containers/{uuid}").json()
        assert hidden <= set(shown) and shown["host"] == berth_ks.host
        everything = http.get("/v1/containers", params={"all_projects": "true"}).json()
        assert uuid in {c["uuid"] for c in everything["containers"]}
