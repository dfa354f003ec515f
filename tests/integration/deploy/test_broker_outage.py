"""R3, dependency outages (issue 21): RabbitMQ, then PostgreSQL, stopped and started
again in the middle of a create/delete load against ``berth-api`` and ``berth-compute``.
Both processes must survive each outage without a restart and reconnect on their own,
and no accepted request may be lost silently: every container the API accepted ends
Running, deleted, or in Error saying why; none stays in a task or a transitional
status.

The RabbitMQ and PostgreSQL stopped are the machine's own, which the other integration
tests (and Neutron, Cinder, Placement) use too: ``exclusive``, so the test command runs
these in its serial part, with nothing beside them (tests/conftest.py).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from support.outage import ride_out

pytestmark = [pytest.mark.integration, pytest.mark.exclusive]


def rabbitmqctl(*args: str) -> None:
    subprocess.run(["rabbitmqctl", *args], check=True, capture_output=True, timeout=120)


def postgresql(action: str) -> None:
    """Stop or start the machine's PostgreSQL cluster (the one the deployment uses)."""
    version = subprocess.run(["ls", "/etc/postgresql"], check=True, capture_output=True,
                             text=True).stdout.split()[0]
    subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", action],
                   check=True, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def deployment(deployment_factory: Any, database_maker: Any) -> Iterator[Any]:
    if shutil.which("rabbitmqctl") is None:
        pytest.skip("rabbitmqctl is not installed: the broker cannot be restarted here")
    with database_maker("postgresql") as url:
        d = deployment_factory(url)
        try:
            assert d.berth("db", "upgrade").returncode == 0
            d.start_agent("a", extra_conf="[compute]\ntask_state_timeout = 60\n"
                                          "create_task_timeout = 60\n")
            d.start_api()
            yield d
        finally:
            d.close()


def test_the_api_and_the_agent_ride_out_a_broker_restart(deployment: Any) -> None:
    ride_out(deployment, "broker restart", lambda: rabbitmqctl("stop_app"),
             lambda: rabbitmqctl("start_app"), allowed=(503, 504))


def test_the_api_and_the_agent_ride_out_a_database_outage(deployment: Any) -> None:
    if shutil.which("pg_ctlcluster") is None:
        pytest.skip("pg_ctlcluster is not installed: PostgreSQL cannot be stopped here")
    # While the database is away the API cannot answer anything: 503 says so.
    ride_out(deployment, "database outage", lambda: postgresql("stop"),
             lambda: postgresql("start"), allowed=(503, 504))


