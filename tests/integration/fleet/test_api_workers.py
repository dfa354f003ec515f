"""Concurrent API workers never overcommit a node: two ``berth-api`` processes (the
first with two ``[api]workers``, so three schedulers in all) receive a burst of
creates at once, on PostgreSQL and on MariaDB.

Each of the two agents offers 1024 MiB to containers (its ``[compute]`` reservation
leaves that much of the machine's memory), room for eight 128 MiB containers. 24
creates arrive together: exactly 16 are placed, eight on each node, every one of
them is created by its agent (an agent whose node was overcommitted would refuse the
claim: Error), and the other 8 fail unscheduled ("not enough hosts"). Without the
node check at insert, schedulers that read the nodes at the same moment all chose the
same one."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, wait_for

from berth.compute.periodic.inventory import read_meminfo

pytestmark = pytest.mark.integration

ROOM_MIB = 1024
SIZE_MIB = 128
PER_NODE = ROOM_MIB // SIZE_MIB
BURST = 3 * PER_NODE


@pytest.fixture(scope="module", params=["postgresql", "mariadb"])
def fleet(request: pytest.FixtureRequest, deployment_factory: Any,
          database_maker: Any) -> Iterator[tuple[Any, list[str], list[str]]]:
    """A deployment with two agents of ROOM_MIB each and two API processes; yields it,
    the agents' host names and the APIs' URLs."""
    reserved = read_meminfo()["MemTotal"] - ROOM_MIB
    room = (f"[compute]\nreserved_host_memory_mb = {reserved}\n"
            f"ram_allocation_ratio = 1.0\ncpu_allocation_ratio = 16.0\n")
    with database_maker(request.param) as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, done.stderr
            hosts = [d.start_agent(name, extra_conf=room) for name in ("n1", "n2")]
            _, first = d.start_another_api("api1", workers=2)
            _, second = d.start_another_api("api2")
            d.url = first
            for host in hosts:
                d.wait_service(host, "up")
            yield d, hosts, [first, second]
        finally:
            d.close()


def test_a_burst_on_two_api_processes_fills_each_node_exactly(
        fleet: tuple[Any, list[str], list[str]]) -> None:
    d, hosts, urls = fleet
    body = {"image": TEST_IMAGE, "command": ["sleep", "300"], "cpu": 0.1,
            "memory": str(SIZE_MIB), "image_pull_policy": "ifnotpresent"}
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"}
    barrier = threading.Barrier(BURST)
    answers: list[tuple[int, dict[str, Any]]] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        with httpx.Client(base_url=urls[i % 2], timeout=120, headers=headers) as http:
            barrier.wait()
            resp = http.post("/v1/containers", json=body)
        with lock:
            answers.append((resp.status_code, resp.json()))

    threads = [threading.Thread(target=create, args=(i,)) for i in range(BURST)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert [code for code, _ in answers] == [202] * BURST, answers

    with d.http() as http:
        def settled() -> list[dict[str, Any]] | None:
            rows = http.get("/v1/containers").json()["containers"]
            done = [c for c in rows if c["status"] in ("Created", "Error")
                    and not c["task_state"]]
            return rows if len(done) == BURST else None

        rows: Any = wait_for(settled, 180, interval=0.5, what="every create to settle")
    placed = [c for c in rows if c["status"] == "Created"]
    unplaced = [c for c in rows if c["status"] == "Error"]
    assert Counter(c["host"] for c in placed) == {host: PER_NODE for host in hosts}, \
        [(c["host"], c["status"], c["status_reason"]) for c in rows]
    assert len(unplaced) == BURST - 2 * PER_NODE
    for c in unplaced:
        assert c["host"] is None, c
        assert "not enough hosts available" in c["status_reason"], c["status_reason"]
    # Every API process took part (the first with two workers).
    for api in d.apis:
        api.check_alive()
