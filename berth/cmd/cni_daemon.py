"""``berth-cni-daemon``: plugs containers into berth's local networks for ``berth-cni``.

Listens on ``[cni_daemon] cni_daemon_host``:``cni_daemon_port`` (127.0.0.1:9036), keeps
its attachments in ``[cni_daemon] registry_file``, recovers them at start (undoing what
a killed daemon left half done), then runs the sync pass every ``sync_interval`` s.
With ``[network]driver = cni`` it also plugs the agent's Neutron ports into Open
vSwitch and polls Neutron until they are ACTIVE (``berth.network.neutron``).
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

from berth.cmd import helptext, neutron_wiring
from berth.cni.daemon import CniDaemon, DaemonSettings
from berth.common import log
from berth.conf import CONF
from berth.network.overlay.node import NodeOverlay
from berth.version import version_string

LOG = logging.getLogger(__name__)


def settings(conf: cfg.ConfigOpts) -> DaemonSettings:
    c = conf.cni_daemon
    return DaemonSettings(registry_file=c.registry_file, host=c.cni_daemon_host,
                          port=c.cni_daemon_port, workers=c.worker_num,
                          vif_active_timeout=float(c.vif_active_timeout),
                          sync_interval=float(c.sync_interval),
                          sweep_orphan_veths=c.sweep_orphan_veths,
                          network_linger=float(c.network_linger),
                          overlay_interval=float(conf.network.local_overlay_interval))


def overlay(conf: cfg.ConfigOpts) -> NodeOverlay | None:
    """The node's part of spanning local networks ([network]local_overlay), on the
    database; None when off (or not berth's local networks)."""
    if not conf.network.local_overlay or conf.network.driver != "local":
        return None
    from berth.db.engine import Database, default_url
    from berth.db.overlay import OverlayStore

    # The nodes share their networks through the database: every node's CNI daemon
    # needs the deployment's [database] connection (the default SQLite file serves a
    # single ``berth serve`` only).
    url = conf.database.connection or default_url(conf.state_path)
    store = OverlayStore(Database(url, pool_size=2), conf.service_down_time)
    return NodeOverlay(store, conf.host, conf.network.local_tunnel_ip or conf.my_ip)


def main(argv: Sequence[str] | None = None) -> int:
    # What wiring.read_config does, without importing berth.cmd.wiring: that module
    # loads the compute agent, 26 MiB this daemon has no use for.
    CONF(args=list(argv if argv is not None else sys.argv[1:]), project="berth",
         default_config_files=[], version=version_string(), prog="berth-cni-daemon",
         description=helptext.CNI_DAEMON, epilog=helptext.CONFIG)
    log.setup(use_json=CONF.use_json)
    daemon = CniDaemon(settings(CONF), neutron=neutron_wiring.vif_service(CONF),
                       overlay=overlay(CONF))
    try:
        daemon.start()
    except OSError as err:
        LOG.error("berth-cni-daemon cannot listen on %s:%s: %s. Free the port or set "
                  "[cni_daemon] cni_daemon_host / cni_daemon_port.",
                  CONF.cni_daemon.cni_daemon_host, CONF.cni_daemon.cni_daemon_port, err)
        return 1
    except Exception:
        LOG.exception("berth-cni-daemon: recovering the registry %s failed",
                      CONF.cni_daemon.registry_file)
        return 1

    def stop(signum: int, frame: FrameType | None) -> None:
        LOG.info("berth-cni-daemon: signal %d, stopping", signum)
        # shutdown() waits for the serving loop, which runs in another thread.
        threading.Thread(target=daemon.stop, name="cni-stop", daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not daemon.wait(1.0):  # short joins, so that the signal handlers run
        pass
    daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
