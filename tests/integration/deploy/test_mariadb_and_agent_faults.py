"""R3 on MariaDB, and R1 for ``berth-compute`` alone over RabbitMQ (issue 21).

- The database outage of test_broker_outage.py, on a MariaDB server of the test's own
  (stopped for a while, then started again) under the same create/delete load: the
  API and the agent ride it out without a restart, and no accepted request is lost.
- ``berth-compute`` killed with SIGKILL at random moments of that load and started
  again: afterwards the reliability checker finds the database, Docker and the
  allocations in agreement (no orphan Docker container, nothing stuck, every status
  what Docker says), and every request the API accepted is done or in Error saying why.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import docker
import pytest
from reliability.checker import problems
from reliability.conftest import scale
from support.berth_proc import wait_for
from support.outage import BUSY, Load, assert_accounted_for, ride_out
from support.private_mariadb import PrivateMariaDB

from berth.db.engine import Database

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def deployment(mariadb_deployment: Callable[[str], Any]) -> Any:
    return mariadb_deployment("[compute]\ntask_state_timeout = 60\ncreate_task_timeout = 60\n")


def test_the_api_and_the_agent_ride_out_a_mariadb_outage(deployment: Any,
                                                         mariadb: PrivateMariaDB) -> None:
    ride_out(deployment, "MariaDB outage", mariadb.stop, mariadb.start, allowed=(503, 504))


def test_the_agent_killed_at_random_moments_loses_nothing(deployment: Any,
                                                          mariadb: PrivateMariaDB) -> None:
    kills = scale(3, 20)
    rng = random.Random(3)
    host, agent = next(iter(deployment.agents.items()))
    engine = docker.from_env()
    db = Database(mariadb.url)
    try:
        with deployment.http() as http:
            load = Load(http, allowed=(503, 504))
            worker = threading.Thread(target=load.run)
            worker.start()
            try:
                for _ in range(kills):
                    time.sleep(rng.uniform(0.5, 3.0))
                    agent.stop(signal.SIGKILL)
                    deployment.agents.pop(host)
                    deployment.start_agent(host.rsplit("-", 1)[-1],
                                           extra_conf="[compute]\ntask_state_timeout = 60\n"
                                                      "create_task_timeout = 60\n")
                    agent = deployment.agents[host]
            finally:
                load.stop.set()
                worker.join(60)
            assert load.server_errors == []

            def settled() -> bool:
                rows = http.get("/v1/containers").json()["containers"]
                return not [r for r in rows if r["task_state"] or r["status"] in BUSY]
            wait_for(settled, 180, 1.0, what="every accepted request to settle")
            time.sleep(2.0)        # one more sync over the settled rows
            assert problems(db, host, engine, http) == []
            rows = {r["uuid"]: r for r in http.get("/v1/containers").json()["containers"]}
            assert_accounted_for(load, rows)
            print(f"R1 (berth-compute over RabbitMQ): {kills} SIGKILLs; "
                  f"{len(load.created)} creates and {len(load.deleted)} deletes accepted; "
                  f"{sum(r['status'] == 'Error' for r in rows.values())} in Error")
            for uuid in rows:
                http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
            wait_for(lambda: http.get("/v1/containers").json()["containers"] == [], 120,
                     0.5, what="the load's containers to be deleted")
    finally:
        db.dispose()
        engine.close()
