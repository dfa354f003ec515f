"""Event-driven state sync on the real Docker engine: a container killed, stopped,
OOM-killed or removed behind berth's back shows it in the API quickly, and the
periodic safety nets (sync_container_state, delete_unused_containers) touch only
this host's rows.

Every status is read from ``GET /v1/containers`` (the list reads only the database;
``GET /v1/containers/<uuid>`` would refresh the row through the agent itself and so
would not show that the event-driven sync did the work). Latency figures are printed
(run with ``-s`` to see them); the assertions only use generous timeouts.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import docker
import docker.errors
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

#: The design goal is 1 s; the assertion is generous so a loaded CI machine passes.
DEADLINE = 5.0


def listed(http: httpx.Client, uuid: str) -> dict[str, Any] | None:
    """The container as ``GET /v1/containers`` shows it (database only), or None."""
    resp = http.get("/v1/containers", params={"limit": 1000})
    resp.raise_for_status()
    for item in resp.json()["containers"]:
        if item["uuid"] == uuid:
            return dict(item)
    return None


def status_of(http: httpx.Client, uuid: str) -> str | None:
    item = listed(http, uuid)
    return None if item is None else str(item["status"])


def wait_status(http: httpx.Client, uuid: str, wanted: str | Callable[[str | None], bool],
                timeout: float, what: str) -> float:
    """Poll the list until the status matches; return the seconds it took."""
    match = wanted if callable(wanted) else (lambda s: s == wanted)
    t0 = time.monotonic()
    wait_for(lambda: match(status_of(http, uuid)), timeout, interval=0.02, what=what)
    return time.monotonic() - t0


class Containers:
    """Creates containers through the API and removes them (API and Docker) afterwards."""

    def __init__(self, proc: BerthProcess, docker_client: docker.DockerClient) -> None:
        self.proc = proc
        self.http = proc.http()
        self.docker = docker_client
        self.made: list[str] = []

    def run(self, command: list[str], **extra: Any) -> str:
        body = {"image": TEST_IMAGE, "command": command, "image_pull_policy": "ifnotpresent",
                **extra}
        resp = self.http.post("/v1/containers", params={"run": "true"}, json=body)
        assert resp.status_code == 202, resp.text
        uuid = str(resp.json()["uuid"])
        self.made.append(uuid)
        wait_status(self.http, uuid, "Running", 60, f"container {uuid} to run")
        return uuid

    def docker_id(self, uuid: str) -> str | None:
        try:
            return str(self.docker.api.inspect_container(f"zun-{uuid}")["Id"])
        except docker.errors.NotFound:
            return None

    def cleanup(self) -> None:
        for uuid in self.made:
            try:
                self.http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
            except httpx.HTTPError:
                pass
        deadline = time.monotonic() + 30
        for uuid in self.made:
            while listed(self.http, uuid) is not None and time.monotonic() < deadline:
                time.sleep(0.1)
            try:
                self.docker.api.remove_container(f"zun-{uuid}", force=True)
            except docker.errors.NotFound:
                pass
        self.http.close()


@pytest.fixture
def containers(berth: BerthProcess, docker_client: docker.DockerClient) -> Iterator[Containers]:
    made = Containers(berth, docker_client)
    yield made
    made.cleanup()


def test_docker_kill_behind_berths_back_shows_stopped_in_the_list(
        containers: Containers) -> None:
    uuid = containers.run(["sleep", "1000"])
    t0 = time.monotonic()
    containers.docker.api.kill(f"zun-{uuid}")
    issued = time.monotonic() - t0
    took = wait_status(containers.http, uuid, "Stopped", DEADLINE, "Stopped after docker kill")
    since_exit = _seconds_since_exit(containers, uuid)
    print(f"\n[latency] docker kill -> Stopped in GET /v1/containers: {issued + took:.3f} s "
          f"(kill call {issued:.3f} s; <= {since_exit:.3f} s after Docker's FinishedAt)")
    item = listed(containers.http, uuid)
    assert item is not None and item["task_state"] is None
    # written from the die event, before Docker answered the inspect
    assert "Docker says its process died (exit 137); status Running -> Stopped" in \
        containers.proc.log_text()


def test_docker_stop_behind_berths_back_shows_stopped_in_the_list(
        containers: Containers) -> None:
    uuid = containers.run(["sleep", "1000"])
    t0 = time.monotonic()
    containers.docker.api.stop(f"zun-{uuid}", timeout=1)   # sleep as PID 1 ignores SIGTERM
    stopped_at = time.monotonic()
    took = wait_status(containers.http, uuid, "Stopped", DEADLINE, "Stopped after docker stop")
    print(f"\n[latency] docker stop returned -> Stopped in the list: {took:.3f} s "
          f"(stop call itself {stopped_at - t0:.3f} s)")


def _seconds_since_exit(containers: Containers, uuid: str) -> float:
    """Now minus the container's FinishedAt as Docker recorded it (same machine clock)."""
    now = dt.datetime.now(dt.UTC)
    state = containers.docker.api.inspect_container(f"zun-{uuid}")["State"]
    finished = dt.datetime.fromisoformat(state["FinishedAt"][:26].rstrip("Z")).replace(
        tzinfo=dt.UTC)
    return (now - finished).total_seconds()


