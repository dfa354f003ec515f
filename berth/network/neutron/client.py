"""Neutron through openstacksdk on a keystoneauth session: the few calls berth makes,
with plain values out and the SDK's and keystoneauth's errors translated here.

Errors (under ``NetworkDriverError``)::

    NeutronError                Neutron refused or failed (its message quoted)
    ├── NeutronUnavailable      Neutron does not answer (connection refused, timeout)
    ├── NeutronNotFound         no network / port / subnet / security group of that name or id
    └── NeutronConflict         a port in use, an address taken, a MAC taken
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from berth.network.base import NetworkDriverError

LOG = logging.getLogger(__name__)

#: ``device_owner`` of the ports berth binds (Zun: ``compute:<availability zone>``).
DEVICE_OWNER = "compute:berth"


class NeutronError(NetworkDriverError):
    message = "Neutron: %(reason)s"


class NeutronUnavailable(NeutronError):
    message = ("Neutron at %(endpoint)s does not answer (%(reason)s). Start it, or check "
               "[neutron]endpoint_override and the catalog.")


class NeutronNotFound(NeutronError):
    message = "%(reason)s"


class NeutronConflict(NeutronError):
    message = "%(reason)s"


@dataclass(frozen=True, slots=True)
class Subnet:
    id: str
    cidr: str
    ip_version: int
    gateway_ip: str | None


@dataclass(frozen=True, slots=True)
class Network:
    id: str
    name: str
    project_id: str
    shared: bool
    mtu: int
    subnets: tuple[Subnet, ...] = ()


@dataclass(frozen=True, slots=True)
class Port:
    id: str
    network_id: str
    mac: str
    #: (address, subnet id) pairs, as Neutron lists them.
    fixed_ips: tuple[tuple[str, str], ...]
    status: str
    device_id: str
    project_id: str
    security_groups: tuple[str, ...] = ()
    bridge: str | None = None
    host: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    name: str = ""


def _port(p: Any) -> Port:
    details = p.binding_vif_details or {}
    return Port(id=p.id, network_id=p.network_id, mac=p.mac_address,
                fixed_ips=tuple((f["ip_address"], f["subnet_id"]) for f in p.fixed_ips or []),
                status=p.status or "", device_id=p.device_id or "",
                project_id=p.project_id or "",
                security_groups=tuple(p.security_group_ids or ()),
                bridge=details.get("bridge_name"), host=p.binding_host_id or None,
                name=p.name or "")


class NeutronAPI:
    """The calls berth makes. Thread-safe (the SDK's session is); every method raises
    the ``NeutronError`` family only."""

    def __init__(self, connection: Any, endpoint: str) -> None:
        self._conn, self.endpoint = connection, endpoint

    @contextlib.contextmanager
    def _translate(self, what: str) -> Iterator[None]:
        from keystoneauth1 import exceptions as ks
        from openstack import exceptions as sdk

        try:
            yield
        except (ks.ConnectFailure, ks.ConnectionError, ks.RequestTimeout,
                ks.DiscoveryFailure, ks.EndpointNotFound) as err:
            raise NeutronUnavailable(endpoint=self.endpoint, reason=str(err)) from err
        except sdk.NotFoundException as err:
            raise NeutronNotFound(reason=f"{what}: {_details(err)}") from err
        except sdk.ConflictException as err:
            raise NeutronConflict(reason=f"{what}: {_details(err)}") from err
        except sdk.HttpException as err:
            if (err.status_code or 0) >= 500:
                raise NeutronError(reason=f"{what}: Neutron failed (HTTP {err.status_code}: "
                                          f"{_details(err)})") from err
            raise NeutronError(reason=f"{what}: {_details(err)}") from err
        except sdk.SDKException as err:
            raise NeutronError(reason=f"{what}: {err}") from err

    # -- networks --

    def network(self, ident: str) -> Network:
        """By id or name; ``NeutronNotFound`` when there is none (or several named so)."""
        with self._translate(f"network {ident}"):
            from openstack import exceptions as sdk

            try:
                net = self._conn.network.find_network(ident, ignore_missing=True)
            except sdk.DuplicateResource as err:
                raise NeutronNotFound(reason=f"Several Neutron networks are named {ident}; "
                                             f"name it by id.") from err
            if net is None:
                raise NeutronNotFound(reason=f"Neutron has no network {ident}.")
            subnets = tuple(Subnet(s.id, s.cidr, int(s.ip_version), s.gateway_ip)
                            for s in self._conn.network.subnets(network_id=net.id))
        return Network(id=net.id, name=net.name or "", project_id=net.project_id or "",
                       shared=bool(net.is_shared), mtu=int(net.mtu or 1500), subnets=subnets)

    def project_networks(self, project_id: str) -> list[Network]:
        """The project's own networks (not external ones), without their subnets."""
        with self._translate(f"the networks of project {project_id}"):
            return [Network(id=n.id, name=n.name or "", project_id=n.project_id or "",
                            shared=bool(n.is_shared), mtu=int(n.mtu or 1500))
                    for n in self._conn.network.networks(project_id=project_id)
                    if not n.is_router_external]

    # -- ports --

    def address_taken(self, network_id: str, address: str) -> str | None:
        """The id of the port holding ``address`` on the network, or None."""
        with self._translate(f"address {address}"):
            for p in self._conn.network.ports(network_id=network_id,
                                              fixed_ips=f"ip_address={address}"):
                return str(p.id)
        return None

    def port(self, ident: str) -> Port:
        with self._translate(f"port {ident}"):
            p = self._conn.network.find_port(ident, ignore_missing=True)
            if p is None:
                raise NeutronNotFound(reason=f"Neutron has no port {ident}.")
            return _port(p)

    def port_or_none(self, port_id: str) -> Port | None:
        try:
            return self.port(port_id)
        except NeutronNotFound:
            return None

    def create_port(self, network_id: str, host: str, device_id: str, project_id: str,
                    fixed_ips: list[dict[str, str]], security_groups: list[str] | None
                    ) -> Port:
        """A port bound to ``host`` for container ``device_id``."""
        attrs: dict[str, Any] = {"network_id": network_id, "binding_host_id": host,
                                 "device_id": device_id, "device_owner": DEVICE_OWNER,
                                 "name": f"berth-{device_id}"}
        if project_id:
            attrs["project_id"] = project_id
        if fixed_ips:
            attrs["fixed_ips"] = fixed_ips
        if security_groups is not None:
            attrs["security_group_ids"] = security_groups
        with self._translate(f"a port on network {network_id}"):
            return _port(self._conn.network.create_port(**attrs))

    def bind_port(self, port_id: str, host: str, device_id: str,
                  security_groups: list[str] | None = None) -> Port:
        """A user's port, bound to ``host`` for container ``device_id``."""
        attrs: dict[str, Any] = {"binding_host_id": host, "device_id": device_id,
                                 "device_owner": DEVICE_OWNER}
        if security_groups is not None:
            attrs["security_group_ids"] = security_groups
        with self._translate(f"port {port_id}"):
            return _port(self._conn.network.update_port(port_id, **attrs))

    def release_port(self, port_id: str) -> None:
        """A user's port handed back: unbound, no device (kept, as the user gave it)."""
        with self._translate(f"port {port_id}"):
            try:
                self._conn.network.update_port(port_id, binding_host_id="", device_id="",
                                               device_owner="")
            except Exception as err:
                from openstack import exceptions as sdk

                if isinstance(err, sdk.NotFoundException):
                    return
                raise

    def set_security_groups(self, port_id: str, groups: list[str]) -> Port:
        with self._translate(f"port {port_id}"):
            return _port(self._conn.network.update_port(port_id, security_group_ids=groups))

    def delete_port(self, port_id: str) -> None:
        """Gone; no error when it is gone already."""
        with self._translate(f"port {port_id}"):
            self._conn.network.delete_port(port_id, ignore_missing=True)

    def port_statuses(self, host: str) -> dict[str, str]:
        """Every port bound to ``host``: its status. One request."""
        with self._translate(f"the ports of host {host}"):
            return {p.id: p.status or ""
                    for p in self._conn.network.ports(binding_host_id=host)}

    def bound_ports(self, host: str) -> list[Port]:
        """The ports berth bound to ``host`` (its ``device_owner``). One request."""
        with self._translate(f"the ports of host {host}"):
            return [_port(p) for p in self._conn.network.ports(binding_host_id=host,
                                                               device_owner=DEVICE_OWNER)]

    def ports_of_device(self, device_id: str) -> list[Port]:
        with self._translate(f"the ports of container {device_id}"):
            return [_port(p) for p in self._conn.network.ports(device_id=device_id)]

    # -- security groups --

    def security_group(self, ident: str, project_id: str) -> str:
        """The id of the project's security group ``ident`` (a name or an id)."""
        with self._translate(f"security group {ident}"):
            from openstack import exceptions as sdk

            try:
                found = self._conn.network.find_security_group(
                    ident, ignore_missing=True, **({"project_id": project_id}
                                                   if project_id else {}))
            except sdk.DuplicateResource as err:
                raise NeutronNotFound(reason=f"Several security groups are named {ident}; "
                                             f"name it by id.") from err
            if found is None:
                raise NeutronNotFound(reason=f"Neutron has no security group {ident} in "
                                             f"project {project_id or '(any)'}.")
            return str(found.id)

    def create_security_group(self, name: str, project_id: str,
                              rules: list[dict[str, Any]]) -> str:
        with self._translate(f"security group {name}"):
            attrs: dict[str, Any] = {"name": name,
                                     "description": "berth: a container's exposed ports"}
            if project_id:
                attrs["project_id"] = project_id
            group = self._conn.network.create_security_group(**attrs)
            try:
                for rule in rules:
                    self._conn.network.create_security_group_rule(
                        security_group_id=group.id, direction="ingress", **rule)
            except BaseException:
                self._conn.network.delete_security_group(group.id, ignore_missing=True)
                raise
            return str(group.id)

    def delete_security_group(self, group_id: str) -> None:
        with self._translate(f"security group {group_id}"):
            self._conn.network.delete_security_group(group_id, ignore_missing=True)


def _details(err: Any) -> str:
    return str(getattr(err, "details", None) or err)


def connect(conf: Any) -> NeutronAPI:
    """A ``NeutronAPI`` from ``[neutron]`` (berth's identity; with no ``auth_type`` and
    an ``endpoint_override``, no authentication: a noauth Neutron) and
    ``[neutron_client]``."""
    from keystoneauth1 import loading, noauth, session
    from openstack import connection

    from berth.conf import neutron as neutron_conf

    neutron_conf.register_auth_opts(conf)
    group, client = conf.neutron, conf.neutron_client
    auth = loading.load_auth_from_conf_options(conf, neutron_conf.GROUP) \
        if group.auth_type else None
    if auth is None:
        if not group.endpoint_override:
            raise NeutronError(reason="[neutron] sets neither auth_type nor "
                                      "endpoint_override: berth cannot find Neutron.")
        auth = noauth.NoAuth()
    verify: bool | str = False if client.insecure else (client.ca_file or True)
    sess = session.Session(auth=auth, verify=verify, timeout=group.timeout)
    interface = client.endpoint_type.removesuffix("URL")
    kwargs: dict[str, Any] = {"session": sess, "region_name": client.region_name,
                              "network_interface": interface}
    if group.endpoint_override:
        kwargs["network_endpoint_override"] = group.endpoint_override
    conn = connection.Connection(**kwargs)
    return NeutronAPI(conn, group.endpoint_override or "the catalog's network endpoint")
