"""A start that Docker refuses (a command the image does not have) leaves the row in
Error with Docker's reason, and on the real engine that Error survives the state syncs
(PLEG events, the periodic ``sync_container_state``, a show's refresh) until the
user acts or the engine really changes: Docker keeps the failed start's error text
on a container that stays "created" (or "exited", when it had run before), which the
syncs used to copy over the Error as Created (or Stopped).

Statuses are read from berth's database (``support.lifecycle.database_of``), so that
what the syncs wrote is seen as they wrote it.
"""

from __future__ import annotations

import io
import re
import tarfile
import time
from collections.abc import Callable

import docker
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.lifecycle import row_of, settled_row

pytestmark = pytest.mark.functional

_SYNC_RUN = re.compile(r"sync_container_state on (\S+): \d+ rows read")

#: A program the test image lacks until the test copies it in.
PROGRAM = "/bin/runme"


def create(http: httpx.Client, run: bool) -> str:
    resp = http.post("/v1/containers", params={"run": str(run).lower()}, json={
        "image": TEST_IMAGE, "command": [PROGRAM], "image_pull_policy": "ifnotpresent"})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["uuid"])


def put_program(docker_client: docker.DockerClient, uuid: str, script: str) -> None:
    """Copy ``script`` into the container as ``PROGRAM`` (Docker copies into a
    container that is not running too)."""
    data = script.encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(PROGRAM.rsplit("/", 1)[1])
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    assert docker_client.api.put_archive(f"zun-{uuid}", "/bin", buf.getvalue())


def two_sync_runs_after(proc: BerthProcess, mark: int) -> None:
    wait_for(lambda: [h for h in _SYNC_RUN.findall(proc.log_text()[mark:])
                      if h == proc.host][1:], 30, what="two sync_container_state runs")


def assert_error_survives_the_syncs(proc: BerthProcess, http: httpx.Client, uuid: str,
                                    reason: str) -> None:
    two_sync_runs_after(proc, len(proc.log_text()))
    shown = http.get(f"/v1/containers/{uuid}")    # the agent refreshes the row
    assert shown.status_code == 200, shown.text
    assert (shown.json()["status"], shown.json()["status_reason"]) == ("Error", reason)
    row = row_of(proc, uuid)
    assert (row.status, row.status_reason, row.task_state) == ("Error", reason, None)


@pytest.fixture
def proc(berth_factory: Callable[..., BerthProcess]) -> BerthProcess:
    return berth_factory("[DEFAULT]\ndebug = true\nsync_container_state_interval = 1\n"
                         "periodic_interval_max = 2\n").start(timeout=120)


def test_a_failed_first_start_stays_error_until_docker_really_starts_it(
        proc: BerthProcess, docker_client: docker.DockerClient) -> None:
    with proc.http() as http:
        uuid = create(http, run=True)
        failed = wait_for(lambda: settled_row(proc, uuid, "Error"), 60,
                          what="the create's start to fail")
        assert PROGRAM in failed.status_reason
        assert docker_client.api.inspect_container(f"zun-{uuid}")["State"]["Status"] \
            == "created"

        assert_error_survives_the_syncs(proc, http, uuid, failed.status_reason)

        # Someone gives the container its program and starts it behind berth's back:
        # a real change, which the syncs follow.
        put_program(docker_client, uuid, "#!/bin/sh\nexec sleep 300\n")
        docker_client.api.start(f"zun-{uuid}")
        running = wait_for(lambda: settled_row(proc, uuid, "Running"), 20,
                           what="the sync to see the container running")
        assert running.status_reason is None
        assert http.delete(f"/v1/containers/{uuid}",
                           params={"force": "true"}).status_code == 204


def test_a_failed_start_of_a_stopped_container_stays_error_until_the_user_acts(
        proc: BerthProcess, docker_client: docker.DockerClient) -> None:
    with proc.http() as http:
        uuid = create(http, run=False)
        wait_for(lambda: settled_row(proc, uuid, "Created"), 60, what="the create")
        # A program that runs once: it removes itself, so the next start fails.
        put_program(docker_client, uuid, f"#!/bin/sh\nrm -f {PROGRAM}\n")
        assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
        wait_for(lambda: settled_row(proc, uuid, "Stopped"), 30, what="the first run to end")

        assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
        failed = wait_for(lambda: settled_row(proc, uuid, "Error"), 30,
                          what="the second start to fail")
        assert PROGRAM in failed.status_reason
        state = docker_client.api.inspect_container(f"zun-{uuid}")["State"]
        assert state["Status"] == "exited" and state["Error"]

        assert_error_survives_the_syncs(proc, http, uuid, failed.status_reason)

        # The user acts: a start that works again (the program is back) clears it.
        put_program(docker_client, uuid, "#!/bin/sh\nexec sleep 300\n")
        assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
        running = wait_for(lambda: settled_row(proc, uuid, "Running"), 30,
                           what="the user's start")
        assert running.status_reason is None
        t0 = time.monotonic()
        assert http.delete(f"/v1/containers/{uuid}",
                           params={"force": "true"}).status_code == 204
        wait_for(lambda: row_of(proc, uuid) is None, 30, what="the delete")
        assert time.monotonic() - t0 < 30
