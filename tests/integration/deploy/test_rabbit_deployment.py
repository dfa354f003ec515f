"""berth's multi-process deployment: ``berth db upgrade``, ``berth-compute`` agents and
``berth-api`` as separate processes talking over RabbitMQ (oslo.messaging), on
PostgreSQL and on MariaDB, driven with the real python-zunclient.

Each database kind gets a fresh database, one API (whose Docker address answers
nothing: berth-api needs no engine) and agent ``a``; the last test adds agent ``b``
on the same Docker engine and stops it.
"""

from __future__ import annotations

import os
import signal
import statistics
import threading
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, wait_for
from zunclient.common.apiclient import exceptions as zun_exc

from berth.db import migrate

pytestmark = pytest.mark.integration

API_ONLY = {"fastapi", "pydantic", "pydantic_core", "starlette", "uvicorn"}
#: A conftest ``Deployment`` (tests/integration/conftest.py).
Deployment = Any


@pytest.fixture(scope="module", params=["postgresql", "mariadb"])
def deployment(request: pytest.FixtureRequest, deployment_factory: Any,
               database_maker: Any) -> Iterator[Deployment]:
    with database_maker(request.param) as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")   # --config-file after the sub-command
            assert done.returncode == 0, f"berth db upgrade failed:\n{done.stderr}"
            version = d.berth("db", "version")
            assert version.stdout.strip().splitlines()[-1] == migrate.head_revision(), version
            d.start_agent("a")
            d.start_api()
            yield d
        finally:
            d.close()   # before the database is dropped


@pytest.fixture
def zun(deployment: Deployment) -> Any:
    return deployment.client()


@pytest.fixture(scope="module")
def docker_client() -> Iterator[docker.DockerClient]:
    client = docker.from_env()
    yield client
    client.close()


#: Runs until stopped, and exits within a second of SIGTERM (a bare ``sleep`` as PID 1
#: ignores it, and every stop would wait for its timeout).
COMMAND = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]


def _run(zun: Any, name: str) -> Any:
    return zun.containers.run(name=f"{name}-{os.urandom(3).hex()}", image=TEST_IMAGE,
                              command=COMMAND, image_pull_policy="ifnotpresent")


def _status(zun: Any, uuid: str, want: str, timeout: float = 90) -> Any:
    def reached() -> Any:
        c = zun.containers.get(uuid)
        if c.status == "Error":
            raise AssertionError(f"container {uuid} went to Error: {c.status_reason}")
        return c if c.status == want and not c.task_state else None

    return wait_for(reached, timeout, interval=0.3, what=f"container {uuid} to be {want}")


def _docker_running(dc: docker.DockerClient, uuid: str) -> bool:
    return bool(dc.api.inspect_container(f"zun-{uuid}")["State"]["Running"])


def _error_code(deployment: Deployment, method: str, path: str, **kw: Any) -> tuple[int, dict]:
    with deployment.http() as http:
        resp = http.request(method, path, **kw)
    return resp.status_code, resp.json()["errors"][0]


def test_lifecycle_over_rabbitmq(deployment: Deployment, zun: Any,
                                 docker_client: docker.DockerClient) -> None:
    host = next(iter(deployment.agents))
    c = _run(zun, "life")
    try:
        running = _status(zun, c.uuid, "Running")
        assert running.host == host
        labels = docker_client.api.inspect_container(f"zun-{c.uuid}")["Config"]["Labels"]
        assert labels["berth.host"] == host
        assert _docker_running(docker_client, c.uuid)

        zun.containers.stop(c.uuid, timeout=1)
        _status(zun, c.uuid, "Stopped")
        assert not _docker_running(docker_client, c.uuid)

        zun.containers.start(c.uuid)
        _status(zun, c.uuid, "Running")
        assert _docker_running(docker_client, c.uuid)

        # Latency of a show (an RPC call to the agent) over RabbitMQ, for the record.
        times = []
        for _ in range(10):
            t0 = time.monotonic()
            zun.containers.get(c.uuid)
            times.append(time.monotonic() - t0)
        print(f"show over RabbitMQ: median {statistics.median(times) * 1000:.1f} ms")
    finally:
        zun.containers.delete(c.uuid, stop=True)

    def gone() -> bool:
        try:
            zun.containers.get(c.uuid)
            return False
        except zun_exc.NotFound:
            return True

    try:
        wait_for(gone, 90, interval=0.3, what=f"container {c.uuid} to be deleted")
    except AssertionError:
        print(deployment.log_tails())      # seen once in CI under load: the logs say why
        raise
    with pytest.raises(docker.errors.NotFound):
        docker_client.api.inspect_container(f"zun-{c.uuid}")


def test_show_is_answered_by_the_agent(deployment: Deployment, zun: Any,
                                       docker_client: docker.DockerClient) -> None:
    """A show is an RPC call to the container's agent: while the agent is frozen
    (SIGSTOP, heartbeat still fresh) the show waits in RabbitMQ; once the agent runs
    again it answers, and shows then report what Docker did meanwhile (a kill behind
    berth's back: Stopped)."""
    host = next(iter(deployment.agents))
    agent = deployment.agents[host]
    c = _run(zun, "show")
    try:
        _status(zun, c.uuid, "Running")
        answer: dict[str, Any] = {}
        os.kill(agent.pid, signal.SIGSTOP)
        try:
            docker_client.api.kill(f"zun-{c.uuid}")
            shower = threading.Thread(
                target=lambda: answer.update(row=zun.containers.get(c.uuid)), daemon=True)
            shower.start()
            shower.join(1.5)
            assert shower.is_alive(), "show answered while the agent was frozen"
        finally:
            os.kill(agent.pid, signal.SIGCONT)
        shower.join(60)
        assert not shower.is_alive(), "show did not answer after the agent came back"
        assert answer["row"].status in ("Running", "Stopped"), answer["row"].status
        _status(zun, c.uuid, "Stopped", timeout=30)
    finally:
        zun.containers.delete(c.uuid, force=True)


