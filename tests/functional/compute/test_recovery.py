"""Crash recovery and dead hosts, on the real Docker engine.

The agent is killed with SIGKILL in the middle of creates and of deletes, at several
points, and restarted on the same host and state directory: start-up recovery must
leave no row stuck (Creating, or with a task), no Docker container without its row,
and no leaked claim or Placement allocation. A host whose agent is down refuses
actions with 409 ContainerHostNotUp, names the host, and still shows its containers.
"""

from __future__ import annotations

import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from typing import Any

import docker
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

HOLDING_NOTHING = ("Error", "Deleted")


@contextmanager
def database(proc: BerthProcess) -> Iterator[sqlite3.Connection]:
    """berth's own SQLite file (WAL: reading beside the running process is safe)."""
    with closing(sqlite3.connect(proc.dir / "state" / "berth.sqlite", timeout=30)) as con:
        con.row_factory = sqlite3.Row
        yield con


def rows_of(proc: BerthProcess) -> list[sqlite3.Row]:
    with database(proc) as con:
        return con.execute("SELECT uuid, status, task_state, container_id, cpu, host, "
                           "status_reason FROM container").fetchall()


def engine_containers(host: str) -> dict[str, dict[str, Any]]:
    """This host's Docker containers: id -> labels."""
    client = docker.from_env()
    try:
        return {c.id: c.labels for c in client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"berth.host={host}"})}
    finally:
        client.close()


def assert_recovered(proc: BerthProcess) -> None:
    """The invariants of a recovered host (see the module docstring)."""
    rows = rows_of(proc)
    stuck = [dict(r) for r in rows if r["status"] in ("Creating", "Deleting") or r["task_state"]]
    assert not stuck, f"rows left stuck after recovery: {stuck}"

    engine = engine_containers(proc.host)
    referenced = {r["container_id"] for r in rows if r["container_id"]}
    orphans = {cid[:12]: labels.get("berth.container.uuid")
               for cid, labels in engine.items() if cid not in referenced}
    assert not orphans, f"Docker containers that no row refers to: {orphans}"
    missing = [dict(r) for r in rows if r["status"] not in HOLDING_NOTHING
               and r["container_id"] not in engine]
    assert not missing, f"rows whose Docker container is missing: {missing}"

    holding = [r for r in rows if r["host"] == proc.host and r["status"] not in HOLDING_NOTHING]
    held = sum(r["cpu"] or 0 for r in holding)

    def shown_cpu_used() -> float:
        with proc.http() as http:
            return float(http.get("/v1/hosts").json()["hosts"][0]["cpu_used"])

    # host-show counts the rows that hold resources, as the scheduler and the claims do.
    shown = shown_cpu_used()
    assert shown == pytest.approx(held), \
        f"claims leaked: node says {shown} cpu used, rows hold {[dict(r) for r in holding]}"
    with database(proc) as con:
        consumers = {r["consumer_id"] for r in con.execute(
            "SELECT DISTINCT consumer_id FROM allocation").fetchall()}
    # A row holds a Placement allocation while it holds a Docker container (a failed
    # start keeps both); a failed create and a deleted row hold none.
    expected = {r["uuid"] for r in rows if r["status"] not in HOLDING_NOTHING
                or (r["status"] == "Error" and r["container_id"])}
    assert consumers == expected, "Placement allocations leaked or lost"


def create(proc: BerthProcess, run: bool = True) -> str:
    answer = proc.http().post(f"/v1/containers?run={'true' if run else 'false'}", json={
        "image": TEST_IMAGE, "command": ["sleep", "3600"], "cpu": 0.5,
        "image_pull_policy": "ifnotpresent"})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["uuid"])


def status_of(proc: BerthProcess, uuid: str) -> str:
    return str(proc.http().get(f"/v1/containers/{uuid}").json()["status"])


