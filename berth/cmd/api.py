"""``berth-api``: the REST API and scheduler alone; agents are reached over
oslo.messaging (``transport_url``).

Run ``berth db upgrade --config-file FILE`` before starting it: like berth-compute,
berth-api does not migrate the database (several API processes may start at once) and
refuses to start on a schema that is not at its head revision. berth-api needs no
Docker engine: everything that touches containers goes to the agent of the
container's host, over ``[compute]topic`` (the same topic as its agents).

``[api]workers`` processes serve one port (``berth.api.workers``); each is a whole
API with the scheduler, and they share nothing but the database and the broker (and
the directory of their metrics files: ``berth.metrics.multiproc``).
"""

from __future__ import annotations

import logging
import os
import socket
import ssl
import sys
from collections.abc import Sequence

from berth.api import evacuation, workers
from berth.api import server as api_server
from berth.api.app import create_app
from berth.cmd import helptext, tls, wiring
from berth.common import log
from berth.common.memory import freeze_started
from berth.common.tls import TLSConfigError
from berth.conf import CONF
from berth.db import migrate
from berth.metrics import multiproc

LOG = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF, prog="berth-api",
                        description=helptext.API)
    log.setup(use_json=CONF.use_json)
    try:
        context = tls.api_context(CONF)
    except TLSConfigError as err:
        LOG.error("berth-api cannot start: %s", err)
        return 2
    if not CONF.transport_url:
        LOG.error("berth-api needs [DEFAULT]transport_url (rabbit://...) to reach the compute "
                  "agents; on one machine, run `berth serve` instead.")
        return 2
    problem = migrate.schema_problem(wiring.database_url(CONF))
    if problem:
        LOG.error("berth-api cannot start: %s", problem)
        return 2
    address = wiring.api_listen_address(CONF)
    wiring.warn_if_exposed(CONF, address)
    count = worker_count(CONF.api.workers)
    if count == 1:
        return _serve(address, None, context)
    try:
        sock = workers.listen(address, CONF.api.port)
    except OSError as err:
        LOG.error("berth-api cannot listen on %s:%s: %s", address, CONF.api.port, err)
        return 1
    LOG.info("berth-api: %d worker processes on %s://%s:%s/v1", count, tls.scheme(context),
             address, CONF.api.port)
    metrics_dir = metrics_directory(CONF.state_path, CONF.api.port)
    multiproc.enable(metrics_dir)
    try:
        return workers.Supervisor(count, lambda index: _serve(address, sock, context)).run()
    finally:
        multiproc.remove(metrics_dir)


def metrics_directory(state_path: str, port: int) -> str:
    """Where the workers' metrics files go (``berth.metrics.multiproc``):
    ``PROMETHEUS_MULTIPROC_DIR`` when the operator set it, else a directory of this
    port's under ``state_path``; emptied at start either way."""
    return os.environ.get(multiproc.ENV) or os.path.join(state_path, f"api-metrics-{port}")


def worker_count(configured: int | None) -> int:
    """``[api]workers``, or one per CPU when unset (Zun's default)."""
    return configured if configured else max(os.cpu_count() or 1, 1)


def _serve(address: str, sock: socket.socket | None, context: ssl.SSLContext | None) -> int:
    """Serve the API in this process until stopped; on ``sock`` when given (a worker),
    else on a socket of uvicorn's own; over TLS with ``context``. The engine,
    transport and application are built here, after any fork."""
    db = wiring.build_database(CONF, upgrade=False)
    transport = wiring.build_transport(CONF)
    state = wiring.build_api_state(CONF, db, transport)
    app = create_app(state, noauth=CONF.api.auth_strategy == "noauth",
                     public_endpoint=CONF.api.public_endpoint,
                     keystone=wiring.build_keystone_auth(CONF))
    LOG.info("berth-api: API on %s://%s:%s/v1 (database %s, RPC topic %s)",
             tls.scheme(context), address, CONF.api.port, db.url.split("@")[-1],
             CONF.compute.topic)
    server = api_server.Server(api_server.config(app, address, CONF.api.port,
                                                 CONF.api.header_timeout, context))
    evacuator = None
    if CONF.compute.evacuate_on_host_down:
        evacuator = evacuation.Evacuator(state, float(CONF.periodic_interval_max))
        evacuator.start()
    freeze_started()
    try:
        server.run(sockets=[sock] if sock is not None else None)
    finally:
        if evacuator is not None:
            evacuator.stop()
        transport.cleanup()
        db.dispose()
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
