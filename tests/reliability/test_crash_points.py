"""R1, crash points (issue 21): ``berth serve`` killed with SIGKILL at a random moment
of a load of creates, deletes, rebuilds, resizes, stops and starts, and capsule creates
and deletes (a capsule: an init container, then two containers), then started again
on the same state: recovery must leave nothing behind (``checker.problems``) and every
request it had accepted either done or in Error saying why. Short: 6 kills; full
(BERTH_RELIABILITY_FULL=1): 100. Some creates mount a new volume or a shared named
one, so kills land in attaches and detaches too."""

from __future__ import annotations

import random
import threading
import time
from typing import Any

import httpx
import pytest
from reliability.checker import problems
from reliability.conftest import scale
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.lifecycle import database_of

pytestmark = pytest.mark.reliability

COMMAND = ["sh", "-c", "trap 'exit 0' TERM; sleep 6000 & wait"]
#: What a create mounts: nothing, a new volume, a volume several containers share.
MOUNTS: list[list[dict[str, Any]]] = [
    [], [], [{"size": 1, "destination": "/scratch"}],
    [{"source": "r1-shared", "destination": "/shared"}]]


def create(http: httpx.Client, run: bool = True,
           mounts: list[dict[str, Any]] | None = None) -> str | None:
    resp = http.post("/v1/containers", params={"run": str(run).lower()}, json={
        "image": TEST_IMAGE, "command": COMMAND, "memory": 16, "cpu": 0.1,
        "image_pull_policy": "ifnotpresent", "mounts": mounts or []})
    return str(resp.json()["uuid"]) if resp.status_code == 202 else None


def create_capsule(http: httpx.Client) -> None:
    def member(name: str, command: list[str]) -> dict[str, Any]:
        return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
                "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 16}}}
    template = {"kind": "capsule", "metadata": {"name": f"r1-{time.monotonic_ns()}"},
                "spec": {"initContainers": [member("init", ["sleep", "0.5"])],
                         "containers": [member("a", COMMAND), member("b", COMMAND)]}}
    answer = http.post("/v1/capsules/", json={"template": template})
    assert answer.status_code < 500 or "agent" in answer.text, answer.text


def capsule_uuids(http: httpx.Client) -> list[str]:
    return [c["uuid"] for c in http.get("/v1/capsules/").json()["capsules"]]


def load(proc: BerthProcess, rng: random.Random, stop: threading.Event) -> None:
    """Random requests until ``stop`` or the process dies; errors are expected (the
    process is killed under them), 5xx answers are not (asserted by the caller)."""
    with proc.http() as http:
        while not stop.is_set():
            try:
                uuids = [c["uuid"] for c in http.get("/v1/containers").json()["containers"]]
                op = rng.choice(["create", "create", "delete", "rebuild", "resize",
                                 "stop", "start", "capsule", "capsule_delete"])
                if op == "capsule":
                    create_capsule(http)
                    continue
                if op == "capsule_delete":
                    capsules = capsule_uuids(http)
                    if capsules:
                        answer = http.delete(f"/v1/capsules/{rng.choice(capsules)}")
                        assert answer.status_code < 500 or "agent" in answer.text, \
                            answer.text
                    continue
                if op == "create" or not uuids:
                    create(http, run=rng.random() < 0.7, mounts=rng.choice(MOUNTS))
                    continue
                uuid = rng.choice(uuids)
                if op == "delete":
                    answer = http.delete(f"/v1/containers/{uuid}",
                                         params={"force": "true", "stop": "true"})
                elif op == "resize":
                    answer = http.patch(f"/v1/containers/{uuid}",
                                        json={"memory": rng.choice([16, 24, 32])})
                else:
                    answer = http.post(f"/v1/containers/{uuid}/{op}")
                assert answer.status_code < 500 or "agent" in answer.text, answer.text
            except httpx.HTTPError:
                return          # killed


def settled(proc: BerthProcess) -> bool:
    with proc.http() as http:
        rows = http.get("/v1/containers").json()["containers"]
        capsules = http.get("/v1/capsules/").json()["capsules"]
    busy = ("Creating", "Deleting", "Rebuilding", "Restarting")
    return all(not c["task_state"] and c["status"] not in busy for c in rows) and \
        all(c["status"] not in busy for c in capsules)


def test_recovery_after_sigkill_at_random_moments(berth_on, node_engine,  # type: ignore[no-untyped-def]
                                                  engine_client) -> None:
    kills = scale(6, 100)
    rng = random.Random(21)
    first = berth_on("[DEFAULT]\nsync_container_state_interval = 5\n")
    conf_extra = first.conf.read_text()
    with first.http() as http:
        for _ in range(4):
            create(http)
    report: list[tuple[int, int]] = []
    started: list[BerthProcess] = []
    try:
        _kill_and_recover(first, kills, rng, conf_extra, engine_client, report, started)
    finally:
        for later in started:
            later.stop()
    print(f"R1: {kills} SIGKILLs under load; (containers, capsules) after each: {report}")


def _kill_and_recover(proc: Any, kills: int, rng: random.Random, conf_extra: str,
                      engine_client: Any, report: list[tuple[int, int]],
                      started: list[BerthProcess]) -> None:
    host, state_dir = proc.host, str(proc.dir)
    for i in range(kills):
        stop = threading.Event()
        worker = threading.Thread(target=load, args=(proc, rng, stop))
        worker.start()
        time.sleep(rng.uniform(0.2, 2.5))
        proc.kill()
        stop.set()
        worker.join(30)
        proc = BerthProcess(host=host, state_dir=state_dir)
        proc.conf.write_text(_same_conf_new_ports(conf_extra, proc))
        started.append(proc.start())
        wait_for(lambda p=proc: settled(p), 120, 0.5, what=f"rows settled after kill {i + 1}")
        time.sleep(1.0)          # one more sync period over the settled rows
        with database_of(proc) as db, proc.http() as http:
            found = problems(db, host, engine_client, http,
                             volume_dir=str(proc.dir / "state" / "mnt"),
                             cni_state=str(proc.dir / "state" / "cni"))
            report.append((len(http.get("/v1/containers").json()["containers"]),
                           len(capsule_uuids(http))))
        assert found == [], (i + 1, found)


def _same_conf_new_ports(conf: str, proc: BerthProcess) -> str:
    """The first process's config with this process's API and console ports."""
    out = []
    for line in conf.splitlines():
        if line.startswith("port = "):
            line = f"port = {proc.port}"
        elif line.startswith("wsproxy_port = "):
            line = f"wsproxy_port = {proc.wsport}"
        out.append(line)
    return "\n".join(out) + "\n"
