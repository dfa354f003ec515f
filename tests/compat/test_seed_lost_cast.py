"""The seed's lost cast, on Zun and on berth: a create whose RPC cast never reaches the
compute service leaves Zun's container in Creating for good; berth's ends in Error
with a reason.

The loss is real on both sides: the compute service is killed (SIGKILL, as a crash),
the API accepts a create and casts it to the service's queue, and the queue is purged
before the service starts again (what a broker restart does to its non-durable
queues). Zun's API never records the host (zun-compute does, when it claims), so
zun-compute's start-up recovery, which reads the rows of its host, never sees the row,
and its state sync skips Creating rows (seed: "a lost message leaves task_state empty
and the status unchanged, with no timeout on the API side"). berth's API writes the
host with the row, and the agent's start-up recovery fails the create it never got
(design.md, item 4).
"""

from __future__ import annotations

import signal
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import kombu
import pytest
from support.berth_proc import TEST_IMAGE, wait_for

from compat.zun_client import ZUN_IMAGE
from compat.zun_services import (
    DEFECTS_OPT_IN,
    LOGS,
    ZUN_AMQP_URL,
    LogTail,
    force_delete,
    kill_service,
    revive,
    zun_network_id,
)

pytestmark = DEFECTS_OPT_IN

BERTH_AMQP_URL = "amqp://berth:berth@127.0.0.1:5672/berth"
#: The API counts the killed agent up for a minute (its own [DEFAULT]service_down_time),
#: long enough to accept the create; the image is checked by the agent, which is dead.
API_CONF = ("[DEFAULT]\nservice_down_time = 60\n"
            "[api]\nenable_image_validation = false\n")


def purge(amqp_url: str, queue: str) -> int:
    """Drop the messages waiting in ``queue``; how many there were."""
    with kombu.Connection(amqp_url, connect_timeout=10) as conn:
        return int(conn.channel().queue_purge(queue) or 0)


def zun_compute_host(zun: httpx.Client) -> str:
    services = zun.get("/v1/services").json()["services"]
    return next(s["host"] for s in services if s["binary"] == "zun-compute")


def test_zun_leaves_a_container_whose_create_cast_was_lost_in_creating(
        zun: httpx.Client) -> None:
    net = zun_network_id()
    host = zun_compute_host(zun)
    log = LogTail(LOGS / "zun-compute.log")
    kill_service("compute")
    try:
        r = zun.post("/v1/containers", params={"run": "true"}, json={
            "name": f"lost-{uuidlib.uuid4().hex[:6]}", "image": ZUN_IMAGE,
            "command": ["sleep", "600"], "image_pull_policy": "ifnotpresent",
            "nets": [{"network": net}]})
        assert r.status_code == 202, r.text
        uuid = r.json()["uuid"]
        lost = purge(ZUN_AMQP_URL, f"zun-compute.{host}")
        assert lost >= 1, "the create's cast should wait in zun-compute's queue"
    finally:
        revive()
    try:
        # zun-compute is back: its start-up recovery has run, then its state sync at
        # start and once more a minute later
        wait_for(lambda: log.text().count("Start syncing container states") >= 2, 300,
                 interval=2, what="zun-compute's state sync to run twice after its restart")
        body = zun.get(f"/v1/containers/{uuid}").json()
        print(f"\n[zun] lost create cast: {lost} message(s) purged; after zun-compute's "
              f"restart and two state syncs: status {body['status']}, task_state "
              f"{body['task_state']}, host {body.get('host')}, reason {body['status_reason']}")
        assert body["status"] == "Creating"
        assert body["task_state"] is None and body["status_reason"] is None
        assert body.get("host") is None       # why recovery, which reads its host's rows, missed it
    finally:
        force_delete(zun, uuid)


# berth: berth-api and one berth-compute over RabbitMQ (tests/integration's Deployment)

@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from integration.conftest import Deployment, fresh_database

    with fresh_database("mariadb") as url:
        d = Deployment(url, f"zun-compute-defects-{uuidlib.uuid4().hex[:8]}",
                       Path(tmp_path_factory.mktemp("lost-cast")))
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, f"berth db upgrade failed:\n{done.stderr}"
            d.start_agent("a")
            d.start_api(extra_conf=API_CONF)
            yield d
        finally:
            d.close()


def test_berth_fails_a_create_whose_cast_was_lost_with_a_reason(deployment: Any) -> None:
    host = next(iter(deployment.agents))
    http = deployment.http()
    deployment.agents[host].stop(signal.SIGKILL)
    try:
        r = http.post("/v1/containers", params={"run": "true"}, json={
            "name": f"lost-{uuidlib.uuid4().hex[:6]}", "image": TEST_IMAGE,
            "command": ["sleep", "600"], "image_pull_policy": "ifnotpresent"})
        assert r.status_code == 202, r.text
        uuid = r.json()["uuid"]
        lost = purge(BERTH_AMQP_URL, f"{deployment.topic}.{host}")
        assert lost >= 1, "the create's cast should wait in the agent's queue"
        assert http.get(f"/v1/containers/{uuid}").json()["status"] == "Creating"
    finally:
        deployment.start_agent("a")

    def settled() -> dict[str, Any] | None:
        body = http.get(f"/v1/containers/{uuid}").json()
        return body if body["status"] != "Creating" else None

    body = wait_for(settled, 120, interval=0.5, what=f"{uuid} to leave Creating")
    print(f"\n[berth] lost create cast: {lost} message(s) purged; after the agent's restart: "
          f"status {body['status']}, reason {body['status_reason']}")
    assert body["status"] == "Error"
    assert "failed to create correctly" in body["status_reason"]
    assert body["task_state"] is None and body["host"] == host
    r = http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
    assert r.status_code == 204, r.text
    http.close()
