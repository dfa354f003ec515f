"""A reboot or a rebuild whose flow fails in a way it did not plan for ends with the
row in Error saying what failed (``berth/compute/flows/unexpected.py``), never left
Restarting or Rebuilding, the statuses the API writes before it casts, with no task
and so no deadline. Against the real Docker engine through
tests/support/engine_proxy.py, which answers chosen requests itself with a JSON text
berth cannot read (an inspect or a create without its ``Id``).

Statuses are read from berth's database (``support.lifecycle.database_of``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import docker
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.engine_proxy import EngineProxy, Rule
from support.lifecycle import database_of, row_of, settled_row

from berth.db import actions

pytestmark = pytest.mark.functional

UNREADABLE = "{}"       # an answer without the "Id" every Docker answer carries


@pytest.fixture
def proc(proxy: EngineProxy, berth_factory: Callable[..., BerthProcess]) -> BerthProcess:
    return berth_factory(f"[DEFAULT]\nsync_container_state_interval = 1\n"
                         f"[docker]\napi_url = {proxy.url}\n").start(timeout=120)


def last_action(proc: BerthProcess, uuid: str, name: str) -> Any:
    with database_of(proc) as db:
        found = [a for a in actions.list_actions(db, uuid) if a.action == name]
        if not found:
            return None
        action, events = actions.get_action(db, uuid, found[-1].request_id)
    return action, events


def run_container(http: httpx.Client, proc: BerthProcess) -> str:
    resp = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "command": ["sleep", "300"], "image_pull_policy": "ifnotpresent"})
    assert resp.status_code == 202, resp.text
    uuid = str(resp.json()["uuid"])
    wait_for(lambda: settled_row(proc, uuid, "Running"), 60, what="the container to run")
    return uuid


def engine_ids(docker_client: docker.DockerClient, uuid: str) -> list[str]:
    return [c.id for c in docker_client.containers.list(
        all=True, ignore_removed=True, filters={"label": f"berth.container.uuid={uuid}"})]


def assert_action_failed(proc: BerthProcess, uuid: str, name: str) -> None:
    action, events = last_action(proc, uuid, name)
    assert action.finish_time is not None and action.message == "Error"
    assert any(e.result == "Error" and "KeyError" in (e.traceback or "") for e in events)


def test_a_reboot_whose_engine_answer_cannot_be_read_ends_in_error_not_restarting(
        proc: BerthProcess, proxy: EngineProxy, docker_client: docker.DockerClient) -> None:
    with proc.http() as http:
        uuid = run_container(http, proc)
        container_id = row_of(proc, uuid).container_id
        unreadable = Rule("GET", f"/containers/{container_id}/json", answer=UNREADABLE)
        proxy.rules.append(unreadable)
        try:
            assert http.post(f"/v1/containers/{uuid}/reboot").status_code == 202
            failed = wait_for(lambda: settled_row(proc, uuid, "Error"), 60,
                              what="the reboot to end in Error")
        finally:
            proxy.rules.remove(unreadable)
        assert unreadable.hits >= 1
        assert failed.task_deadline is None
        assert failed.status_reason.startswith("The reboot failed unexpectedly (KeyError")
        assert_action_failed(proc, uuid, "reboot")
        # Docker did restart it: once the engine's answers can be read again, the
        # state sync brings the row to what Docker reports.
        wait_for(lambda: settled_row(proc, uuid, "Running"), 30, what="the sync to see it run")
        assert http.delete(f"/v1/containers/{uuid}",
                           params={"force": "true"}).status_code == 204
        wait_for(lambda: row_of(proc, uuid) is None, 30, what="the delete")
    assert engine_ids(docker_client, uuid) == []


def test_a_rebuild_whose_engine_answer_cannot_be_read_ends_in_error_with_nothing_left(
        proc: BerthProcess, proxy: EngineProxy, docker_client: docker.DockerClient) -> None:
    with proc.http() as http:
        uuid = run_container(http, proc)
        unreadable = Rule("POST", "/containers/create", answer=UNREADABLE)
        proxy.rules.append(unreadable)
        try:
            assert http.post(f"/v1/containers/{uuid}/rebuild").status_code == 202
            failed = wait_for(lambda: settled_row(proc, uuid, "Error"), 60,
                              what="the rebuild to end in Error")
        finally:
            proxy.rules.remove(unreadable)
        assert unreadable.hits == 1
        assert (failed.container_id, failed.task_deadline) == (None, None)
        assert failed.status_reason.startswith("The rebuild failed unexpectedly (KeyError")
        assert_action_failed(proc, uuid, "rebuild")
        assert engine_ids(docker_client, uuid) == []      # the old one went first

        # The user acts: a rebuild that works.
        assert http.post(f"/v1/containers/{uuid}/rebuild",
                         params={"run": "true"}).status_code == 202
        rebuilt = wait_for(lambda: settled_row(proc, uuid, "Running"), 60,
                           what="the second rebuild")
        assert rebuilt.status_reason is None
        assert engine_ids(docker_client, uuid) == [rebuilt.container_id]
        assert http.delete(f"/v1/containers/{uuid}",
                           params={"force": "true"}).status_code == 204
        wait_for(lambda: row_of(proc, uuid) is None, 30, what="the delete")
