"""``CniDaemon``: the CNI daemon's parts, started and stopped together.

``berth-cni-daemon`` runs one as its own process; ``berth serve`` can run one inside
(the issue's embedded default), with the same settings. Start-up order matters:

    bind the socket ──► recover the registry ──► serve requests ──► sync every N s

Plugins that call during the recovery wait in the listening socket's backlog, so no
add races the recovery, and none is refused because the daemon is starting.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from berth.cni.client import DaemonClient, InProcessClient
from berth.cni.registry import Registry
from berth.cni.server import DaemonHTTPServer
from berth.cni.service import CniService, FirewallRules
from berth.cni.sync import AttachmentSyncer
from berth.network.base import NetworkDriver, NetworkDriverError
from berth.network.neutron.vifs import NeutronVifService
from berth.network.overlay.node import NodeOverlay

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class DaemonSettings:
    registry_file: str
    host: str = "127.0.0.1"
    port: int = 9036
    workers: int = 30
    vif_active_timeout: float = 60.0
    sync_interval: float = 60.0
    sweep_orphan_veths: bool = True
    network_linger: float = 0.0
    #: Seconds between two overlay passes (``[network]local_overlay_interval``).
    overlay_interval: float = 2.0


class CniDaemon:
    def __init__(self, settings: DaemonSettings, driver: NetworkDriver | None = None,
                 firewall: FirewallRules | None = None,
                 neutron: NeutronVifService | None = None,
                 overlay: NodeOverlay | None = None) -> None:
        if driver is None or firewall is None:  # the real ones need pyroute2 and iptables
            from berth.network.bridge import BridgeDriver
            from berth.network.firewall import DualStackFirewall

            driver, firewall = driver or BridgeDriver(), firewall or DualStackFirewall()
        self.settings = settings
        self.service = CniService(driver, firewall, Registry(settings.registry_file),
                                  vif_active_timeout=settings.vif_active_timeout,
                                  sweep_orphan_veths=settings.sweep_orphan_veths,
                                  network_linger=settings.network_linger, overlay=overlay)
        self.syncer = AttachmentSyncer(self.service.sync, interval=settings.sync_interval)
        #: Spanning networks' tables and claims from the database ([network]local_overlay).
        self.overlay_syncer = (AttachmentSyncer(self.service.reconcile_overlay,
                                                interval=settings.overlay_interval,
                                                name="overlay pass",
                                                did="changed %d claim(s) and entries")
                               if overlay is not None else None)
        #: The cni driver's Neutron ports ([network]driver = cni), with their own sync.
        self.neutron = neutron
        self.neutron_syncer = (AttachmentSyncer(neutron.sync, interval=settings.sync_interval)
                               if neutron is not None else None)
        self._server: DaemonHTTPServer | None = None
        self._serving: threading.Thread | None = None

    @property
    def url(self) -> str:
        port = self._server.port if self._server else self.settings.port
        return f"http://{self.settings.host}:{port}"

    def client(self) -> DaemonClient:
        """The client of this daemon for the agent of the same process (``berth
        serve``): its calls skip HTTP (``InProcessClient``). Once started."""
        if self._server is None:
            raise RuntimeError("the CNI daemon is not started")
        return InProcessClient(self._server, self.url)

    def start(self) -> None:
        """Listen, recover, serve, sync. ``OSError`` when the address is taken; the
        recovery's errors propagate (and nothing is left listening)."""
        s = self.settings
        server = DaemonHTTPServer(self.service, s.host, s.port, s.workers, self.neutron)
        try:
            self.service.recover()
        except BaseException:
            server.server_close()
            raise
        server.ready.set()
        self._server = server
        self._serving = threading.Thread(target=server.serve_forever, name="cni-http",
                                         daemon=True)
        self._serving.start()
        self.syncer.start()
        if self.overlay_syncer is not None:
            self.overlay_syncer.start()
        if self.neutron_syncer is not None:
            self.neutron_syncer.start()
        LOG.info("CNI daemon serving on %s (registry %s)", self.url, s.registry_file)

    def healthy(self) -> bool:
        """Serving, and the sync pass has not been failing for two intervals."""
        serving = self._serving is not None and self._serving.is_alive()
        return serving and (self.syncer.healthy() or not self.syncer.failing)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for ``stop`` (called from another thread) up to ``timeout`` s; whether
        the daemon has stopped serving."""
        thread = self._serving
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def stop(self) -> None:
        """Stop serving and syncing; attachments stay as they are, networks without
        attachments (kept for ``network_linger``) go. Safe twice."""
        self.syncer.stop()
        if self.overlay_syncer is not None:
            self.overlay_syncer.stop()
        if self.neutron_syncer is not None:
            self.neutron_syncer.stop()
        if self.neutron is not None:
            self.neutron.poller.stop()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
            try:
                self.service.drop_idle_networks()
            except (NetworkDriverError, OSError) as err:
                LOG.error("could not remove the idle networks (%s); the next start does",
                          err)
