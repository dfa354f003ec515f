"""This node's Docker networks of the kuryr-libnetwork plugin, one per Neutron network.

A Docker network is named after its Neutron network's id (Zun's name) and made with
the plugin as both its network and its IPAM driver (``[network]driver_name``), the
Neutron network and subnets in its options, so that the plugin uses them instead of
making its own. Several agents' threads may want the same network at once (a burst of
creates on one network): the row of ``network`` with (neutron_net_id, host), unique,
makes one of them its creator; the others wait for the creator's Docker id in the row
and retry (after 1, 3 and 7 s, as Zun), then give up with the reason. A row whose Docker network is
gone (removed by hand) is dropped and the network made again.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import docker
import docker.errors

from berth.common import exceptions as exc
from berth.db import networks as db_networks
from berth.db.engine import Database
from berth.network.neutron.client import Network as NeutronNetwork
from berth.network.neutron.client import NeutronAPI, NeutronError

LOG = logging.getLogger(__name__)

#: The losers' waits (seconds) for the creator's Docker id.
BACKOFF = (1.0, 3.0, 7.0)


def docker_options(net: NeutronNetwork, driver: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The driver options and the IPAM configuration of ``net``'s Docker network:
    the Neutron network and its (one IPv4, one IPv6) subnets by id, each subnet's CIDR
    and gateway. ``NetworkPlugFailed`` when it has no subnet or two of one version."""
    options = {"neutron.net.uuid": net.id, "neutron.net.shared": str(net.shared)}
    ipam: dict[str, Any] = {"Driver": driver,
                            "Options": {"neutron.net.shared": str(net.shared)}, "Config": []}
    for version, key in ((4, "neutron.subnet.uuid"), (6, "neutron.subnet.v6.uuid")):
        subnets = [s for s in net.subnets if s.ip_version == version]
        if len(subnets) > 1:
            raise exc.NetworkPlugFailed(
                network=net.id, reason=f"the Neutron network has {len(subnets)} IPv{version} "
                                       f"subnets; the kuryr driver takes one of each version")
        if subnets:
            options[key] = ipam["Options"][key] = subnets[0].id
            config = {"Subnet": subnets[0].cidr}
            if subnets[0].gateway_ip:
                config["Gateway"] = subnets[0].gateway_ip
            ipam["Config"].append(config)
    if not ipam["Config"]:
        raise exc.NetworkPlugFailed(network=net.id, reason="the Neutron network has no subnet")
    return options, ipam


