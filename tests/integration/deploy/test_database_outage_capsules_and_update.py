"""R3, the database gone in the middle of capsule creates and deletes and of a
container's update (PATCH: resize and rename) (issue 21), as
``test_database_outage_mid_flow.py`` does for containers: the test's own MariaDB
server killed while ``berth-compute`` works on requests ``berth-api`` accepted.

- An outage shorter than ``[compute]database_patience``: every capsule create ends
  Running, every capsule delete deletes, the update is done (the PATCH answers with
  the new name and memory, which Docker has); nothing in Error, no Docker container
  without its row, every allocation what the rows hold.
- An outage longer than the patience: each capsule create or delete cut short ends
  in Error saying the database was unreachable, with nothing left in Docker that its
  row does not name; the PATCH is answered 503 saying so, and the container runs on
  with the limits its row holds.

The agent's engine is reached through tests/support/engine_proxy.py, which holds
Docker's answer to the update for a few seconds: the outage begins while the update
is in the agent's hands.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import docker
import httpx
import pytest
from reliability.checker import problems
from support.berth_proc import TEST_IMAGE, wait_for
from support.engine_proxy import EngineProxy, Rule
from support.outage import BUSY, COMMAND
from support.private_mariadb import PrivateMariaDB

from berth.db.engine import Database

pytestmark = pytest.mark.integration

PATIENCE = 20
UNREACHABLE = "database was unreachable"
#: How long the engine proxy holds Docker's answer to an update.
UPDATE_HELD = 3.0


@pytest.fixture(scope="module")
def proxy() -> Iterator[EngineProxy]:
    p = EngineProxy().start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def deployment(mariadb_deployment: Callable[[str], Any], proxy: EngineProxy) -> Any:
    return mariadb_deployment(f"[compute]\ndatabase_patience = {PATIENCE}\n"
                              f"task_state_timeout = 600\ncreate_task_timeout = 600\n"
                              f"[docker]\napi_url = {proxy.url}\n")


def _capsule(http: httpx.Client) -> str:
    def member(name: str, command: list[str]) -> dict[str, Any]:
        return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
                "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 16}}}
    # The init container makes each create last a couple of seconds: an outage that
    # begins right after the requests finds them in the middle.
    template = {"kind": "capsule", "metadata": {"name": f"r3-{time.monotonic_ns()}"},
                "spec": {"initContainers": [member("init", ["sleep", "2"])],
                         "containers": [member("a", COMMAND), member("b", COMMAND)]}}
    answer = http.post("/v1/capsules/", json={"template": template})
    assert answer.status_code == 202, answer.text
    return str(answer.json()["uuid"])


def _capsules(http: httpx.Client) -> dict[str, dict[str, Any]] | None:
    """Every capsule, once none is busy (a task, or a transitional status)."""
    try:
        rows = http.get("/v1/capsules/").json()["capsules"]
    except (httpx.HTTPError, KeyError, ValueError):
        return None
    if any(r.get("task_state") or r["status"] in BUSY for r in rows):
        return None
    return {r["uuid"]: r for r in rows}


def _running_capsules(http: httpx.Client, count: int) -> list[str]:
    uuids = [_capsule(http) for _ in range(count)]
    wait_for(lambda: all(r["status"] == "Running" for r in (_capsules(http) or {"": {
        "status": "busy"}}).values()) and len(_capsules(http) or {}) >= count,
        120, 0.5, what="the first capsules to run")
    return uuids


def _check(deployment: Any, mariadb: PrivateMariaDB, http: httpx.Client) -> None:
    host = next(iter(deployment.agents))
    engine, db = docker.from_env(), Database(mariadb.url)
    try:
        found = problems(db, host, engine, http)
        assert found == [], "\n".join(found)
    finally:
        db.dispose()
        engine.close()


def _agent_back_up(deployment: Any) -> None:
    """The agent is reported up again (its heartbeat written since the database came
    back): the API refuses a deleted capsule's host as down (409) and the scheduler
    skips it until then."""
    host, agent = next(iter(deployment.agents.items()))
    try:
        deployment.wait_service(host, "up", 60)
    except AssertionError:
        print("---- agent log ----\n" + agent.log_text()[-12000:])
        raise


def _settle(deployment: Any, mariadb: PrivateMariaDB, http: httpx.Client
            ) -> dict[str, dict[str, Any]]:
    agent = next(iter(deployment.agents.values()))
    try:
        rows = wait_for(lambda: _capsules(http), 150, 1.0, what="every capsule to settle")
    except AssertionError:
        print(http.get("/v1/capsules/").json())
        print("---- agent log ----\n" + agent.log_text()[-8000:])
        raise
    assert isinstance(rows, dict)
    _check(deployment, mariadb, http)
    _agent_back_up(deployment)
    return rows


def _clean(http: httpx.Client) -> None:
    for uuid in (_capsules(http) or {}):
        answer = http.delete(f"/v1/capsules/{uuid}")
        assert answer.status_code == 204, answer.text
    for row in http.get("/v1/containers").json()["containers"]:
        answer = http.delete(f"/v1/containers/{row['uuid']}", params={"force": "true"})
        assert answer.status_code == 204, answer.text
    try:
        wait_for(lambda: not http.get("/v1/capsules/").json()["capsules"]
                 and not http.get("/v1/containers").json()["containers"], 120, 0.5,
                 what="the capsules and containers to be deleted")
    except AssertionError:
        print([(r["uuid"][:8], r["status"], r["task_state"], r["status_reason"])
               for r in http.get("/v1/containers").json()["containers"]])
        raise


def _container(http: httpx.Client) -> str:
    answer = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "command": COMMAND, "memory": 16, "cpu": 0.1,
        "image_pull_policy": "ifnotpresent"})
    assert answer.status_code == 202, answer.text
    uuid = str(answer.json()["uuid"])

    def settled() -> dict[str, Any] | None:
        row: dict[str, Any] = http.get(f"/v1/containers/{uuid}").json()
        return row if row["status"] in ("Running", "Error") else None

    row = wait_for(settled, 60, 0.5, what="the container to run")
    assert isinstance(row, dict) and row["status"] == "Running", row
    return uuid


def _patch_during_outage(http: httpx.Client, proxy: EngineProxy, mariadb: PrivateMariaDB,
                         uuid: str, outage: float) -> httpx.Response:
    """PATCH memory and name; the outage begins while Docker's answer to the update
    is held, so the agent has claimed the memory and meets the outage after Docker."""
    held = Rule("POST", "/update", before=UPDATE_HELD)
    proxy.rules.append(held)
    answers: list[httpx.Response] = []
    patch = threading.Thread(target=lambda: answers.append(http.patch(
        f"/v1/containers/{uuid}", json={"memory": 32, "name": f"renamed-{uuid[:8]}"},
        timeout=120)))
    try:
        patch.start()
        wait_for(lambda: held.hits >= 1, 30, 0.05, what="the agent to ask Docker to update")
        mariadb.outage(outage)
        patch.join(120)
    finally:
        proxy.rules.remove(held)
    assert answers, "the PATCH got no answer"
    return answers[0]


def _docker_memory_mib(uuid: str) -> int:
    client = docker.from_env()
    try:
        return int(client.api.inspect_container(f"zun-{uuid}")["HostConfig"]["Memory"]
                   ) // (1024 * 1024)
    finally:
        client.close()


def test_capsule_flows_cut_short_by_a_short_outage_are_done_once_the_database_answers(
        deployment: Any, mariadb: PrivateMariaDB) -> None:
    agent = next(iter(deployment.agents.values()))
    with deployment.http() as http:
        doomed = _running_capsules(http, 2)
        for uuid in doomed:
            assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        made = [_capsule(http) for _ in range(3)]
        mariadb.outage(8.0)
        rows = _settle(deployment, mariadb, http)
        assert not set(doomed) & set(rows), "a capsule delete was lost"
        assert {rows[u]["status"] for u in made} == {"Running"}, \
            [(rows[u]["status"], rows[u]["status_reason"]) for u in made]
        assert agent.running()
        _clean(http)


def test_capsule_flows_past_the_patience_end_in_error_saying_the_database_was_unreachable(
        deployment: Any, mariadb: PrivateMariaDB) -> None:
    agent = next(iter(deployment.agents.values()))
    with deployment.http() as http:
        doomed = _running_capsules(http, 2)
        for uuid in doomed:
            assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        made = [_capsule(http) for _ in range(3)]
        mariadb.outage(PATIENCE + 10.0)
        rows = _settle(deployment, mariadb, http)
        cut = {u: rows[u] for u in made if rows[u]["status"] != "Running"}
        cut.update({u: rows[u] for u in doomed if u in rows})
        print(f"R3 capsules past the patience: {len(cut)} of {len(made) + len(doomed)} "
              f"flows cut short: {sorted({r['status'] for r in cut.values()})}")
        for row in cut.values():
            assert row["status"] == "Error" and UNREACHABLE in (row["status_reason"] or ""), \
                row
        assert cut, "the outage cut no flow short: nothing was tested"
        assert agent.running()
        _clean(http)


def test_an_update_cut_short_by_a_short_outage_is_done_once_the_database_answers(
        deployment: Any, mariadb: PrivateMariaDB, proxy: EngineProxy) -> None:
    with deployment.http() as http:
        uuid = _container(http)
        answer = _patch_during_outage(http, proxy, mariadb, uuid, 8.0)
        assert answer.status_code == 200, answer.text
        _agent_back_up(deployment)
        assert (answer.json()["memory"], answer.json()["name"]) == \
            ("32", f"renamed-{uuid[:8]}")
        shown = http.get(f"/v1/containers/{uuid}").json()
        assert (shown["status"], shown["memory"], shown["status_reason"]) == \
            ("Running", "32", None)
        assert _docker_memory_mib(uuid) == 32
        _check(deployment, mariadb, http)
        _clean(http)


def test_an_update_past_the_patience_is_refused_saying_so_and_the_container_runs_on(
        deployment: Any, mariadb: PrivateMariaDB, proxy: EngineProxy) -> None:
    with deployment.http() as http:
        uuid = _container(http)
        answer = _patch_during_outage(http, proxy, mariadb, uuid, PATIENCE + 10.0)
        assert answer.status_code == 503, answer.text
        assert UNREACHABLE in answer.text
        _agent_back_up(deployment)
        shown = http.get(f"/v1/containers/{uuid}").json()
        assert shown["status"] == "Running" and shown["task_state"] is None
        assert UNREACHABLE in (shown["status_reason"] or "")
        assert shown["name"] != f"renamed-{uuid[:8]}"
        # Docker and the row (the claim, the allocation) agree on the memory.
        assert _docker_memory_mib(uuid) == int(shown["memory"])
        _check(deployment, mariadb, http)
        _clean(http)
