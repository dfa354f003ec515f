"""SIGKILL of ``berth serve`` in the middle of a capsule's create and of its delete
(issues 17 and 19), on both capsule drivers: after a restart on the same state nothing
of the capsule is stuck or orphaned: nothing in the engine (Docker containers, or
containerd's pods) without a live row, no row in a task, no claim or Placement
allocation that no row holds. (``cri/test_cri_recovery.py`` adds the sweep of
orphan pods and the pod network's registry.)"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import docker
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

pytestmark = pytest.mark.functional

LATEST = {"OpenStack-API-Version": "container 1.40"}
QUICK_STOP = "trap 'exit 0' TERM; sleep 300 & wait"


def template(init_seconds: float) -> dict[str, Any]:
    def member(name: str, command: list[str]) -> dict[str, Any]:
        return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
                "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 16}}}
    return {"kind": "capsule", "metadata": {"name": f"crash-{time.monotonic_ns()}"},
            "spec": {"initContainers": [member("slow", ["sleep", str(init_seconds)])],
                     "containers": [member("app", ["sh", "-c", QUICK_STOP])]}}


class Engine:
    """The engine behind the berths a test starts: its configuration lines and what it
    holds of a host (Docker's containers, or containerd's pods and their members)."""

    def __init__(self, conf: str, held: Callable[[str], list[Any]]) -> None:
        self.conf = conf
        self.held = held


@pytest.fixture(params=["docker", "cri"])
def engine(request: pytest.FixtureRequest, docker_client: docker.DockerClient
           ) -> Iterator[Engine]:
    if request.param == "docker":
        yield Engine("", lambda host: docker_client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"berth.host={host}"}))
        return
    from support.containerd import CGROUP_PARENT, SOCKET

    from berth.runtime.cri.client import CriRuntime

    pods = CriRuntime(SOCKET, 30.0, CGROUP_PARENT, "/nonexistent")
    hosts: set[str] = set()

    def held(host: str) -> list[Any]:
        hosts.add(host)
        found: list[Any] = pods.pods(host)
        return found + [m for p in found for m in pods.members(p.id)]

    yield Engine(request.getfixturevalue("cri_conf"), held)
    for host in hosts:              # whatever a failed test left
        for pod in pods.pods(host):
            pods.stop_pod(pod.id)
            pods.remove_pod(pod.id, pod.uuid)
    pods.close()


def restarted(factory: Callable[..., BerthProcess], proc: BerthProcess,
              engine: Engine) -> BerthProcess:
    return factory(engine.conf, host=proc.host, state_dir=str(proc.dir)).start()


def allocations(proc: BerthProcess) -> int:
    with proc.http() as http:
        return int(http.get("/v1/hosts").json()["hosts"][0]["mem_used"])


def test_a_capsule_create_killed_half_way_ends_in_error_with_nothing_left(
        berth_factory: Callable[..., BerthProcess], engine: Engine) -> None:
    proc = berth_factory(engine.conf).start()
    with proc.http() as http:
        uuid = http.post("/v1/capsules/", json={"template": template(30)},
                         headers=LATEST).json()["uuid"]
        # The init container runs: the sandbox (pod) and it exist in the engine, the
        # task is set.
        wait_for(lambda: len(engine.held(proc.host)) >= 2, 30,
                 what="the sandbox and the init container")
    proc.kill()
    again = restarted(berth_factory, proc, engine)
    with again.http() as http:
        shown = http.get(f"/v1/capsules/{uuid}", headers=LATEST).json()
        assert shown["status"] == "Error" and "failed to create" in shown["status_reason"]
        assert {m["status"] for m in shown["init_containers"] + shown["containers"]} == \
            {"Error"}
        assert engine.held(again.host) == []
        assert allocations(again) == 0
        assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 30,
                 what="the failed capsule to be deleted")


def test_a_capsule_delete_killed_half_way_is_finished_at_restart(
        berth_factory: Callable[..., BerthProcess], engine: Engine) -> None:
    proc = berth_factory(engine.conf).start()
    with proc.http() as http:
        uuid = http.post("/v1/capsules/", json={"template": template(0)},
                         headers=LATEST).json()["uuid"]
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}", headers=LATEST)
                 .json()["status"] == "Running", 60, what="the capsule to run")
        assert allocations(proc) > 0
        # Deleting as the API left it, with the agent gone before it could act.
        proc.kill()
    from berth.db import containers
    from berth.db.engine import Database
    db = Database(f"sqlite:///{proc.dir / 'state' / 'berth.sqlite'}")
    containers.update_(db, uuid, {"status": "Deleting"})
    db.dispose()
    again = restarted(berth_factory, proc, engine)
    with again.http() as http:
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 30,
                 what="the interrupted delete to be finished")
    assert engine.held(again.host) == []
    assert allocations(again) == 0
