"""``berth-cni-daemon``: plugs containers into berth's local networks for ``berth-cni``.

Listens on ``[cni_daemon] cni_daemon_host``:``cni_daemon_port`` (127.0.0.1:9036), keeps
its attachments in ``[cni_daemon] registry_file``, recovers them at start (undoing what
a killed daemon left half done), then runs the sync pass every ``sync_interval`` s.
Runs as root (netlink in other namespaces, iptables). SIGTERM or SIGINT stop it; the
attachments stay (containers keep their network while the daemon is down).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Sequence
from types import FrameType

from oslo_config import cfg

from berth.cni.registry import Registry
from berth.cni.server import DaemonHTTPServer
from berth.cni.service import CniService
from berth.cni.sync import AttachmentSyncer
from berth.common import log
from berth.conf import CONF
from berth.network.bridge import BridgeDriver
from berth.network.firewall import Firewall

LOG = logging.getLogger(__name__)


def build_service(conf: cfg.ConfigOpts) -> CniService:
    c = conf.cni_daemon
    return CniService(BridgeDriver(), Firewall(), Registry(c.registry_file),
                      vif_active_timeout=float(c.vif_active_timeout))


def main(argv: Sequence[str] | None = None) -> int:
    CONF(args=list(argv if argv is not None else sys.argv[1:]), project="berth",
         default_config_files=[])
    log.setup()
    c = CONF.cni_daemon
    service = build_service(CONF)
    try:
        server = DaemonHTTPServer(service, c.cni_daemon_host, c.cni_daemon_port, c.worker_num)
    except OSError as err:
        LOG.error("berth-cni-daemon cannot listen on %s:%s: %s. Free the port or set "
                  "[cni_daemon] cni_daemon_host / cni_daemon_port.", c.cni_daemon_host,
                  c.cni_daemon_port, err)
        return 1
    syncer = AttachmentSyncer(service.sync, interval=float(c.sync_interval))

    def stop(signum: int, frame: FrameType | None) -> None:
        LOG.info("berth-cni-daemon: signal %d, stopping", signum)
        threading.Thread(target=server.shutdown, name="cni-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # The socket listens already: plugins that call during the recovery wait in its
    # backlog, and are served once it is done, so no add races the recovery.
    try:
        service.recover()
    except Exception:
        LOG.exception("berth-cni-daemon: recovering the registry %s failed", c.registry_file)
        server.server_close()
        return 1
    server.ready.set()
    serving = threading.Thread(target=server.serve_forever, name="cni-http", daemon=True)
    serving.start()
    syncer.start()
    LOG.info("berth-cni-daemon: serving on http://%s:%d (registry %s)", c.cni_daemon_host,
             server.port, c.registry_file)
    try:
        while serving.is_alive():
            serving.join(timeout=1)
    finally:
        syncer.stop()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
