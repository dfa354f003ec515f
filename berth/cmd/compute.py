"""``berth-compute``: one node's compute agent, serving RPC over oslo.messaging.

Deployment order: ``berth db upgrade --config-file FILE`` first (berth-compute never
migrates the database; it refuses to start on a schema that is not at its head
revision), then ``berth-compute`` on every node (each with its own ``[DEFAULT]host``)
and ``berth-api``. All of them share ``[database]connection`` (PostgreSQL or MariaDB),
``[DEFAULT]transport_url`` (RabbitMQ), ``[compute]topic`` (keep it the same on the API
and its agents; a different topic keeps another deployment on the same RabbitMQ vhost
apart) and ``[DEFAULT]auth_encryption_key``.

This module and what it imports stay clear of the API (FastAPI, pydantic): the agent
needs none of it (``python -X importtime -c "import berth.cmd.compute"`` shows it).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Sequence

from berth.cmd import helptext, wiring
from berth.common import log
from berth.common.memory import freeze_started, limit_malloc_arenas
from berth.conf import CONF

LOG = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    limit_malloc_arenas()
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF,
                        prog="berth-compute", description=helptext.COMPUTE)
    log.setup(use_json=CONF.use_json)
    if not CONF.transport_url:
        LOG.error("berth-compute needs [DEFAULT]transport_url (rabbit://...) so that the API "
                  "can reach it; on one machine, run `berth serve` instead.")
        return 2
    from berth.db import migrate

    problem = migrate.schema_problem(wiring.database_url(CONF))
    if problem:
        LOG.error("berth-compute cannot start: %s", problem)
        return 2
    db = wiring.build_database(CONF, upgrade=False)
    transport = wiring.build_transport(CONF)
    agent = wiring.build_agent(CONF, db, transport)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    health = wiring.build_health_server(CONF, agent)   # up (not ready) during start-up
    try:
        if health is not None:
            health.start()
        agent.start()
    except Exception as err:  # noqa: BLE001 - report and exit
        LOG.error("the compute agent %s could not start: %s. Check that the Docker engine "
                  "answers at %s, that the database and RabbitMQ are reachable and that "
                  "[compute]metrics_port is free.", CONF.host, err, CONF.docker.api_url)
        if health is not None:
            health.stop()
        transport.cleanup()
        return 1
    freeze_started()
    stop.wait()
    if health is not None:
        health.stop()
    agent.stop()
    transport.cleanup()
    db.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