def test_an_oom_kill_shows_stopped_with_the_oom_reason(containers: Containers) -> None:
    # Two seconds of sleep first, so that berth records it Running before the kernel's
    # OOM killer ends it: the Stopped must come from the event path, not from the start.
    uuid = containers.run(["sh", "-c", "sleep 2; exec tail /dev/zero"], memory=8)
    wait_status(containers.http, uuid, "Stopped", 60, "Stopped after the OOM kill")
    since_exit = _seconds_since_exit(containers, uuid)

    def docker_says_oom() -> bool:
        return bool(containers.docker.api.inspect_container(f"zun-{uuid}")["State"]
                    ["OOMKilled"])
    try:
        wait_for(docker_says_oom, DEADLINE, 0.1, what="Docker to record the OOM kill")
    except AssertionError:
        # Seen once in a clean-clone run: Docker's state said OOMKilled false once the
        # row said Stopped. berth reads the reason from that state and cannot give
        # one Docker does not record (docs/testing.md).
        pytest.skip("Docker recorded no OOM kill for this exit within "
                    f"{DEADLINE:.0f} s; nothing of berth's to check")

    def reason() -> str:
        item = listed(containers.http, uuid)
        assert item is not None
        return str(item["status_reason"])
    wait_for(lambda: reason().startswith("OOMKilled"), DEADLINE, 0.1,
             what="the OOMKilled reason in the list")
    print(f"\n[latency] OOM kill (Docker's FinishedAt) -> Stopped in the list: "
          f"<= {since_exit:.3f} s")


def test_docker_rm_behind_berths_back_shows_error_no_such_container(
        containers: Containers) -> None:
    uuid = containers.run(["sleep", "1000"])
    old_id = containers.docker_id(uuid)
    t0 = time.monotonic()
    containers.docker.api.remove_container(f"zun-{uuid}", force=True)
    took = wait_status(containers.http, uuid, "Error", DEADLINE, "Error after docker rm -f")
    item = listed(containers.http, uuid)
    assert item is not None
    assert item["status_reason"].startswith(f"No such container: {old_id} in docker")
    print(f"\n[latency] docker rm -f -> Error in the list: {time.monotonic() - t0:.3f} s "
          f"(poll {took:.3f} s)")


def test_an_auto_remove_container_that_docker_removed_is_marked_deleted(
        containers: Containers) -> None:
    uuid = containers.run(["sleep", "1000"], auto_remove=True)
    containers.docker.api.kill(f"zun-{uuid}")            # Docker removes it on exit
    wait_for(lambda: containers.docker_id(uuid) is None, 10, what="Docker to remove it")
    wait_status(containers.http, uuid, lambda s: s in ("Deleted", None), DEADLINE,
                "Deleted after Docker's auto-remove")


def test_an_auto_heal_container_removed_behind_berths_back_is_rebuilt_and_running(
        containers: Containers) -> None:
    uuid = containers.run(["sleep", "1000"], auto_heal=True)
    old_id = containers.docker_id(uuid)
    assert old_id is not None
    t0 = time.monotonic()
    containers.docker.api.remove_container(f"zun-{uuid}", force=True)

    def running_again() -> str | None:
        new_id = containers.docker_id(uuid)
        if new_id is None or new_id == old_id:
            return None
        state = containers.docker.api.inspect_container(new_id)["State"]
        return new_id if state["Running"] and status_of(containers.http, uuid) == "Running" \
            else None

    new_id = wait_for(running_again, 30, interval=0.05, what="the rebuilt container to run")
    print(f"\n[latency] docker rm -f of an auto_heal container -> rebuilt and Running: "
          f"{time.monotonic() - t0:.3f} s")
    assert new_id != old_id
    item = listed(containers.http, uuid)
    assert item is not None and item["status_reason"] is None
    acts = containers.http.get(f"/v1/containers/{uuid}/container_actions").json()
    assert "rebuild" in [a["action"] for a in acts["containerActions"]]


