"""What ``berth-cni-daemon`` does for Neutron ports (``[network]driver = cni``): plug a
port into Open vSwitch, wait until Neutron reports it ACTIVE, unplug it, and sweep.

::

    addVif ──► veth + OVS port (ovs.OvsPlugger) ──► wait ACTIVE (status.PortStatusPoller)
                 │ an earlier OVS port of the      ▲  │ not within vif_active_timeout
                 │ port replaced: wait for the     │  └──► unplug, VIFNotReady (HTTP 504)
                 └─ agent to bind the new one ─────┘

Nothing is kept on disk: the OVS database is the record. A container's namespace that
goes takes the veth's container end with it, and the kernel removes the pair; the
sync pass then removes OVS ports whose interface is gone.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from berth.network.base import NetworkDriverError, VIFNotReady
from berth.network.neutron.ovs import NeutronVIF, OvsPlugger
from berth.network.neutron.status import PortStatusPoller

LOG = logging.getLogger(__name__)


class NeutronVifService:
    #: Seconds between two looks at OVSDB while a re-plugged port waits for the agent.
    bound_interval = 0.1

    def __init__(self, plugger: OvsPlugger, poller: PortStatusPoller,
                 vif_active_timeout: float = 60.0, bridge: str = "br-int",
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.plugger, self.poller = plugger, poller
        self.vif_active_timeout, self.bridge = vif_active_timeout, bridge
        self._clock, self._sleep = clock, sleep

    def add(self, vif: NeutronVIF) -> NeutronVIF:
        deadline = self._clock() + self.vif_active_timeout
        replaced = self.plugger.plug(vif)
        # A re-plug: Neutron still shows the status of the OVS port just replaced (ACTIVE
        # until the agent sees the change). Wait for the agent to bind the new OVS port
        # first; it reports the port down before that and up only once the new port's
        # flows are in, so an ACTIVE read after the binding is this plug's.
        ready = not replaced or self._wait_bound(vif.port_id, deadline)
        if not ready or not self.poller.wait_active(
                vif.port_id, max(0.0, deadline - self._clock())):
            LOG.error("port %s of container %s did not become ACTIVE within %s s; "
                      "unplugging it", vif.port_id, vif.container_id, self.vif_active_timeout)
            try:
                self.plugger.unplug(vif.port_id, vif.bridge)
            except NetworkDriverError as err:
                LOG.error("could not unplug port %s: %s", vif.port_id, err)
            raise VIFNotReady(key=f"port {vif.port_id} ({vif.ifname} of {vif.container_id})",
                              timeout=self.vif_active_timeout)
        LOG.info("port %s of container %s is ACTIVE", vif.port_id, vif.container_id)
        return vif

    def _wait_bound(self, port_id: str, deadline: float) -> bool:
        while not self.plugger.bound(port_id):
            if self._clock() >= deadline:
                return False
            self._sleep(self.bound_interval)
        return True

    def delete(self, port_id: str, bridge: str | None = None) -> None:
        self.plugger.unplug(port_id, bridge or self.bridge)

    def sync(self) -> int:
        """Remove OVS ports berth plugged whose veth is gone (its container's namespace
        went). Returns how many."""
        removed = 0
        for name, port_id in self.plugger.plugged(self.bridge).items():
            if os.path.exists(f"/sys/class/net/{name}"):
                continue
            LOG.warning("port %s: its interface %s is gone (container namespace ended); "
                        "removing its OVS port", port_id, name)
            self.plugger.unplug(port_id, self.bridge)
            removed += 1
        return removed
