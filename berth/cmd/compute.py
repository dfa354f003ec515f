"""``berth-compute``: one node's compute agent, serving RPC over oslo.messaging."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Sequence

from berth.cmd import wiring
from berth.common import log
from berth.conf import CONF

LOG = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF)
    log.setup()
    if not CONF.transport_url:
        LOG.error("berth-compute needs [DEFAULT]transport_url (rabbit://...) so that the API "
                  "can reach it; on one machine, run `berth serve` instead.")
        return 2
    db = wiring.build_database(CONF, upgrade=False)
    transport = wiring.build_transport(CONF)
    agent = wiring.build_agent(CONF, db, transport)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    agent.start()
    stop.wait()
    agent.stop()
    transport.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
