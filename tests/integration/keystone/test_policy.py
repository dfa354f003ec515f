"""Zun's policy with Keystone roles: admin-only rules refuse members with a 403 that
names the rule, and an operator's policy file takes effect without a restart."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

from .conftest import client

PROJECT = "{project}"

#: (method, path, rule): admin-only by default. ``{project}`` is the caller's project id.
ADMIN_ONLY = [
    ("GET", "/v1/hosts", "host:get_all"),
    ("GET", "/v1/hosts/nohost", "host:get"),
    ("GET", "/v1/services", "zun-service:get_all"),
    ("PUT", "/v1/services/enable", "zun-service:enable"),
    ("PUT", "/v1/services/disable", "zun-service:disable"),
    ("PUT", "/v1/services/force_down", "zun-service:force_down"),
    ("DELETE", "/v1/services", "zun-service:delete"),
    ("GET", "/v1/images", "image:get_all"),
    ("GET", f"/v1/images/{uuid.uuid4()}", "image:get_one"),
    ("DELETE", f"/v1/images/{uuid.uuid4()}", "image:delete"),
    ("POST", "/v1/images", "image:pull"),
    ("PUT", f"/v1/quotas/{PROJECT}", "quota:update"),
    ("DELETE", f"/v1/quotas/{PROJECT}", "quota:delete"),
    ("GET", "/v1/quota_classes/default", "quota_class:get"),
    ("PUT", "/v1/quota_classes/default", "quota_class:update"),
    ("POST", "/v1/networks", "network:create"),
    ("DELETE", "/v1/networks/nonet", "network:delete"),
    ("GET", "/v1/containers?all_projects=1", "container:get_all_all_projects"),
    ("GET", f"/v1/containers/{uuid.uuid4()}?all_projects=1", "container:get_one_all_projects"),
    ("DELETE", f"/v1/containers/{uuid.uuid4()}?all_projects=1",
     "container:delete_all_projects"),
    ("GET", "/v1/capsules?all_projects=1", "capsule:get_all_all_projects"),
    ("GET", f"/v1/capsules/{uuid.uuid4()}?all_projects=1", "capsule:get_one_all_projects"),
    ("DELETE", f"/v1/capsules/{uuid.uuid4()}?all_projects=1", "capsule:delete_all_projects"),
    ("GET", "/v1/registries?all_projects=1", "registry:get_all_all_projects"),
    ("GET", "/v1/containers?host=x", "container:get_one:host"),
]

#: Create bodies a member may not send (container:create:* rules).
ADMIN_ONLY_FIELDS = [
    ({"privileged": False}, "container:create:privileged"),
    ({"privileged": True}, "container:create:privileged"),
    ({"host": "somewhere"}, "container:create:requested_destination"),
    ({"runtime": "runc"}, "container:create:runtime"),
    ({"image_pull_policy": "always"}, "container:create:image_pull_policy"),
]


def _request(http, method: str, path: str, project: str):  # type: ignore[no-untyped-def]
    body = {"containers": 1} if method == "PUT" else {}
    if path.startswith("/v1/services/"):
        body = {"host": "nohost", "binary": "zun-compute", "forced_down": True}
    if path == "/v1/services":
        path += "?host=nohost&binary=zun-compute"
    return http.request(method, path.replace(PROJECT, project),
                        json=body if method in ("PUT", "POST") else None)


@pytest.mark.parametrize(("method", "path", "rule"), ADMIN_ONLY,
                         ids=[rule for _, _, rule in ADMIN_ONLY])
def test_admin_only_rule_refuses_a_member_and_not_an_admin(
        berth_ks: BerthProcess, keystone, tokens: dict[str, str],  # type: ignore[no-untyped-def]
        method: str, path: str, rule: str) -> None:
    project = keystone.project_ids["berth-alpha"]
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        refused = _request(http, method, path, project)
    assert refused.status_code == 403, refused.text
    error = refused.json()["errors"][0]
    assert error["code"] == "container.policy-not-authorized"
    assert rule in error["title"]
    if method != "GET":
        return    # an admin's change would change the shared berth
    with client(berth_ks, tokens["berth-alpha-admin"]) as http:
        assert _request(http, method, path, project).status_code != 403


@pytest.mark.parametrize(("fields", "rule"), ADMIN_ONLY_FIELDS,
                         ids=[f"{next(iter(f))}={next(iter(f.values()))}"
                              for f, _ in ADMIN_ONLY_FIELDS])
def test_privileged_host_and_runtime_are_admin_only(berth_ks: BerthProcess,
                                                    tokens: dict[str, str],
                                                    fields: dict[str, object],
                                                    rule: str) -> None:
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        response = http.post("/v1/containers", json={"image": TEST_IMAGE, **fields})
    assert response.status_code == 403, response.text
    assert rule in response.json()["errors"][0]["title"]
    with client(berth_ks, tokens["berth-alpha-member"]) as http:
        listed = http.get("/v1/containers").json()["containers"]
    assert not [c for c in listed if c["status"] == "Creating"]   # nothing was made


def _write_policy(path: Path, rules: dict[str, str]) -> None:
    # oslo.policy notices a change by the file's modification time: make sure it moves.
    before = path.stat().st_mtime if path.exists() else 0
    path.write_text(json.dumps(rules))
    if path.stat().st_mtime == before:
        time.sleep(0.01)
        path.write_text(json.dumps(rules) + "\n")


def test_a_policy_file_override_takes_effect_without_a_restart(
        berth_ks: BerthProcess, policy_file: Path, tokens: dict[str, str]) -> None:
    member, reader = tokens["berth-alpha-member"], tokens["berth-alpha-reader"]
    with client(berth_ks, reader) as http:
        assert http.get("/v1/containers").status_code == 200
    # Readers read; only members (and admins) make registries.
    _write_policy(policy_file, {"registry:create": "role:member or rule:context_is_admin",
                                "container:get_all": "role:admin"})

    def reader_refused() -> bool:
        with client(berth_ks, reader) as http:
            return http.get("/v1/containers").status_code == 403

    wait_for(reader_refused, 5, what="the policy file to take effect")
    body = {"registry": {"name": f"pol-{uuid.uuid4().hex[:6]}", "domain": "127.0.0.1:5000",
                         "username": "u", "password": "p"}}
    with client(berth_ks, reader) as http:
        refused = http.post("/v1/registries", json=body)
        assert refused.status_code == 403 and "registry:create" in refused.text
    with client(berth_ks, member) as http:
        made = http.post("/v1/registries", json=body)
        assert made.status_code == 201, made.text
        http.delete(f"/v1/registries/{made.json()['registry']['uuid']}")
        assert http.get("/v1/containers").status_code == 403
    _write_policy(policy_file, {})
    with client(berth_ks, member) as http:
        wait_for(lambda: http.get("/v1/containers").status_code == 200, 5,
                 what="the override to be lifted")


def test_reader_and_member_pass_zuns_owner_rules(berth_ks: BerthProcess, keystone,  # type: ignore[no-untyped-def]
                                                tokens: dict[str, str]) -> None:
    """Zun's defaults know admins and owners only: a reader of the project is an owner
    (narrow it with a policy file, as above)."""
    project = keystone.project_ids["berth-alpha"]
    for user in ("berth-alpha-reader", "berth-alpha-member", "berth-alpha-admin"):
        with client(berth_ks, tokens[user]) as http:
            for path in ("/v1/containers", "/v1/capsules", "/v1/registries",
                         "/v1/availability_zones", f"/v1/quotas/{project}",
                         f"/v1/quotas/{project}/defaults"):
                assert http.get(path).status_code == 200, (user, path)