def restart(berth_factory, proc: BerthProcess) -> BerthProcess:  # type: ignore[no-untyped-def]
    """The same agent again: same host, same state directory (so the same database)."""
    return berth_factory(host=proc.host, state_dir=str(proc.dir)).start()


#: The kill points: seconds after the last request. Each is tried in turn on one host,
#: killed and restarted on the same state, so that every restart after the first also
#: recovers over what the earlier kills left (a new berth per point cost a fresh start
#: and database set-up each).
CREATE_KILL_DELAYS = (0.0, 0.05, 0.15, 0.3)
DELETE_KILL_DELAYS = (0.0, 0.05, 0.15)


def test_kill_during_create_leaves_nothing_stuck_or_leaked(berth_factory) -> None:
    proc = berth_factory().start()
    for delay in CREATE_KILL_DELAYS:
        uuids = [create(proc, run=bool(i % 2 == 0)) for i in range(3)]
        time.sleep(delay)
        proc.kill()

        proc = restart(berth_factory, proc)

        assert_recovered(proc)
        rows = {r["uuid"]: r for r in rows_of(proc)}
        for uuid in uuids:
            r = rows[uuid]
            if r["status"] == "Error":
                assert r["status_reason"].startswith(
                    "Container failed to create correctly"), f"kill after {delay} s"
        # The host is usable afterwards: a new container runs and leaves no trace.
        fresh = create(proc)
        wait_for(lambda p=proc, f=fresh: status_of(p, f) == "Running", 30,
                 what=f"a new container to run (kill after {delay} s)")
        assert proc.http().delete(f"/v1/containers/{fresh}?force=true").status_code == 204
        wait_for(lambda p=proc, f=fresh: f not in {r["uuid"] for r in rows_of(p)}, 30,
                 what="the new container's row to go")
        assert_recovered(proc)


def test_kill_during_delete_finishes_the_delete_at_start_up(berth_factory) -> None:
    proc = berth_factory().start()
    for delay in DELETE_KILL_DELAYS:
        uuids = [create(proc) for _ in range(3)]
        for uuid in uuids:
            wait_for(lambda p=proc, u=uuid: status_of(p, u) == "Running", 30, what="Running")
        http = proc.http()
        for uuid in uuids:
            assert http.delete(f"/v1/containers/{uuid}?force=true").status_code == 204
        time.sleep(delay)
        proc.kill()

        proc = restart(berth_factory, proc)

        assert not {r["uuid"] for r in rows_of(proc)} & set(uuids), \
            f"deleted rows came back (kill after {delay} s)"
        labels = [l.get("berth.container.uuid") for l in engine_containers(proc.host).values()]
        assert not set(labels) & set(uuids), \
            f"Docker containers of deleted rows are left (kill after {delay} s)"
        assert_recovered(proc)


def test_kill_during_stop_reruns_the_stop(berth_factory) -> None:
    proc = berth_factory().start()
    uuid = create(proc)
    wait_for(lambda: status_of(proc, uuid) == "Running", 30, what="Running")
    # busybox sleep ignores SIGTERM as PID 1: the stop waits its whole timeout, so the
    # agent dies with the task container_stopping set.
    assert proc.http().post(f"/v1/containers/{uuid}/stop?timeout=30").status_code == 202
    wait_for(lambda: any(r["task_state"] == "container_stopping" for r in rows_of(proc)),
             10, what="the stop to begin")
    proc.kill()

    again = berth_factory("[docker]\ndefault_timeout = 60\n", host=proc.host,
                          state_dir=str(proc.dir)).start(timeout=60)

    [row] = rows_of(again)
    assert (row["status"], row["task_state"]) == ("Stopped", None)
    assert_recovered(again)


# -- a host whose agent is down -------------------------------------------------------------

def error_of(answer) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    return dict(answer.json()["errors"][0])


