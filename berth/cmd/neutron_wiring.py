"""Wiring of the Neutron network driver (``[network]driver = cni``) for each process:
the API's Neutron client, the agent's ``NeutronNetworks``, the CNI daemon's Neutron
VIF backend; and the start-up refusal of ``kuryr``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oslo_config import cfg

if TYPE_CHECKING:
    from berth.compute.neutron_networks import NeutronNetworks
    from berth.db.engine import Database
    from berth.network.neutron.client import NeutronAPI
    from berth.network.neutron.vifs import NeutronVifService

KURYR_REFUSED = (
    "berth: [network]driver = kuryr (Zun's default) needs the kuryr-libnetwork Docker "
    "plugin, which berth does not drive: set [network]driver = cni for Neutron ports "
    "plugged by berth-cni-daemon (or local for berth's own networks).")


def check_driver(conf: cfg.ConfigOpts) -> None:
    """``SystemExit`` with what to do when ``[network]driver`` cannot run."""
    if conf.network.driver == "kuryr":
        raise SystemExit(KURYR_REFUSED)


def neutron_api(conf: cfg.ConfigOpts) -> NeutronAPI | None:
    """The Neutron client with ``driver = cni``; None otherwise."""
    check_driver(conf)
    if conf.network.driver != "cni":
        return None
    from berth.network.neutron.client import NeutronError, connect

    try:
        return connect(conf)
    except NeutronError as err:
        raise SystemExit(f"berth: [network]driver = cni: {err.msg}") from err


def networks(conf: cfg.ConfigOpts, db: Database, url: str) -> NeutronNetworks:
    from berth.compute.neutron_networks import NeutronNetworks
    from berth.network.neutron.vif_client import VifClient

    api = neutron_api(conf)
    assert api is not None
    client = VifClient(url, timeout=float(conf.cni_daemon.vif_active_timeout) + 30)
    return NeutronNetworks(db, client, api, conf.host, conf.neutron.ovs_bridge)


def vif_service(conf: cfg.ConfigOpts) -> NeutronVifService | None:
    """The CNI daemon's Neutron backend with ``driver = cni``; None otherwise."""
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
