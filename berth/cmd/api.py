"""``berth-api``: the REST API and scheduler alone; agents are reached over
oslo.messaging (``transport_url``).

Run ``berth db upgrade --config-file FILE`` before starting it: like berth-compute,
berth-api does not migrate the database (several API processes may start at once) and
refuses to start on a schema that is not at its head revision. berth-api needs no
Docker engine: everything that touches containers goes to the agent of the
container's host, over ``[compute]topic`` (the same topic as its agents).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

import uvicorn

from berth.api import server as api_server
from berth.api.app import create_app
from berth.cmd import helptext, wiring
from berth.common import log
from berth.conf import CONF
from berth.db import migrate

LOG = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF, prog="berth-api",
                        description=helptext.API)
    log.setup(use_json=CONF.use_json)
    if not CONF.transport_url:
        LOG.error("berth-api needs [DEFAULT]transport_url (rabbit://...) to reach the compute "
                  "agents; on one machine, run `berth serve` instead.")
        return 2
    problem = migrate.schema_problem(wiring.database_url(CONF))
    if problem:
        LOG.error("berth-api cannot start: %s", problem)
        return 2
    db = wiring.build_database(CONF, upgrade=False)
    transport = wiring.build_transport(CONF)
    state = wiring.build_api_state(CONF, db, transport)
    app = create_app(state, noauth=CONF.api.auth_strategy == "noauth",
                     public_endpoint=CONF.api.public_endpoint,
                     keystone=wiring.build_keystone_auth(CONF))
    address = wiring.api_listen_address(CONF)
    wiring.warn_if_exposed(CONF, address)
    LOG.info("berth-api: API on http://%s:%s/v1 (database %s, RPC topic %s)", address,
             CONF.api.port, db.url.split("@")[-1], CONF.compute.topic)
    server = uvicorn.Server(api_server.config(app, address, CONF.api.port,
                                              CONF.api.header_timeout))
    try:
        server.run()
    finally:
        transport.cleanup()
        db.dispose()
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
