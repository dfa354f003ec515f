"""R3, the database gone in the middle of the agent's flows (issue 21): creates, stops,
reboots and rebuilds accepted by berth-api, then the test's own MariaDB server killed
while the agent works on them.

- An outage shorter than ``[compute]database_patience``: every flow is done once the
  database answers (creates Running, stops Stopped, ...), none in Error, none left in
  a task, no Docker container without its row.
- An outage longer than the patience: every flow the outage cut short ends in Error
  saying the database was unreachable (written once it answers; the state sync may
  then show what Docker has, the reason stays), none left in a task or a
  transitional status, and no Docker container that its row does not name.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from reliability.checker import problems
from support.berth_proc import TEST_IMAGE, wait_for
from support.outage import BUSY, COMMAND
from support.private_mariadb import PrivateMariaDB

from berth.db.engine import Database

pytestmark = pytest.mark.integration

PATIENCE = 20
UNREACHABLE = "database was unreachable"


@pytest.fixture(scope="module")
def deployment(mariadb_deployment: Callable[[str], Any]) -> Any:
    return mariadb_deployment(f"[compute]\ndatabase_patience = {PATIENCE}\n"
                              f"task_state_timeout = 600\ncreate_task_timeout = 600\n")


def _create(http: httpx.Client) -> str:
    answer = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "command": COMMAND, "memory": 16, "cpu": 0.1,
        "image_pull_policy": "ifnotpresent"})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["uuid"])


def _rows(http: httpx.Client) -> dict[str, dict[str, Any]] | None:
    try:
        rows = http.get("/v1/containers").json()["containers"]
    except (httpx.HTTPError, KeyError, ValueError):
        return None
    if any(r["task_state"] or r["status"] in BUSY for r in rows):
        return None
    return {r["uuid"]: r for r in rows}


def _running(http: httpx.Client, count: int) -> list[str]:
    uuids = [_create(http) for _ in range(count)]
    wait_for(lambda: all(http.get(f"/v1/containers/{u}").json()["status"] == "Running"
                         for u in uuids), 120, 0.5, what="the first containers to run")
    return uuids


def _load(http: httpx.Client, running: list[str]) -> dict[str, str]:
    """Accepted actions, by uuid: what each should end as."""
    expected: dict[str, str] = {}
    stop, reboot, rebuild = running
    assert http.post(f"/v1/containers/{stop}/stop").status_code == 202
    expected[stop] = "Stopped"
    assert http.post(f"/v1/containers/{reboot}/reboot").status_code == 202
    expected[reboot] = "Running"
    assert http.post(f"/v1/containers/{rebuild}/rebuild").status_code == 202
    expected[rebuild] = "Running"
    for _ in range(6):
        expected[_create(http)] = "Running"
    return expected


def _settle(deployment: Any, mariadb: PrivateMariaDB, http: httpx.Client,
            timeout: float) -> dict[str, dict[str, Any]]:
    try:
        rows = wait_for(lambda: _rows(http), timeout, 1.0, what="every flow to settle")
    except AssertionError:
        listed = http.get("/v1/containers").json().get("containers", [])
        print([(r["uuid"][:8], r["status"], r["task_state"], r["status_reason"])
               for r in listed])
        log = next(iter(deployment.agents.values())).log_text()
        if os.environ.get("BERTH_KEEP_AGENT_LOG"):
            Path(os.environ["BERTH_KEEP_AGENT_LOG"]).write_text(log)
        busy = [r["uuid"] for r in listed if r["task_state"] or r["status"] in BUSY]
        print("---- agent log of the unsettled ----\n" + "\n".join(
            line for line in log.splitlines()
            if any(u in line for u in busy) or "Traceback" in line or "Error" in line
            or line.startswith(" "))[-12000:])
        raise
    assert isinstance(rows, dict)
    host = next(iter(deployment.agents))
    engine, db = docker.from_env(), Database(mariadb.url)
    try:
        assert problems(db, host, engine, http) == []
    finally:
        db.dispose()
        engine.close()
    return rows


def _clean(deployment: Any, http: httpx.Client) -> None:
    for uuid in (_rows(http) or {}):
        http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
    wait_for(lambda: http.get("/v1/containers").json()["containers"] == [], 120, 0.5,
             what="the containers to be deleted")


def test_flows_cut_short_by_a_short_outage_are_done_once_the_database_answers(
        deployment: Any, mariadb: PrivateMariaDB) -> None:
    agent = next(iter(deployment.agents.values()))
    with deployment.http() as http:
        expected = _load(http, _running(http, 3))
        mariadb.outage(8.0)
        rows = _settle(deployment, mariadb, http, 150)
        try:
            for uuid, status in expected.items():
                assert rows[uuid]["status"] == status, rows[uuid]
        except AssertionError:
            print("---- agent log ----\n" + agent.log_text()[-8000:])
            raise
        assert agent.running()
        _clean(deployment, http)


def test_flows_past_the_patience_end_in_error_saying_the_database_was_unreachable(
        deployment: Any, mariadb: PrivateMariaDB) -> None:
    agent = next(iter(deployment.agents.values()))
    with deployment.http() as http:
        expected = _load(http, _running(http, 3))
        mariadb.outage(PATIENCE + 10.0)
        rows = _settle(deployment, mariadb, http, 150)
        cut = {u: rows[u] for u in expected if rows[u]["status"] != expected[u]}
        print(f"R3 past the patience: {len(cut)} of {len(expected)} flows cut short: "
              f"{sorted({r['status'] for r in cut.values()})}")
        for row in cut.values():
            # Error, or what Docker shows since (the state sync's), with the reason.
            assert UNREACHABLE in (row["status_reason"] or ""), row
        assert cut, "the outage cut no flow short: nothing was tested"
        assert agent.running()
        _clean(deployment, http)
