"""A SIGKILL of berth-compute during adoption: the agent's first start after
``berth db import-zun``, while its start-up recovery goes over the containers Zun made
(named ``zun-<uuid>``), is killed, started again, and ends as an uninterrupted first
start would: every container adopted once (one row, one allocation per resource
class, the same Docker container), none restarted (StartedAt unchanged), the node
and its Placement provider recorded once, published ports as Docker had them.

The real Docker engine and a real ``berth serve`` (process killed with SIGKILL);
Zun's rows in a Zun 18 database of the test's own, as ``test_adoption`` makes them.
``BERTH_TAKEOVER_N`` sets how many containers Zun "made" (default 12); the import's
and the adoption's durations are printed (``-s``), never asserted.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import sqlite3
import time
import uuid as uuidlib
from collections import Counter
from contextlib import closing

import docker
import pytest
from support.berth_proc import BerthProcess, wait_for
from support.ports import free_port
from support.zun_database import insert, url_of

from .conftest import full_only
from .test_import_zun import import_zun

IMAGE = "127.0.0.1:5000/berth-test/busybox:latest"
N = int(os.environ.get("BERTH_TAKEOVER_N", "12"))
RP_UUID = str(uuidlib.uuid4())

#: Where the first start is killed: a line of its log.
DURING_RECOVERY = "start-up recovery: "      # recovery has listed rows and containers
AFTER_RECOVERY = "start-up recovery done"    # between recovery and the agent being up


def zun_fleet(client, made, n: int):  # type: ignore[no-untyped-def]
    """``n`` containers as Zun's docker driver makes them (its name, the user's labels
    only): every fourth one stopped, every fourth paused, the first with a published
    port; returns {uuid: (status Zun recorded, container)}."""
    client.images.pull(IMAGE)
    fleet = {}
    for i in range(n):
        uuid = str(uuidlib.uuid4())
        name = f"zun-{uuid}"
        made.append(name)
        ports = {"8080/tcp": ("127.0.0.1", free_port())} if i == 0 else None
        c = client.containers.run(IMAGE, ["sleep", "3600"], name=name, detach=True,
                                  labels={"app": "takeover-killed"}, hostname=uuid[:12],
                                  network_mode="bridge" if ports else "none", ports=ports)
        status = "Running"
        if i % 4 == 1:
            c.stop(timeout=0)
            status = "Stopped"
        elif i % 4 == 2:
            c.pause()
            status = "Paused"
        c.reload()
        fleet[uuid] = (status, c)
    return fleet


def zun_rows(db: str, host: str, fleet) -> None:  # type: ignore[no-untyped-def]
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    for i, (uuid, (status, c)) in enumerate(fleet.items(), start=1):
        bindings = c.attrs["HostConfig"].get("PortBindings") or {}
        insert(db, "container", id=i, uuid=uuid, name=f"takeover-killed-{i}",
               project_id="admin", user_id="admin", image=IMAGE, image_driver="docker",
               command='["sleep", "3600"]', cpu=0.1, memory="64", status=status, host=host,
               container_id=c.id, started_at=now, created_at=now, container_type=0,
               labels='{"app": "takeover-killed"}', environment="{}", addresses="{}",
               ports="[]", security_groups="[]", restart_policy="{}", healthcheck="{}",
               exposed_ports={p: {} for p in bindings}, entrypoint="[]", interactive=0,
               tty=0, auto_remove=0, auto_heal=0, privileged=0)
    insert(db, "compute_node", uuid=str(uuidlib.uuid4()), rp_uuid=RP_UUID, hostname=host,
           mem_total=8000, mem_free=4000, mem_available=4000, mem_used=4000,
           total_containers=len(fleet), running_containers=0, paused_containers=0,
           stopped_containers=0, cpus=2, cpu_used=0.0, disk_total=50, disk_used=1,
           disk_quota_supported=0, runtimes=["runc"], enable_cpu_pinning=0, labels={},
           numa_topology={"nodes": []})
    insert(db, "zun_service", id=1, host=host, binary="zun-compute", disabled=0,
           forced_down=0, report_count=3, last_seen_up=now, availability_zone="nova")


def query(proc: BerthProcess, sql: str) -> list[sqlite3.Row]:
    """berth's own SQLite file (WAL: reading beside the running process is safe)."""
    with closing(sqlite3.connect(proc.dir / "state" / "berth.sqlite", timeout=30)) as con:
        con.row_factory = sqlite3.Row
        return con.execute(sql).fetchall()


