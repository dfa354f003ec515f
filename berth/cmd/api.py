"""``berth-api``: the REST API and scheduler alone; agents are reached over
oslo.messaging (``transport_url``)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

import uvicorn

from berth.api.app import create_app
from berth.cmd import wiring
from berth.common import log
from berth.conf import CONF

LOG = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF)
    log.setup()
    if not CONF.transport_url:
        LOG.error("berth-api needs [DEFAULT]transport_url (rabbit://...) to reach the compute "
                  "agents; on one machine, run `berth serve` instead.")
        return 2
    db = wiring.build_database(CONF)
    transport = wiring.build_transport(CONF)
    state = wiring.build_api_state(CONF, db, transport)
    app = create_app(state, noauth=CONF.api.auth_strategy == "noauth",
                     public_endpoint=CONF.api.public_endpoint)
    address = wiring.api_listen_address(CONF)
    wiring.warn_if_exposed(CONF, address)
    uvicorn.Server(uvicorn.Config(app, host=address, port=CONF.api.port, log_config=None,
                                  access_log=False)).run()
    transport.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
