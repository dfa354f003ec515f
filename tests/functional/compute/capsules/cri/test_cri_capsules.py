"""Capsules with ``capsule_driver = cri`` on a real containerd (issue 19), end to end
through ``berth serve``'s API: members sharing localhost after their init
containers, a failing init container, a member that exits, deletes that leave
nothing in containerd or on the node, a containerd restart under a running capsule,
and the start-up refusals of a bad socket."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid as uuidlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.containerd import ROOT, STATE, left_in_containerd

from berth.runtime import base as rt
from berth.runtime.cri.client import CriRuntime

pytestmark = pytest.mark.functional

SETTLE = 60.0
LATEST = "container 1.40"
QUICK_STOP = ["sh", "-c", 'trap "exit 0" TERM; sleep 300 & wait']
SERVE = "echo served-by-web > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"
PROBE = ("until wget -qO- http://127.0.0.1:8080/index.html; do sleep 0.1; done; "
         'trap "exit 0" TERM; sleep 300 & wait')


def member(name: str, command: list[str]) -> dict[str, Any]:
    return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
            "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 32}}}


def template(containers: list[dict[str, Any]], inits: list[dict[str, Any]] | None = None,
             **spec: Any) -> dict[str, Any]:
    return {"kind": "capsule", "capsuleVersion": "beta",
            "metadata": {"name": f"cri-{uuidlib.uuid4().hex[:8]}"},
            "spec": {"containers": containers, "initContainers": inits or [], **spec}}


def create(berth: BerthProcess, tpl: dict[str, Any]) -> str:
    with berth.http(version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={"template": tpl})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["uuid"])


def show(berth: BerthProcess, uuid: str) -> dict[str, Any] | None:
    with berth.http(version=LATEST) as http:
        resp = http.get(f"/v1/capsules/{uuid}")
    if resp.status_code == 404:
        return None
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def settled(berth: BerthProcess, uuid: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        shown = show(berth, uuid)
        assert shown is not None
        return shown if shown["status"] != "Creating" else None
    found = wait_for(done, SETTLE, 0.1, what=f"capsule {uuid} to settle")
    assert isinstance(found, dict)
    return found


def delete(berth: BerthProcess, uuid: str) -> None:
    with berth.http() as http:
        assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
    wait_for(lambda: show(berth, uuid) is None, SETTLE, 0.1, what=f"{uuid} deleted")


def mem_used(berth: BerthProcess) -> int:
    with berth.http() as http:
        return int(http.get("/v1/hosts").json()["hosts"][0]["mem_used"])


def settled_mem_used(berth: BerthProcess) -> int:
    """The host's published memory use once it stops moving (a delete just before
    publishes its release a moment later)."""
    seen: list[int] = []

    def steady() -> bool:
        seen.append(mem_used(berth))
        return len(seen) > 1 and seen[-1] == seen[-2]
    wait_for(steady, 20, 0.5, what="the host's usage to settle")
    return seen[-1]


def test_members_share_localhost_after_their_init_container_and_delete_leaves_nothing(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    tpl = template([member("web", ["sh", "-c", SERVE]), member("probe", ["sh", "-c", PROBE])],
                   inits=[member("prepare", ["sh", "-c", "sleep 0.3; echo prepared"])])
    uuid = create(cri_berth, tpl)
    shown = settled(cri_berth, uuid)
    assert shown["status"] == "Running", shown["status_reason"]
    assert [m["status"] for m in shown["init_containers"]] == ["Stopped"]
    assert {m["status"] for m in shown["containers"]} == {"Running"}

    (pod,) = [p for p in pods.pods(cri_berth.host) if p.uuid == uuid]
    assert pod.ready
    by_uuid = {c.uuid: c for c in pods.members(pod.id)}
    for m in shown["init_containers"] + shown["containers"]:
        assert by_uuid[m["uuid"]].id, m      # every member is a CRI container of the pod
    init = pods.member(by_uuid[shown["init_containers"][0]["uuid"]].id)
    assert init.state is not None and init.state.exit_code == 0
    assert all(init.state.finished_at is not None and seen.state is not None
               for seen in by_uuid.values())
    for m in shown["containers"]:
        started = pods.member(by_uuid[m["uuid"]].id).state
        assert started is not None and started.started_at is not None
        assert init.state.finished_at <= started.started_at      # after the init container

    probe = next(m for m in shown["containers"] if m["name"].endswith("-probe"))
    log = Path(pods.log_root / uuid / f"{probe['uuid']}.log")
    wait_for(lambda: log.exists() and "served-by-web" in log.read_text(), 10,
             what="the probe to fetch the page over 127.0.0.1")

    delete(cri_berth, uuid)
    assert left_in_containerd(pods, cri_berth.host, uuid) == []


def test_a_failing_init_container_is_error_naming_it_with_nothing_left(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    before = settled_mem_used(cri_berth)
    uuid = create(cri_berth, template(
        [member("app", QUICK_STOP)],
        inits=[member("migrate", ["sh", "-c", "echo no database; exit 3"])]))
    shown = settled(cri_berth, uuid)
    assert shown["status"] == "Error"
    assert "migrate" in shown["status_reason"] and "exit 3" in shown["status_reason"]
    assert {m["status"] for m in shown["containers"] + shown["init_containers"]} == {"Error"}
    assert left_in_containerd(pods, cri_berth.host, uuid) == []
    wait_for(lambda: mem_used(cri_berth) == before, 10, what="the claim to be released")
    delete(cri_berth, uuid)


def test_a_member_that_exits_non_zero_puts_its_capsule_in_error(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    uuid = create(cri_berth, template([member("a", QUICK_STOP),
                                       member("b", ["sh", "-c", "sleep 3; exit 4"])],
                                      restartPolicy="Never"))
    # Running first (b exits 3 s after its start, well after the create's end)...
    assert settled(cri_berth, uuid)["status"] == "Running"

    def failed() -> dict[str, Any] | None:
        shown = show(cri_berth, uuid)
        return shown if shown is not None and shown["status"] == "Error" else None
    # ... then Error, from the relist of the members' states.
    shown = wait_for(failed, 15, 0.1, what="the capsule to follow its member's exit")
    assert isinstance(shown, dict)
    assert "-b" in shown["status_reason"] and "(4)" in shown["status_reason"]
    states = {m["name"].rsplit("-", 1)[-1]: m["status"] for m in shown["containers"]}
    assert states == {"a": "Running", "b": "Stopped"}
    delete(cri_berth, uuid)
    assert left_in_containerd(pods, cri_berth.host, uuid) == []


@pytest.mark.parametrize("socket,words", [
    ("/nonexistent/containerd.sock", "no containerd socket at"),
    ("FILE", "containerd does not answer"),
])
def test_a_containerd_socket_that_does_not_answer_stops_the_start_saying_so(
        berth_factory: Callable[..., BerthProcess], tmp_path: Path, socket: str, words: str) -> None:
    if socket == "FILE":
        socket = str(tmp_path / "not-a-socket")
        Path(socket).write_text("")
    proc = berth_factory(f"[DEFAULT]\ncapsule_driver = cri\n[cri]\ncontainerd_socket = "
                         f"{socket}\nrequest_timeout = 2\n")
    with pytest.raises(AssertionError, match="berth serve exited"):
        proc.start(timeout=30)
    assert words in proc.log_text() and "[cri]containerd_socket" in proc.log_text()


def test_the_member_rows_name_their_cri_containers(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    uuid = create(cri_berth, template([member("only", QUICK_STOP)]))
    assert settled(cri_berth, uuid)["status"] == "Running"
    from berth.db import capsules, containers
    from berth.db.engine import Database, default_url

    db = Database(default_url(str(cri_berth.dir / "state")))
    try:
        row = containers.get_by_uuid(db, uuid)
        _, members = capsules.members_of(db, row.id)
        assert pods.pod_ready(row.container_id or "")
        seen = pods.member(members[0].container_id or "")
        assert seen.uuid == members[0].uuid and seen.state is not None
        assert seen.state.status == rt.RunState.RUNNING
    finally:
        db.dispose()
    delete(cri_berth, uuid)


def test_a_running_capsule_survives_a_containerd_restart(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    uuid = create(cri_berth, template([member("steady", QUICK_STOP)]))
    before = settled(cri_berth, uuid)
    assert before["status"] == "Running" and before["addresses"], before
    pidfile = Path(STATE) / "containerd.pid"
    assert pidfile.exists(), f"this containerd was not started by ci-services ({pidfile})"
    pid = int(pidfile.read_text())
    os.kill(pid, signal.SIGTERM)
    wait_for(lambda: not Path(f"/proc/{pid}").exists()
             or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2], 30,
             what="containerd to stop")
    subprocess.run(["bash", str(ROOT / ".ci/ci-services.sh"), "start", "containerd"],
                   check=True, capture_output=True, timeout=120)
    (pod,) = wait_for(lambda: [p for p in pods.pods(cri_berth.host) if p.uuid == uuid], 30,
                      what="the pod listed again")   # type: ignore[misc]
    assert pod.ready
    time.sleep(2.5)                                     # two relists at least
    shown = show(cri_berth, uuid)
    assert shown is not None and shown["status"] == "Running", shown
    assert {m["status"] for m in shown["containers"]} == {"Running"}
    assert shown["addresses"] == before["addresses"]     # the pod kept its network
    delete(cri_berth, uuid)
    assert left_in_containerd(pods, cri_berth.host, uuid) == []