def kill_at(proc: BerthProcess, marker: str, timeout: float = 180) -> str:
    """Launch ``berth serve`` and SIGKILL it as soon as its log shows ``marker``;
    returns the log as it was when killed."""
    proc.launch()
    assert proc.proc is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = proc.log_text()
        if marker in text:
            proc.proc.send_signal(signal.SIGKILL)
            proc.proc.wait(30)
            return text
        if proc.proc.poll() is not None:
            raise AssertionError(f"berth serve exited before {marker!r}:\n{text[-3000:]}")
        time.sleep(0.01)
    proc.kill()
    raise AssertionError(f"berth serve never logged {marker!r}")


@full_only
@pytest.mark.parametrize("marker", [DURING_RECOVERY, AFTER_RECOVERY])
def test_adoption_killed_then_run_again_adopts_each_container_once(
        engine, zun_db, tmp_path, marker: str) -> None:
    client, made = engine
    fleet = zun_fleet(client, made, N)
    before = {u: (c.id, c.attrs["State"]["StartedAt"], c.attrs["NetworkSettings"]["Ports"])
              for u, (_, c) in fleet.items()}
    proc = BerthProcess(host=f"takeover-k-{uuidlib.uuid4().hex[:8]}",
                        state_dir=str(tmp_path))
    zun_rows(zun_db, proc.host, fleet)
    t0 = time.monotonic()
    done = import_zun(proc.conf, url_of(zun_db))
    import_s = time.monotonic() - t0
    assert done.returncode == 0, done.stderr

    log_when_killed = kill_at(proc, marker)
    if marker == DURING_RECOVERY:
        # the premise: killed before the recovery of the adopted rows ended
        assert AFTER_RECOVERY not in log_when_killed, "the kill came after the recovery"

    again = BerthProcess(host=proc.host, state_dir=str(tmp_path))
    t1 = time.monotonic()
    again.start(timeout=180)
    try:
        wait_for(lambda: f"compute agent {again.host} is up" in again.log_text(), 120,
                 interval=0.2, what="the agent to be up")
        adopt_s = time.monotonic() - t1
        print(f"\n{N} containers: import {import_s:.1f} s, restart to agent up "
              f"{adopt_s:.1f} s, load average {os.getloadavg()[0]:.1f}")
        http = again.http()

        def statuses() -> dict[str, str]:
            listed = http.get("/v1/containers?all_projects=1&limit=1000").json()
            return {c["uuid"]: c["status"] for c in listed["containers"]}

        wanted = {u: s for u, (s, _) in fleet.items()}
        wait_for(lambda: statuses() == wanted, 60, interval=0.5,
                 what="every adopted container shown with Zun's status")
        # adopted once: one row each, no task left, the same Docker container
        rows = query(again, "SELECT uuid, container_id, task_state, host FROM container")
        assert Counter(r["uuid"] for r in rows) == Counter(list(fleet))
        assert all(r["task_state"] is None and r["host"] == again.host for r in rows)
        assert {r["uuid"]: r["container_id"] for r in rows} == \
            {u: b[0] for u, b in before.items()}
        for uuid, (status, c) in fleet.items():
            c.reload()
            assert c.attrs["State"]["StartedAt"] == before[uuid][1], f"{uuid} was restarted"
            assert c.attrs["NetworkSettings"]["Ports"] == before[uuid][2]
            assert c.status == {"Running": "running", "Stopped": "exited",
                                "Paused": "paused"}[status]
        zun_named = client.containers.list(all=True, filters={"label": "app=takeover-killed"})
        assert sorted(c.name for c in zun_named) == sorted(f"zun-{u}" for u in fleet)
        # the node, its service and its provider once; one allocation per class each
        assert len(query(again, "SELECT 1 FROM compute_node")) == 1
        assert len(query(again, "SELECT 1 FROM resource_provider")) == 1
        assert query(again, "SELECT uuid FROM resource_provider")[0]["uuid"] == RP_UUID
        assert len(query(again, "SELECT 1 FROM zun_service WHERE \"binary\" = 'zun-compute'")) == 1
        allocations = Counter((a["consumer_id"], a["resource_class"]) for a in query(
            again, "SELECT consumer_id, resource_class FROM allocation"))
        assert set(allocations.values()) == {1}
        assert {consumer for consumer, _ in allocations} == set(fleet)

        # and berth operates them: stop a running one, delete a stopped one
        running = next(u for u, s in wanted.items() if s == "Running")
        stopped = next(u for u, s in wanted.items() if s == "Stopped")
        assert http.post(f"/v1/containers/{running}/stop?timeout=0").status_code == 202
        wait_for(lambda: statuses().get(running) == "Stopped", 60, interval=0.5,
                 what="the adopted container stopped")
        assert http.delete(f"/v1/containers/{stopped}").status_code == 204
        wait_for(lambda: stopped not in statuses(), 60, interval=0.5, what="the row gone")
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(f"zun-{stopped}")
        assert not query(again, f"SELECT 1 FROM allocation WHERE consumer_id = '{stopped}'")
    finally:
        again.stop()
