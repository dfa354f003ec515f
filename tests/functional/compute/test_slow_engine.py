"""What the agent does when the real engine is slow or stalls (issue 24), against the
real Docker engine through tests/support/engine_proxy.py, which holds chosen requests
or their responses: one berth's engine made slow, without stalling the shared dockerd.

Every status is read from the database (``support.lifecycle.database_of``): a GET
would refresh the row through the agent and hide what the periodic sync wrote.
"""

from __future__ import annotations

import contextlib
import time
import uuid as uuidlib
from collections.abc import Callable
from typing import Any

import docker
import docker.errors
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.engine_proxy import EngineProxy, Rule
from support.lifecycle import row_of

pytestmark = pytest.mark.functional


@pytest.fixture
def slow_berth(proxy: EngineProxy, berth_factory: Callable[..., BerthProcess]
               ) -> BerthProcess:
    return berth_factory(
        f"[DEFAULT]\nsync_container_state_interval = 1\n"
        f"[docker]\napi_url = {proxy.url}\ndefault_timeout = 3\n").start()


def create(http: httpx.Client, run: bool, **fields: Any) -> str:
    resp = http.post("/v1/containers", params={"run": str(run).lower()}, json={
        "image": TEST_IMAGE, "command": ["sleep", "300"], "image_pull_policy": "ifnotpresent",
        "name": f"slow-{uuidlib.uuid4().hex[:8]}", **fields})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["uuid"])


def engine_has(docker_client: docker.DockerClient, uuid: str) -> bool:
    # sparse: the SDK's full list inspects each listed container, and one that berth
    # removes between the list and the inspect would raise NotFound.
    return bool(docker_client.containers.list(
        all=True, sparse=True, filters={"label": f"berth.container.uuid={uuid}"}))


def test_a_rebuild_between_the_syncs_read_and_its_listing_is_not_marked_vanished(
        slow_berth: BerthProcess, proxy: EngineProxy) -> None:
    """Item 3: the periodic sync reads the rows, then lists Docker (held 0.4 s, a
    loaded engine). A rebuild in between removes the listed-for container and makes
    another, and the row is Created again: the sync must not mark it Error for the
    old container's absence."""
    proxy.rules.append(Rule("GET", "/containers/json", before=0.4))
    with slow_berth.http() as http:
        uuid = create(http, run=False)
        wait_for(lambda: (row_of(slow_berth, uuid).status, row_of(slow_berth, uuid)
                          .task_state) == ("Created", None), 60, what="Created")
        for attempt in range(8):
            before = row_of(slow_berth, uuid).container_id
            resp = http.post(f"/v1/containers/{uuid}/rebuild")
            assert resp.status_code == 202, resp.text

            def rebuilt(old: str | None = before) -> bool:
                row = row_of(slow_berth, uuid)
                return row.container_id not in (None, old) and row.task_state is None \
                    and row.status in ("Created", "Error")

            wait_for(rebuilt, 60, what=f"rebuild {attempt + 1}")
            time.sleep(1.2)      # at least one periodic sync over the rebuilt row
            row = row_of(slow_berth, uuid)
            assert row.status == "Created", (attempt + 1, row.status, row.status_reason)
    assert proxy.rules[0].hits >= 8


def test_a_create_whose_docker_create_times_out_leaves_no_container(
        slow_berth: BerthProcess, proxy: EngineProxy,
        docker_client: docker.DockerClient) -> None:
    """Item 4: the engine makes the container but answers after berth's 3 s time-out:
    the row is Error, and the agent looks the container up by its name and removes
    it at once."""
    proxy.rules.append(Rule("POST", "/containers/create", after=4.5))
    with slow_berth.http() as http:
        uuids = [create(http, run=True) for _ in range(3)]
        for uuid in uuids:
            wait_for(lambda u=uuid: row_of(slow_berth, u).status == "Error", 60,
                     what=f"{uuid} Error")
        time.sleep(2.0)          # the engine's late answers have all arrived
        proxy.rules.clear()
        wait_for(lambda: not any(engine_has(docker_client, u) for u in uuids), 20,
                 what="no Docker container left by the timed-out creates")
        for uuid in uuids:
            row = row_of(slow_berth, uuid)
            assert "Docker could not create the container" in (row.status_reason or "")
            assert (row.container_id, row.host) == (None, None)
    assert "which the engine made although its create failed" in slow_berth.log_text()


def test_a_container_made_after_its_create_gave_up_is_swept_by_the_periodic_sync(
        slow_berth: BerthProcess, proxy: EngineProxy,
        docker_client: docker.DockerClient) -> None:
    """Item 4, when the engine does not answer the look-up either: the periodic sync
    treats a failed create's row as start-up recovery does and removes the container
    (before: it stayed until the agent restarted)."""
    proxy.rules.append(Rule("POST", "/containers/create", after=4.5))
    proxy.rules.append(Rule("GET", "/containers/zun-", before=4.0))
    with slow_berth.http() as http:
        uuid = create(http, run=True)
        wait_for(lambda: row_of(slow_berth, uuid).status == "Error", 60, what="Error")
        wait_for(lambda: engine_has(docker_client, uuid), 20,
                 what="the engine made the container after all")
        proxy.rules.clear()
        wait_for(lambda: not engine_has(docker_client, uuid), 20,
                 what="the periodic sync removed it")
    assert "its row is a failed create that does not refer to it" in slow_berth.log_text()


def test_a_start_that_timed_out_then_started_is_running_without_the_failure(
        slow_berth: BerthProcess, proxy: EngineProxy) -> None:
    """Item 6: the start's answer comes after the time-out (Error "could not start"),
    the container really runs: the sync makes the row Running and drops the reason,
    which no longer says anything true."""
    with slow_berth.http() as http:
        uuid = create(http, run=False)
        wait_for(lambda: row_of(slow_berth, uuid).status == "Created", 60, what="Created")
        proxy.rules.append(Rule("POST", "/start", after=4.5))
        assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
        wait_for(lambda: "container failed: Docker could not start" in slow_berth.log_text(),
                 30, what="the start to time out")
        proxy.rules.clear()
        wait_for(lambda: (row_of(slow_berth, uuid).status,
                          row_of(slow_berth, uuid).task_state) == ("Running", None),
                 30, what="Running")
        assert row_of(slow_berth, uuid).status_reason is None
        with contextlib.suppress(Exception):
            http.delete(f"/v1/containers/{uuid}", params={"force": "true", "stop": "true"})
