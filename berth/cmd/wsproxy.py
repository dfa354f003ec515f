"""``berth-wsproxy``: the console WebSocket proxy alone (``berth serve`` runs it too).

It reads console tokens from the database (``[database] connection``) and reaches the
Docker engine of *this* node (``[docker] api_url``: the UNIX socket, or TCP with TLS),
so in a multi-node deployment run one berth-wsproxy on each compute node, with the
same ``[DEFAULT] host`` as that node's berth-compute: it serves only the containers
placed on its node. (``[websocket_proxy] base_url`` is one URL for the whole
deployment for now, so the API hands out URLs of one proxy: consoles work for the
containers of that proxy's node.)
"""

from __future__ import annotations

import logging
import ssl
import sys
from collections.abc import Sequence

from oslo_config import cfg

from berth.cmd import helptext, tls, wiring
from berth.common import log
from berth.common.tls import TLSConfigError
from berth.conf import CONF
from berth.console.docker_socket import DockerSocket, engine_address
from berth.console.proxy import ConsoleProxy, ProxySettings
from berth.console.server import ConsoleServer
from berth.db.engine import Database

LOG = logging.getLogger(__name__)


def build_console_server(conf: cfg.ConfigOpts, db: Database,
                         context: ssl.SSLContext | None = None) -> ConsoleServer:
    """The proxy as configured, over TLS with ``context`` (``tls.console_server_context``);
    ValueError when ``[docker] api_url`` is plain TCP."""
    w, d = conf.websocket_proxy, conf.docker
    settings = ProxySettings(host=w.wsproxy_host, port=w.wsproxy_port, base_url=w.base_url,
                             allowed_origins=tuple(w.allowed_origins or ()), node=conf.host,
                             serves_tls=context is not None)
    address = engine_address(d.api_url, ca_file=d.ca_file, cert_file=d.cert_file,
                             key_file=d.key_file, insecure=d.api_insecure,
                             version=d.docker_remote_api_version)
    docker = DockerSocket(address, timeout=min(float(d.default_timeout), 10.0))
    return ConsoleServer(ConsoleProxy(settings, db, docker), context)


def main(argv: Sequence[str] | None = None) -> int:
    wiring.parse_config(argv if argv is not None else sys.argv[1:], CONF,
                        prog="berth-wsproxy", description=helptext.WSPROXY)
    log.setup(use_json=CONF.use_json)
    try:
        context = tls.console_server_context(CONF)
    except TLSConfigError as err:
        LOG.error("berth-wsproxy cannot start: %s", err)
        return 2
    db = wiring.build_database(CONF, upgrade=False)
    try:
        server = build_console_server(CONF, db, context)
    except ValueError as err:
        LOG.error("berth-wsproxy cannot start: %s", err)
        return 2
    try:
        server.run()
    except OSError as err:
        LOG.error("berth-wsproxy cannot listen on %s:%s: %s. Free the port or set "
                  "[websocket_proxy] wsproxy_host / wsproxy_port.",
                  CONF.websocket_proxy.wsproxy_host, CONF.websocket_proxy.wsproxy_port, err)
        return 1
    finally:
        db.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
