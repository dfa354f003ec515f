"""The quota holds across API processes (issue 24 item 1): two ``berth-api`` processes
on one database (PostgreSQL, MariaDB), 50 creates sent to them at once by one project
whose quota is 10 containers: exactly 10 are accepted, and 10 rows exist."""

from __future__ import annotations

import threading
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.berth_proc import TEST_IMAGE

pytestmark = pytest.mark.integration

#: A conftest ``Deployment`` (tests/integration/conftest.py).
Deployment = Any


@pytest.fixture(scope="module", params=["postgresql", "mariadb"])
def deployment(request: pytest.FixtureRequest, deployment_factory: Any,
               database_maker: Any) -> Iterator[Deployment]:
    with database_maker(request.param) as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, f"berth db upgrade failed:\n{done.stderr}"
            d.start_agent("a")
            d.start_api()
            yield d
        finally:
            d.close()


def test_concurrent_creates_on_two_apis_never_exceed_the_quota(deployment: Deployment) -> None:
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
        for c in mine:
            http.delete(f"/v1/containers/{c['uuid']}", params={"force": "true"})