def test_actions_on_a_down_host_are_refused_and_show_serves_the_stored_row(
        berth_factory) -> None:
    proc = berth_factory().start()
    created = create(proc, run=False)
    running = create(proc)
    wait_for(lambda: status_of(proc, created) == "Created", 30, what="Created")
    wait_for(lambda: status_of(proc, running) == "Running", 30, what="Running")
    zun = proc.client(version="1.40")
    zun.services.force_down(proc.host, "zun-compute", "True")
    http = proc.http()
    try:
        services = {s["host"]: s for s in http.get("/v1/services").json()["services"]}
        assert services[proc.host]["state"] == "down"

        refused = [http.post(f"/v1/containers/{created}/start"),
                   http.post(f"/v1/containers/{running}/stop"),
                   http.delete(f"/v1/containers/{created}"),
                   http.delete(f"/v1/containers/{running}?force=true")]
        for answer in refused:
            assert answer.status_code == 409, answer.text
            err = error_of(answer)
            assert err["code"] == "container.container-host-not-up"
            assert proc.host in err["detail"] and "compute agent is down" in err["detail"]

        for uuid, status in ((created, "Created"), (running, "Running")):
            shown = http.get(f"/v1/containers/{uuid}")
            assert shown.status_code == 200 and shown.json()["status"] == status

        # A task the dead agent never finished: past its deadline, show fails it.
        with database(proc) as con:
            con.execute("UPDATE container SET task_state = 'container_stopping', "
                        "task_deadline = '2000-01-01 00:00:00.000000' WHERE uuid = ?",
                        (running,))
            con.commit()
        shown = http.get(f"/v1/containers/{running}").json()
        assert (shown["status"], shown["task_state"]) == ("Error", None)
        assert shown["status_reason"].startswith("container_stopping did not finish")
        assert f"the compute agent of host {proc.host} is down" in shown["status_reason"]
        listed = {c["uuid"]: c for c in http.get("/v1/containers").json()["containers"]}
        assert listed[running]["status"] == "Error"
    finally:
        zun.services.force_down(proc.host, "zun-compute", "False")
    # Back up: actions go through again.
    assert http.post(f"/v1/containers/{created}/start").status_code == 202
    wait_for(lambda: status_of(proc, created) == "Running", 30, what="Running again")


def test_a_stopped_heartbeat_marks_the_host_down(berth_factory) -> None:
    """Two agents on one database: the API of the first sees the second one's heartbeat
    stop (SIGSTOP freezes the whole process) and refuses actions on its containers."""
    conf = "[DEFAULT]\nservice_down_time = 15\n"
    front = berth_factory(conf).start()
    db_url = f"sqlite:///{front.dir / 'state' / 'berth.sqlite'}"
    back = berth_factory(conf + f"[database]\nconnection = {db_url}\n").start()
    answer = back.http().post("/v1/containers?run=true", json={
        "image": TEST_IMAGE, "command": ["sleep", "3600"], "host": back.host})
    assert answer.status_code == 202, answer.text
    uuid = answer.json()["uuid"]
    wait_for(lambda: status_of(front, uuid) == "Running", 30, what="Running")
    assert back.proc is not None
    http = front.http()

    def down() -> bool:
        services = {s["host"]: s for s in http.get("/v1/services").json()["services"]}
        return services[back.host]["state"] == "down"

    back.proc.send_signal(signal.SIGSTOP)
    try:
        wait_for(down, 60, interval=1, what=f"host {back.host} to be reported down")
        answer = http.post(f"/v1/containers/{uuid}/stop")
        assert answer.status_code == 409
        assert back.host in error_of(answer)["detail"]
        shown = http.get(f"/v1/containers/{uuid}")
        assert shown.status_code == 200 and shown.json()["status"] == "Running"
    finally:
        back.proc.send_signal(signal.SIGCONT)
    wait_for(lambda: not down(), 60, interval=1, what=f"host {back.host} to be up again")
    assert back.http().delete(f"/v1/containers/{uuid}?force=true").status_code == 204
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 30,
             what="the container to be deleted")
