"""Three real nodes: ``berth-compute`` agents each with a Docker engine of its own in
its own network namespace (``node_engines``), two ``berth-api`` processes with
``[compute]evacuate_on_host_down``, over RabbitMQ, on PostgreSQL and on MariaDB.

* creates land on the node the scheduler chose (spread: two on each), and their
  Docker containers exist in that node's engine and no other; each create's action
  is over, its two events ended in Success;
* an action and a call reach the container's own node (a stop shows in that engine;
  docker top answers from it);
* a node whose agent dies has its containers evacuated, each exactly once (one
  ``evacuate`` action, though two API processes check), recreated and running on the
  other nodes; when the agent comes back, its recovery removes its stale copies and
  leaves every row, and the other nodes' containers, as they were.
"""

from __future__ import annotations

import json
import signal
from collections import Counter
from collections.abc import Iterator
from typing import Any

import docker
import pytest
from support.berth_proc import TEST_IMAGE, wait_for

pytestmark = pytest.mark.integration

COMMAND = ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]


class Fleet:
    def __init__(self, deployment: Any, engines: dict[str, str]) -> None:
        self.d = deployment
        self.node_of: dict[str, str] = {}      # agent host -> node engine name
        self.engine_of: dict[str, str] = {}    # agent host -> engine url
        for name, url in engines.items():
            host = self.d.start_agent(name, extra_conf=self.agent_conf(url))
            self.node_of[host], self.engine_of[host] = name, url

    @staticmethod
    def agent_conf(url: str) -> str:
        return f"[docker]\napi_url = {url}\n"

    def engine_containers(self, host: str) -> dict[str, Any]:
        """{berth uuid: Docker container} of every berth container in host's engine."""
        client = docker.DockerClient(base_url=self.engine_of[host])
        try:
            return {c.labels["berth.container.uuid"]: c for c in client.containers.list(
                all=True, ignore_removed=True, filters={"label": "berth.container.uuid"})}
        finally:
            client.close()

    def restart_agent(self, host: str) -> None:
        name = self.node_of[host]
        log = self.d.root / f"{host}.log"
        log.rename(log.with_suffix(".before-restart.log"))
        assert self.d.start_agent(name, extra_conf=self.agent_conf(self.engine_of[host])) \
            == host


@pytest.fixture(scope="module", params=["postgresql", "mariadb"])
def fleet(request: pytest.FixtureRequest, deployment_factory: Any, database_maker: Any,
          node_engines: dict[str, str]) -> Iterator[Fleet]:
    with database_maker(request.param) as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, done.stderr
            evacuate = "[compute]\nevacuate_on_host_down = true"
            f = Fleet(d, node_engines)
            d.api, d.url = d.start_another_api("api1", extra_conf=evacuate)
            d.start_another_api("api2", extra_conf=evacuate)
            for host in f.node_of:
                d.wait_service(host, "up")
            yield f
        finally:
            d.close()
            for url in node_engines.values():
                _remove_berth_containers(url)


def _remove_berth_containers(url: str) -> None:
    client = docker.DockerClient(base_url=url)
    try:
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": "berth.container.uuid"}):
            c.remove(force=True)
    finally:
        client.close()


def _settled(http: Any, uuid: str, want: str, not_on: str | None = None
             ) -> dict[str, Any] | None:
    """The container once it is ``want`` with no task (and on a host other than
    ``not_on``), else None."""
    c = http.get(f"/v1/containers/{uuid}").json()
    if c["status"] == "Error":
        raise AssertionError(f"container {uuid} went to Error: {c['status_reason']}")
    if not_on is not None and c["host"] == not_on:
        return None
    return c if c["status"] == want and not c["task_state"] else None