class KuryrDockerNetworks:
    """The node's Docker networks of Neutron networks, and endpoints on them.
    Thread-safe."""

    def __init__(self, db: Database, api: Callable[[], docker.APIClient], neutron: NeutronAPI,
                 host: str, driver: str = "kuryr", sleep: Callable[[float], None] = time.sleep
                 ) -> None:
        self.db, self._api, self.neutron, self.host, self.driver = db, api, neutron, host, driver
        self._sleep = sleep
        self._known: set[str] = set()      # Docker networks seen to exist
        self._lock = threading.Lock()

    def ensure(self, neutron_net_id: str, project_id: str | None = None,
               user_id: str | None = None) -> str:
        """The name of the node's Docker network of ``neutron_net_id``, made when
        missing. ``NetworkPlugFailed`` with the reason when it cannot be made."""
        with self._lock:
            if neutron_net_id in self._known:
                return neutron_net_id
        for wait in (*BACKOFF, None):
            if self._attempt(neutron_net_id, project_id, user_id):
                with self._lock:
                    self._known.add(neutron_net_id)
                return neutron_net_id
            if wait is None:
                break
            LOG.info("Docker network of Neutron network %s is being made by another "
                     "request; retrying in %.0f s", neutron_net_id, wait)
            self._sleep(wait)
        raise exc.NetworkPlugFailed(
            network=neutron_net_id,
            reason=f"its Docker network on host {self.host} was still being made by another "
                   f"request after {sum(BACKOFF):.0f} s; try again")

    def _attempt(self, net_id: str, project_id: str | None, user_id: str | None) -> bool:
        """True once the Docker network exists and its row records it."""
        row = db_networks.find_docker(self.db, net_id, self.host)
        if row is not None:
            docker_id = self._docker_id(net_id)
            if row.network_id and docker_id == row.network_id:
                return True
            if row.network_id or self._age(row) > 120:
                # its Docker network is gone (or its creator died before making it)
                LOG.warning("dropping the record of Docker network %s (Neutron network %s): "
                            "%s", row.network_id or "(never made)", net_id,
                            "the engine has it no longer" if row.network_id else
                            "its creator did not finish")
                db_networks.destroy(self.db, row.uuid)
            return False
        row = db_networks.claim_docker(self.db, net_id, self.host, {
            "name": net_id, "project_id": project_id, "user_id": user_id})
        if row is None:
            return False                  # another request is the creator
        try:
            docker_id = self._docker_id(net_id) or self._create(net_id)
        except BaseException:
            db_networks.destroy(self.db, row.uuid)
            raise
        db_networks.set_docker_id(self.db, row.uuid, docker_id)
        return True

    @staticmethod
    def _age(row: Any) -> float:
        created = getattr(row, "created_at", None)
        if created is None:
            return 0.0
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        return (now - created.replace(tzinfo=None)).total_seconds()

    def _docker_id(self, name: str) -> str | None:
        try:
            found = [n for n in self._api().networks(names=[name]) if n.get("Name") == name]
        except docker.errors.DockerException as err:
            raise exc.NetworkPlugFailed(network=name, reason=f"Docker: {err}") from err
        return str(found[0]["Id"]) if found else None

    def _create(self, net_id: str) -> str:
        try:
            net = self.neutron.network(net_id)
        except NeutronError as err:
            raise exc.NetworkPlugFailed(network=net_id, reason=err.msg) from err
        options, ipam = docker_options(net, self.driver)
        try:
            made = self._api().create_network(
                net_id, driver=self.driver, options=options, ipam=ipam,
                enable_ipv6="neutron.subnet.v6.uuid" in options)
        except docker.errors.DockerException as err:
            raise exc.NetworkPlugFailed(
                network=net_id, reason=f"Docker could not make its network with the "
                                       f"{self.driver!r} plugin: {_explain(err)}") from err
        LOG.info("made Docker network %s (%s) of Neutron network %s with the %s plugin",
                 net_id, str(made["Id"])[:12], net_id, self.driver)
        return str(made["Id"])

    def remove(self, neutron_net_id: str) -> None:
        """The node's Docker network of ``neutron_net_id`` and its row are gone."""
        with self._lock:
            self._known.discard(neutron_net_id)
        try:
            self._api().remove_network(neutron_net_id)
        except docker.errors.NotFound:
            pass
        except docker.errors.DockerException as err:
            raise exc.NetworkPlugFailed(network=neutron_net_id, reason=_explain(err)) from err
        row = db_networks.find_docker(self.db, neutron_net_id, self.host)
        if row is not None:
            db_networks.destroy(self.db, row.uuid)

    # -- a container's endpoints --

    def connect(self, container_id: str, name: str, ipv4: str | None, ipv6: str | None
                ) -> None:
        try:
            self._api().connect_container_to_network(
                container_id, name, ipv4_address=ipv4, ipv6_address=ipv6)
        except docker.errors.DockerException as err:
            with self._lock:
                self._known.discard(name)     # a network removed by hand: made again
            raise exc.NetworkPlugFailed(network=name, reason=_explain(err)) from err

    def disconnect(self, container_id: str, name: str) -> None:
        """Gone from the network; no error when it was not on it (or is gone)."""
        try:
            self._api().disconnect_container_from_network(container_id, name, force=True)
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as err:
            if "is not connected" in str(err):
                return
            raise exc.NetworkPlugFailed(network=name, reason=_explain(err)) from err
        except docker.errors.DockerException as err:
            raise exc.NetworkPlugFailed(network=name, reason=_explain(err)) from err

    def attached(self, container_id: str) -> list[str]:
        """The names of the Docker networks the container is on."""
        try:
            info = self._api().inspect_container(container_id)
        except docker.errors.DockerException as err:
            raise exc.NetworkPlugFailed(network="(all)", reason=f"Docker: {err}") from err
        return list(((info.get("NetworkSettings") or {}).get("Networks") or {}).keys())


def _explain(err: Exception) -> str:
    text = str(getattr(err, "explanation", None) or err)
    if "legacy plugin" in text or "plugin not found" in text or "connection refused" in text:
        text += (" (is kuryr-libnetwork running, with its spec file in /etc/docker/plugins?"
                 " .ci/kuryr-ci.sh start does both)")
    return text