def _insert_other_host_rows(proc: BerthProcess, count: int) -> list[str]:
    from berth.db import containers as rows
    from berth.db.engine import Database

    db = Database(f"sqlite:///{proc.dir / 'state' / 'berth.sqlite'}")
    try:
        made = [rows.create(db, {"project_id": "admin", "user_id": "admin",
                                 "status": "Running", "host": "other-host",
                                 "container_id": f"{i:064x}", "image": TEST_IMAGE,
                                 "auto_remove": i == 0, "auto_heal": i == 1})
                for i in range(count)]
        return [m.uuid for m in made]
    finally:
        db.dispose()


def _other_rows(proc: BerthProcess, uuids: list[str]) -> list[tuple[Any, ...]]:
    from berth.db import containers as rows
    from berth.db.engine import Database

    db = Database(f"sqlite:///{proc.dir / 'state' / 'berth.sqlite'}")
    try:
        found = [rows.get_by_uuid(db, u) for u in uuids]
        return [(r.status, r.status_reason, r.host, r.updated_at) for r in found]
    finally:
        db.dispose()


_ROWS_READ = re.compile(r"sync_container_state on (\S+): (\d+) rows read")


def test_the_periodic_safety_nets_read_and_touch_only_this_hosts_rows(
        berth_factory: Callable[..., BerthProcess], docker_client: docker.DockerClient) -> None:
    proc = berth_factory("[DEFAULT]\ndebug = true\nsync_container_state_interval = 1\n"
                         "periodic_interval_max = 2\n").start()
    made = Containers(proc, docker_client)
    try:
        kept = made.run(["sleep", "1000"])
        doomed = made.run(["sleep", "1000"], auto_remove=True)
        others = _insert_other_host_rows(proc, 3)
        before = _other_rows(proc, others)

        # delete_unused_containers: Docker removes the auto_remove container, the event
        # path marks it Deleted, the cleanup removes its row (this host's row only).
        docker_client.api.kill(f"zun-{doomed}")
        wait_for(lambda: listed(made.http, doomed) is None, 20,
                 what="delete_unused_containers to remove the Deleted auto_remove row")
        mark = len(proc.log_text())

        def two_runs_after_mark() -> list[int]:
            found = [(h, int(n)) for h, n in _ROWS_READ.findall(proc.log_text()[mark:])]
            return [n for h, n in found if h == proc.host] if len(found) >= 2 else []

        counts = wait_for(two_runs_after_mark, 20, what="two sync_container_state runs")
        assert counts[:2] == [1, 1], counts      # only `kept`: never other-host's rows
        assert _other_rows(proc, others) == before
        assert status_of(made.http, kept) == "Running"
    finally:
        made.cleanup()


def test_a_container_whose_row_is_gone_is_removed_but_another_hosts_is_not(
        berth_factory: Callable[..., BerthProcess], docker_client: docker.DockerClient) -> None:
    """What a forced delete leaves when Docker does not answer in time (it drops the
    row and goes on): a running container no row accounts for. The periodic sync
    removes it; an unknown container labelled for another host (another berth
    sharing the engine) is not its business."""
    from berth.runtime import base as rt

    proc = berth_factory("[DEFAULT]\ndebug = true\nsync_container_state_interval = 1\n"
                         "periodic_interval_max = 2\n").start()
    made = Containers(proc, docker_client)
    foreign = docker_client.containers.run(
        TEST_IMAGE, ["sleep", "1000"], detach=True, name=f"foreign-{proc.host}",
        labels={rt.LABEL_UUID: "7d4c2f0e-3b1a-4c5d-9e8f-0a1b2c3d4e5f",
                rt.LABEL_HOST: f"other-of-{proc.host}"})
    try:
        gone = made.run(["sleep", "1000"])
        kept = made.run(["sleep", "1000"])
        _drop_row(proc, gone)
        wait_for(lambda: made.docker_id(gone) is None, 20,
                 what="the periodic sync to remove the container whose row is gone")
        assert "without a row removed" in proc.log_text()
        mark = len(proc.log_text())
        wait_for(lambda: len(_ROWS_READ.findall(proc.log_text()[mark:])) >= 2, 20,
                 what="two more sync_container_state runs")
        foreign.reload()
        assert foreign.status == "running"
        assert made.docker_id(kept) is not None and status_of(made.http, kept) == "Running"
    finally:
        foreign.remove(force=True)
        made.cleanup()


def _drop_row(proc: BerthProcess, uuid: str) -> None:
    from berth.db import containers as rows
    from berth.db.engine import Database

    db = Database(f"sqlite:///{proc.dir / 'state' / 'berth.sqlite'}")
    try:
        rows.destroy(db, uuid)
    finally:
        db.dispose()
