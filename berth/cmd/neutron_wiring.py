"""Wiring of the Neutron network drivers (``[network]driver = cni`` and ``kuryr``) for
each process: the API's Neutron client, the agent's ``NeutronNetworks`` (cni) or
``KuryrNetworks`` (kuryr), the CNI daemon's Neutron VIF backend (cni)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oslo_config import cfg

if TYPE_CHECKING:
    from berth.compute.kuryr_networks import KuryrNetworks
    from berth.compute.neutron_networks import NeutronNetworks
    from berth.db.engine import Database
    from berth.network.neutron.client import NeutronAPI
    from berth.network.neutron.vifs import NeutronVifService

#: The drivers whose containers have Neutron ports.
NEUTRON_DRIVERS = ("cni", "kuryr")


def neutron_api(conf: cfg.ConfigOpts) -> NeutronAPI | None:
    """The Neutron client with ``driver = cni`` or ``kuryr``; None otherwise."""
    if conf.network.driver not in NEUTRON_DRIVERS:
        return None
    from berth.network.neutron.client import NeutronError, connect

    try:
        return connect(conf)
    except NeutronError as err:
        raise SystemExit(f"berth: [network]driver = {conf.network.driver}: {err.msg}"
                         ) from err


def networks(conf: cfg.ConfigOpts, db: Database, url: str) -> NeutronNetworks:
    from berth.compute.neutron_networks import NeutronNetworks
    from berth.network.neutron.vif_client import VifClient

    api = neutron_api(conf)
    assert api is not None
    client = VifClient(url, timeout=float(conf.cni_daemon.vif_active_timeout) + 30)
    return NeutronNetworks(db, client, api, conf.host, conf.neutron.ovs_bridge)


def kuryr_networks(conf: cfg.ConfigOpts, db: Database, docker_api: Callable[[], Any]
                   ) -> KuryrNetworks:
    """The agent's ``KuryrNetworks``: Docker networks of the ``[network]driver_name``
    plugin on the engine ``docker_api`` reaches."""
    from berth.compute.kuryr_networks import KuryrNetworks
    from berth.network.kuryr.docker_networks import KuryrDockerNetworks

    api = neutron_api(conf)
    assert api is not None
    networks = KuryrDockerNetworks(db, docker_api, api, conf.host, conf.network.driver_name)
    return KuryrNetworks(db, api, conf.host, networks,
                         active_timeout=float(conf.cni_daemon.vif_active_timeout))


def vif_service(conf: cfg.ConfigOpts) -> NeutronVifService | None:
    """The CNI daemon's Neutron backend with ``driver = cni``; None otherwise."""
    if conf.network.driver != "cni":
        return None
    api = neutron_api(conf)
    if api is None:
        return None
    from berth.network.neutron.ovs import OvsPlugger
    from berth.network.neutron.status import PortStatusPoller
    from berth.network.neutron.vifs import NeutronVifService

    host = conf.host
    poller = PortStatusPoller(lambda: api.port_statuses(host), interval=1.0)
    return NeutronVifService(OvsPlugger(), poller,
                             float(conf.cni_daemon.vif_active_timeout),
                             conf.neutron.ovs_bridge)
