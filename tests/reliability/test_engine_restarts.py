"""R2, engine restarts (issue 21): running containers, half of them restart=always, and
dockerd stopped and started again several times, then killed with SIGKILL once. After
each, the rows agree with the engine (the restarted ones Running, the others Stopped)
without an agent restart, the event stream is followed again, and the checker finds
nothing wrong. Short: 20 containers, 2 restarts and a kill; full: 100, 6 and 1."""

from __future__ import annotations

import os
import signal
import time

import pytest
from reliability.checker import problems
from reliability.conftest import NodeEngine, scale
from support.berth_proc import TEST_IMAGE, wait_for
from support.lifecycle import database_of

from berth.db import containers

pytestmark = pytest.mark.reliability

COMMAND = ["sh", "-c", "trap 'exit 0' TERM; sleep 6000 & wait"]


def stop_engine(engine: NodeEngine, sig: signal.Signals) -> None:
    pid = engine.pid()
    os.kill(pid, sig)
    deadline = time.monotonic() + 60
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)


def test_rows_follow_an_engine_restarted_and_killed(berth_on, node_engine,  # type: ignore[no-untyped-def]
                                                   engine_client) -> None:
    count, restarts = scale(20, 100), scale(2, 6)
    proc = berth_on("[DEFAULT]\nsync_container_state_interval = 10\n")
    engine = engine_client
    with proc.http() as http:
        uuids = []
        for i in range(count):
            resp = http.post("/v1/containers", params={"run": "true"}, json={
                "image": TEST_IMAGE, "command": COMMAND, "memory": 16, "cpu": 0.1,
                "image_pull_policy": "ifnotpresent",
                "restart_policy": {"Name": "always"} if i % 2 == 0 else None})
            assert resp.status_code == 202, resp.text
            uuids.append(resp.json()["uuid"])

        def statuses() -> dict[str, str]:
            return {c["uuid"]: c["status"] for c in http.get(
                "/v1/containers", params={"limit": 1000}).json()["containers"]}

        wait_for(lambda: set(statuses().values()) == {"Running"}, 120, 0.5,
                 what="every container Running")
        def plugged_as_docker_runs() -> bool:
            """Each row plugged into the process Docker runs for it now: after a SIGKILL
            the statuses read as before at once, while berth still follows the new
            processes."""
            pids = {c.name: c.attrs["State"]["Pid"] for c in engine.containers.list(
                all=True, ignore_removed=True, filters={"label": f"berth.host={proc.host}"})}
            with database_of(proc) as db:
                rows = containers.list_by_host(db, proc.host, None)
            return all(int((r.cni_metadata or {}).get("pid") or 0) == pids.get(f"zun-{r.uuid}")
                       for r in rows)

        want_after = {u: "Running" if i % 2 == 0 else "Stopped" for i, u in enumerate(uuids)}
        lags = []
        for round_ in range(restarts + 1):
            stop_engine(node_engine, signal.SIGKILL if round_ == restarts else signal.SIGTERM)
            node_engine.start()
            back = time.monotonic()
            wait_for(lambda: statuses() == want_after and plugged_as_docker_runs(), 60, 0.1,
                     what=f"the rows to follow the engine after restart {round_ + 1}")
            lags.append(time.monotonic() - back)
            with database_of(proc) as db:
                assert problems(db, proc.host, engine, http,
                                cni_state=str(proc.dir / "state" / "cni")) == []
        print(f"R2: {count} containers, {restarts} restarts + 1 SIGKILL; rows agreed "
              f"{', '.join(f'{s:.1f}' for s in lags)} s after the engine answered")
        log = proc.log_text()
        assert log.count("following Docker events again") >= restarts + 1
        # The outage is logged (the periodic tasks fail while the engine is away), but
        # nothing failed in a way berth did not expect: no traceback.
        assert "Traceback" not in log
