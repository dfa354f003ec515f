"""Members' restart policies, on both capsule drivers: Docker's restart policy with
``docker``, berth's restarts with back-off (``capsules.cri.restarts``) with ``cri``.
Always restarts any exit, OnFailure a non-zero one, Never none (the capsule in Error:
``test_cri_capsules``, ``api/test_capsules``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import docker
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

from berth.compute.capsules.cri.restarts import ATTEMPT

pytestmark = pytest.mark.functional

LATEST = "container 1.40"
QUICK_STOP = ["sh", "-c", 'trap "exit 0" TERM; sleep 300 & wait']
Restarts = Callable[[dict[str, Any]], int]


def member(name: str, command: list[str]) -> dict[str, Any]:
    return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
            "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 32}}}


@pytest.fixture(params=["docker", "cri"])
def engine(request: pytest.FixtureRequest, docker_client: docker.DockerClient
           ) -> Iterator[tuple[BerthProcess, Restarts]]:
    """A berth of either driver, and how many times the engine restarted a member."""
    if request.param == "docker":
        def docker_restarts(m: dict[str, Any]) -> int:
            return int(docker_client.api.inspect_container(f"zun-{m['uuid']}")["RestartCount"])
        yield request.getfixturevalue("berth"), docker_restarts
        return
    cri_berth, pods = request.getfixturevalue("cri_berth"), request.getfixturevalue("pods")

    def cri_restarts(m: dict[str, Any]) -> int:
        attempts = [int(c.labels.get(ATTEMPT) or 0) for p in pods.pods(cri_berth.host)
                    for c in pods.members(p.id) if c.uuid == m["uuid"]]
        return max(attempts, default=0)
    yield cri_berth, cri_restarts


def run(berth: BerthProcess, policy: str, exits: str) -> dict[str, Any]:
    tpl = {"kind": "capsule", "metadata": {"name": f"restart-{policy.lower()}"},
           "spec": {"restartPolicy": policy, "containers": [
               member("steady", QUICK_STOP),
               member("exits", ["sh", "-c", f"echo started; sleep 1; exit {exits}"])]}}
    with berth.http(version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 202, resp.text
    return dict(resp.json())


def show(berth: BerthProcess, uuid: str) -> dict[str, Any]:
    with berth.http(version=LATEST) as http:
        resp = http.get(f"/v1/capsules/{uuid}")
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def delete(berth: BerthProcess, uuid: str) -> None:
    with berth.http() as http:
        assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 60, 0.2,
                 what=f"capsule {uuid} deleted")


def exiting(shown: dict[str, Any]) -> dict[str, Any]:
    return dict(next(m for m in shown["containers"] if m["name"].endswith("-exits")))


@pytest.mark.parametrize("policy,code", [("OnFailure", 3), ("Always", 0), ("Always", 5)])
def test_a_member_its_policy_restarts_is_restarted_and_the_capsule_stays_up(
        engine: tuple[BerthProcess, Restarts], policy: str, code: int) -> None:
    berth, restarts = engine
    uuid = run(berth, policy, str(code))["uuid"]
    try:
        wait_for(lambda: show(berth, uuid)["status"] != "Creating", 60, 0.2,
                 what="the capsule to be created")
        target = exiting(show(berth, uuid))
        wait_for(lambda: restarts(target) >= 2, 60, 0.2, what="two restarts of the member")

        def up() -> dict[str, Any] | None:
            shown = show(berth, uuid)
            return shown if shown["status"] in ("Running", "Restarting") else None
        shown = wait_for(up, 30, 0.2, what="the capsule Running or Restarting")
        assert isinstance(shown, dict) and "Error" not in str(shown["status_reason"])
    finally:
        delete(berth, uuid)


def test_on_failure_leaves_a_member_that_exits_0_stopped(
        engine: tuple[BerthProcess, Restarts]) -> None:
    berth, restarts = engine
    uuid = run(berth, "OnFailure", "0")["uuid"]
    try:
        def stopped() -> dict[str, Any] | None:
            shown = show(berth, uuid)
            return shown if exiting(shown)["status"] == "Stopped" else None
        shown = wait_for(stopped, 60, 0.2, what="the member that exits 0 to show Stopped")
        assert isinstance(shown, dict)
        assert shown["status"] == "Running"       # the other member runs on
        assert restarts(exiting(shown)) == 0
    finally:
        delete(berth, uuid)
