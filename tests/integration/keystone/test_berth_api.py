"""``berth-api`` with Keystone in a deployment (RabbitMQ, PostgreSQL, a ``berth-compute``
agent): the caller Keystone names is the one the agent records, across RPC."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support import keystone as ks
from support.berth_proc import wait_for

from .conftest import IMAGE


@pytest.fixture(scope="module")
def keystone_api(keystone: ks.Keystone, deployment_factory: Any,
                 database_maker: Any) -> Iterator[tuple[Any, str]]:
    with database_maker("postgresql") as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, done.stderr
            d.start_agent("a")
            _, api_url = d.start_another_api(
                "keystone-api", extra_conf="[api]\nauth_strategy = keystone\n"
                                           + ks.authtoken_conf())
            yield d, api_url
        finally:
            d.close()


def test_berth_api_validates_tokens_and_its_agent_records_the_caller(
        keystone_api: tuple[Any, str], keystone: ks.Keystone,
        tokens: dict[str, str]) -> None:
    import httpx

    _, url = keystone_api
    headers = {"OpenStack-API-Version": "container 1.40"}
    assert httpx.get(f"{url}/v1/containers", headers=headers, timeout=30).status_code == 401
    member = httpx.Client(base_url=url, timeout=90, headers={
        **headers, "X-Auth-Token": tokens["berth-beta-member"]})
    admin = httpx.Client(base_url=url, timeout=90, headers={
        **headers, "X-Auth-Token": tokens["berth-alpha-admin"]})
    with member, admin:
        assert member.get("/v1/services").status_code == 403
        assert [s["binary"] for s in admin.get("/v1/services").json()["services"]] \
            == ["zun-compute"]
        made = member.post("/v1/containers?run=true", json={
            "image": IMAGE, "command": ["sleep", "600"]})
        assert made.status_code == 202, made.text
        uuid = made.json()["uuid"]

        def status() -> str:
            return str(member.get(f"/v1/containers/{uuid}").json()["status"])

        wait_for(lambda: status() in ("Running", "Error"), 90, what="the container to run")
        assert status() == "Running", member.get(f"/v1/containers/{uuid}").json()
        actions = member.get(f"/v1/containers/{uuid}/container_actions").json()
        create = actions["containerActions"][0]
        assert create["user_id"] == keystone.user_ids["berth-beta-member"]
        assert create["project_id"] == keystone.project_ids["berth-beta"]
        events = member.get(f"/v1/containers/{uuid}/container_actions/"
                            f"{create['request_id']}").json()["events"]
        assert events and all(e["result"] == "Success" for e in events)   # by the agent
        assert member.delete(f"/v1/containers/{uuid}", params={"stop": "true"}
                             ).status_code == 204
        wait_for(lambda: member.get(f"/v1/containers/{uuid}").status_code == 404, 90,
                 what="the container to be deleted")
