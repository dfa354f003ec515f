"""A cast that RabbitMQ loses does not leave its container stuck: the agent that owns
the container does the request itself once the deadline the API wrote has passed
(``berth/compute/periodic/lost_casts.py``).

The loss is real: the agent is frozen (SIGSTOP), the broker closes its connection, the
API accepts a reboot and a delete (the API's own wait for a down agent is set to
60 s, so the frozen agent still counts as up), and the agent's queue, holding both
casts, is purged before the agent runs again. The API's cast deadline is 10 s here
(``[compute]task_state_timeout``); the agent looks every 30 s.
"""

from __future__ import annotations

import os
import signal
import subprocess
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker
import kombu
import pytest
from support.berth_proc import TEST_IMAGE, wait_for

pytestmark = pytest.mark.integration

AMQP_URL = "amqp://berth:berth@127.0.0.1:5672/berth"
COMMAND = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
API_CONF = "[DEFAULT]\nservice_down_time = 60\n[compute]\ntask_state_timeout = 10\n"


@pytest.fixture(scope="module")
def deployment(deployment_factory: Any, database_maker: Any) -> Iterator[Any]:
    with database_maker("postgresql") as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, f"berth db upgrade failed:\n{done.stderr}"
            d.start_agent("a")
            d.start_api(extra_conf=API_CONF)
            yield d
        finally:
            d.close()


@pytest.fixture(scope="module")
def docker_client() -> Iterator[docker.DockerClient]:
    client = docker.from_env()
    yield client
    client.close()


def rabbitmqctl(*args: str) -> str:
    done = subprocess.run(["rabbitmqctl", "-q", *args], capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout


def close_connections_of(pid: int) -> int:
    """Close, at the broker, every connection of process ``pid`` (oslo.messaging names
    them ``<program>:<pid>:<uuid>``); how many."""
    ids = [line.split("\t")[0] for line in
           rabbitmqctl("list_connections", "pid", "client_properties").splitlines()
           if f':{pid}:' in line]
    for erlang_pid in ids:
        rabbitmqctl("close_connection", erlang_pid, "a test loses this agent's casts")
    return len(ids)


def purge(queue: str) -> int:
    with kombu.Connection(AMQP_URL, connect_timeout=5) as conn:
        return int(conn.channel().queue_purge(queue) or 0)


def started_at(dc: docker.DockerClient, uuid: str) -> str:
    return str(dc.api.inspect_container(f"zun-{uuid}")["State"]["StartedAt"])


def test_a_lost_reboot_and_a_lost_delete_are_done_by_the_agent_itself(
        deployment: Any, docker_client: docker.DockerClient) -> None:
    zun = deployment.client()
    host = next(iter(deployment.agents))
    agent = deployment.agents[host]
    made = [zun.containers.run(name=f"lost-{uuidlib.uuid4().hex[:6]}", image=TEST_IMAGE,
                               command=COMMAND, image_pull_policy="ifnotpresent")
            for _ in range(2)]
    rebooted, deleted = (c.uuid for c in made)
    for uuid in (rebooted, deleted):
        wait_for(lambda u=uuid: zun.containers.get(u).status == "Running", 90,
                 what=f"{uuid} to run")
    before = started_at(docker_client, rebooted)

    os.kill(agent.pid, signal.SIGSTOP)
    try:
        assert close_connections_of(agent.pid) >= 1
        zun.containers.restart(rebooted, 1)
        zun.containers.delete(deleted, force=True)
        assert purge(f"{deployment.topic}.{host}") == 2, "both casts should be waiting"
    finally:
        os.kill(agent.pid, signal.SIGCONT)
    assert zun.containers.get(rebooted).status == "Restarting"
    assert zun.containers.get(deleted).status == "Deleting"

    def gone() -> bool:
        try:
            zun.containers.get(deleted)
        except Exception as err:  # noqa: BLE001 - zunclient's NotFound
            return "404" in str(err) or "not found" in str(err).lower()
        return False

    wait_for(gone, 120, interval=1, what=f"the lost delete of {deleted} to be done")
    with pytest.raises(docker.errors.NotFound):
        docker_client.api.inspect_container(f"zun-{deleted}")

    def rebooted_and_running() -> bool:
        c = zun.containers.get(rebooted)
        return c.status == "Running" and started_at(docker_client, rebooted) != before

    wait_for(rebooted_and_running, 120, interval=1,
             what=f"the lost reboot of {rebooted} to be done")
    [reboot] = [a for a in zun.actions.list(rebooted) if a.action == "reboot"]
    assert reboot.finish_time and reboot.message is None
    events = zun.actions.get(rebooted, reboot.request_id).events
    assert [e["event"] for e in events] == ["compute__do_container_reboot"]
    assert "the cast was lost; doing it now" in agent.log_text()
    zun.containers.delete(rebooted, force=True)