def test_creates_land_on_the_chosen_node_and_actions_reach_it(fleet: Fleet) -> None:
    with fleet.d.http() as http:
        made = [http.post("/v1/containers", params={"run": "true"}, json={
            "name": f"spread-{i}", "image": TEST_IMAGE, "command": COMMAND,
            "memory": "64", "cpu": 0.1, "image_pull_policy": "ifnotpresent"}).json()
            for i in range(6)]
        rows = [wait_for(lambda m=m: _settled(http, m["uuid"], "Running"), 120,
                         interval=0.5, what="Running") for m in made]
        hosts = {r["uuid"]: r["host"] for r in rows}       # type: ignore[index]
        assert Counter(hosts.values()) == {host: 2 for host in fleet.node_of}, hosts
        for host in fleet.node_of:
            there = fleet.engine_containers(host)
            assert set(there) == {u for u, h in hosts.items() if h == host}
            assert all(c.status == "running" for c in there.values())
        # Each create's action holds its two events, ended in Success, and is over
        # (PostgreSQL's writes end them in the same statements as the row's).
        for uuid in hosts:
            (create,) = http.get(f"/v1/containers/{uuid}/container_actions"
                                 ).json()["containerActions"]
            assert create["action"] == "create" and create["finish_time"], create
            events = http.get(f"/v1/containers/{uuid}/container_actions/"
                              f"{create['request_id']}").json()["events"]
            assert sorted((e["event"], e["result"], bool(e["finish_time"]))
                          for e in events) == [
                ("compute__do_container_create", "Success", True),
                ("compute__do_container_start", "Success", True)], events
        # A call (docker top) answers from the container's own engine: no other holds it.
        for uuid in hosts:
            top = http.get(f"/v1/containers/{uuid}/top")
            assert top.status_code == 200, top.text
            assert any("sh -c trap" in " ".join(p) for p in top.json()["Processes"]), \
                json.dumps(top.json())

        victim = made[0]["uuid"]
        assert http.post(f"/v1/containers/{victim}/stop").status_code == 202
        wait_for(lambda: _settled(http, victim, "Stopped"), 60, interval=0.5,
                 what="Stopped")
        assert fleet.engine_containers(hosts[victim])[victim].status == "exited"


def test_a_dead_nodes_containers_are_evacuated_once_and_its_copies_removed_on_return(
        fleet: Fleet) -> None:
    d = fleet.d
    with d.http() as http:
        rows = http.get("/v1/containers").json()["containers"]
        dead = rows[0]["host"]
        on_dead = {r["uuid"]: r for r in rows if r["host"] == dead}
        elsewhere = {r["uuid"]: r for r in rows if r["host"] != dead}
        assert on_dead and elsewhere
        stale = {u: c.id for u, c in fleet.engine_containers(dead).items()}
        assert set(stale) == set(on_dead)

        d.agents[dead].stop(signal.SIGKILL)          # its engine and containers live on
        # Until the node is reported down, a show still asks its (dead) agent, and
        # waits for rpc_call_timeout: look at the containers only from then on.
        d.wait_service(dead, "down", timeout=60)
        moved = {}
        for uuid, before in on_dead.items():
            want = "Running" if before["status"] == "Running" else "Stopped"
            if want == "Stopped":
                want = "Created"                       # rebuilt, not started
            moved[uuid] = wait_for(lambda u=uuid, w=want: _settled(http, u, w, not_on=dead),
                                   120, interval=0.5, what=f"{uuid} evacuated")
        for uuid, row in moved.items():
            assert row["host"] not in (dead, None), row         # type: ignore[index]
            new = fleet.engine_containers(row["host"])[uuid]     # type: ignore[index]
            assert new.id != stale[uuid]
            records = http.get(f"/v1/containers/{uuid}/container_actions").json()
            evacuations = [a for a in records["containerActions"]
                           if a["action"] == "evacuate"]
            assert len(evacuations) == 1, records
            assert f"host {dead} is down" in evacuations[0]["message"]
        # The dead node's engine still runs its copies: nobody could reach it.
        assert set(fleet.engine_containers(dead)) == set(on_dead)

        fleet.restart_agent(dead)
        wait_for(lambda: not fleet.engine_containers(dead), 90, interval=0.5,
                 what=f"{dead} to remove its stale copies")
        for uuid, row in moved.items():
            now = http.get(f"/v1/containers/{uuid}").json()
            assert (now["host"], now["status"]) == (row["host"], row["status"])  # type: ignore[index]
        for uuid, row in elsewhere.items():
            now = http.get(f"/v1/containers/{uuid}").json()
            assert (now["host"], now["status"]) == (row["host"], row["status"])
            assert uuid in fleet.engine_containers(row["host"])