def test_agent_errors_cross_rabbitmq_with_status_and_code(deployment: Deployment,
                                                          zun: Any) -> None:
    # The image validation call finds nothing on the node nor in its registry: 400.
    image = "127.0.0.1:5000/berth-test/no-such-image:latest"
    with pytest.raises(zun_exc.BadRequest) as err:
        zun.containers.run(name="noimage", image=image, command=["sleep", "1"],
                           image_pull_policy="ifnotpresent")
    assert image in str(err.value)
    status, body = _error_code(deployment, "POST", "/v1/containers", json={
        "image": image, "command": ["true"], "image_pull_policy": "ifnotpresent"})
    assert (status, body["code"]) == (400, "container.image-not-found"), body

    # An error the agent itself raises (exc.Invalid) comes back as that class: 400.
    status, body = _error_code(deployment, "GET",
                               "/v1/images/127.0.0.1:5000/berth-test/busybox/search")
    assert (status, body["code"]) == (400, "container.invalid"), body
    assert "Keyword search only works on Docker Hub" in body["detail"]
    assert "Traceback" not in body["detail"] and "_Remote" not in body["title"]
    agent = deployment.agents[next(iter(deployment.agents))]
    assert "RPC image_search answered Invalid" in agent.log_text()
    assert "Exception during message handling" not in agent.log_text()


def test_agent_stays_clear_of_the_api(deployment: Deployment, modules_loaded: Any) -> None:
    loaded = modules_loaded("import berth.cmd.compute")
    assert {m.split(".")[0] for m in loaded} & API_ONLY == set()
    assert sorted(m for m in loaded if m.startswith("berth.api")) == []
    agent = deployment.agents[next(iter(deployment.agents))]
    with open(f"/proc/{agent.pid}/maps") as fh:
        maps = fh.read()
    assert "pydantic_core" not in maps, "berth-compute loaded pydantic"
    # registry passwords are decrypted only for a pull: the key is derived without it
    # (PyMySQL, MariaDB's driver, imports cryptography itself for its auth plugins)
    if not deployment.db_url.startswith("mysql"):
        assert "cryptography" not in maps, "berth-compute loaded cryptography"


def test_concurrent_creates_on_two_apis_never_exceed_the_quota(deployment: Deployment) -> None:
    """Issue 24 item 1 across API processes: a second berth-api on the same database,
    and 50 creates sent to the two at once by a project whose quota is 10 containers:
    exactly 10 are accepted, and 10 rows exist. (Before the next test, which adds an
    agent and stops it.)"""
    _, second_url = deployment.start_another_api("api2")
    urls = [deployment.url, second_url]
    project = f"qrace-{uuidlib.uuid4().hex[:6]}"
    with deployment.http() as admin:
        admin.put(f"/v1/quotas/{project}", json={"containers": 10}).raise_for_status()
    body = {"image": TEST_IMAGE, "command": ["sleep", "300"], "cpu": 0.1, "memory": 16}
    headers = {"X-Auth-Token": f"quser:{project}", "OpenStack-API-Version": "container 1.40"}
    barrier = threading.Barrier(50)
    codes: list[int] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        with httpx.Client(base_url=urls[i % 2], timeout=90, headers=headers) as http:
            barrier.wait()
            code = http.post("/v1/containers", json=body).status_code
        with lock:
            codes.append(code)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert sorted(codes) == [202] * 10 + [403] * 40
    with httpx.Client(base_url=second_url, timeout=90, headers=headers) as http:
        mine = http.get("/v1/containers").json()["containers"]
        assert len(mine) == 10
        wait_for(lambda: all(c["status"] == "Created" for c in http.get(
            "/v1/containers").json()["containers"]), 90, interval=0.5, what="Created")
        for c in http.get("/v1/containers").json()["containers"]:
            assert http.delete(f"/v1/containers/{c['uuid']}").status_code == 204
        # Gone before the test ends: the module's teardown removes what is left with
        # docker rm -f, and two removals of one container at once are best avoided.
        wait_for(lambda: not http.get("/v1/containers").json()["containers"], 90,
                 interval=0.5, what="the project's containers to be deleted")


def test_two_agents_share_the_work_and_a_stopped_one_is_refused(
        deployment: Deployment, zun: Any) -> None:
    a = next(iter(deployment.agents))
    b = deployment.start_agent("b")
    made = [_run(zun, "spread") for _ in range(4)]
    hosts = {m.uuid: _status(zun, m.uuid, "Running").host for m in made}
    assert set(hosts.values()) == {a, b}, hosts
    on_b = next(uuid for uuid, host in hosts.items() if host == b)

    assert deployment.agents[b].stop(signal.SIGTERM) == 0
    deployment.wait_service(b, "down", timeout=60)
    with pytest.raises(zun_exc.Conflict) as err:
        zun.containers.stop(on_b, timeout=1)
    assert b in str(err.value)
    status, body = _error_code(deployment, "POST", f"/v1/containers/{on_b}/stop")
    assert (status, body["code"]) == (409, "container.container-host-not-up"), body
    assert b in body["detail"]

    for _ in range(2):
        new = _run(zun, "after")
        assert _status(zun, new.uuid, "Running").host == a
        zun.containers.delete(new.uuid, force=True)
    for uuid, host in hosts.items():
        if host == a:
            zun.containers.delete(uuid, force=True)
