"""Networks (api-v1.md §15) and a container's networks (``nets`` at create,
network_attach / network_detach / network_list).

With ``[network]driver = local`` (berth's default) networks are berth's own: a
project's ``default`` network is made on first use, more with ``POST /v1/networks``,
each with a subnet carved from ``[network]local_subnet_pool``. There is no Neutron:
``neutron_net_id`` is recorded when given and means nothing, and a ``port`` is
refused. With ``driver = docker`` containers stay on Docker's default bridge and
``nets`` is recorded and ignored, as before berth had networks.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from berth.api.microversions import APIVersion
from berth.api.operations import neutron_networks as neutron
from berth.api.schemas import networks as schemas
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import actions
from berth.db import networks as db_networks
from berth.db.models import Container, Network
from berth.network import metadata
from berth.network.metadata import (
    CniMetadata,
    NetworkEntry,
    RequestedNetwork,
    requested_network,
)
from berth.policies import enforcer as policy

LOG = logging.getLogger(__name__)

VIEW_KEYS = ("uuid", "name", "project_id", "user_id", "network_id", "neutron_net_id")


def local(state: ApiState) -> bool:
    return state.settings.network_driver == "local"


def view(row: Network) -> dict[str, Any]:
    """Zun's view, plus the local network's subnet and gateway."""
    out: dict[str, Any] = {k: getattr(row, k) for k in VIEW_KEYS}
    out.update(subnet=row.subnet, gateway=row.gateway)
    gateway6 = db_networks.spec_of(row).gateway6 if row.subnet_v6 else None
    out.update(subnet_v6=row.subnet_v6, gateway_v6=str(gateway6) if gateway6 else None)
    return out


def find(state: ApiState, ctx: RequestContext, ident: str) -> Network:
    """A network the caller may use: its project's, a shared one, any for an admin."""
    return db_networks.get(state.db, ident, None if ctx.is_admin else ctx.project_id)


# -- a container's networks ------------------------------------------------------

def resolve_for_create(state: ApiState, ctx: RequestContext,
                       nets: list[dict[str, str]] | None) -> list[RequestedNetwork]:
    """The create's ``requested_networks`` in Zun's RPC shape (model.md §7): the
    networks of ``nets``, or the project's default network when it is empty. Empty
    with the docker driver."""
    if neutron.enabled(state):
        return neutron.resolve_for_create(state, ctx, nets)
    if not local(state):
        return []
    if not nets:
        network = db_networks.default_for_project(state.db, state.settings.subnet_pool,
                                                  ctx.project_id or "", ctx.user_id)
        return [requested_entry(network, None)]
    requested: list[RequestedNetwork] = []
    for index, item in enumerate(nets):
        if "port" in item:
            raise exc.Invalid(
                f"Invalid nets[{index}]: a 'port' is a Neutron port, and this berth runs "
                f"local networks ([network]driver = local), which have none. Ask for a "
                f"'network' (name or uuid), optionally with a 'v4-fixed-ip'.")
        network = find(state, ctx, item["network"])
        if any(r["network"] == network.uuid for r in requested):
            raise exc.Invalid(f"Invalid nets[{index}]: network {item['network']} is asked "
                              f"for twice; a container has one interface per network.")
        fixed = item.get("v4-fixed-ip")
        if "v6-fixed-ip" in item:
            fixed = _v4_twin(network, item["v6-fixed-ip"], fixed, f"nets[{index}]")
        requested.append(requested_entry(network, fixed))
    return requested


def _v4_twin(network: Network, v6: str, v4: str | None, where: str) -> str:
    """The IPv4 address whose twin is ``v6`` on the dual-stack ``network`` (a
    container's IPv6 address mirrors its IPv4 one: ``berth.network.base``), which must
    be ``v4`` when that is given too."""
    if not network.subnet_v6:
        raise exc.Invalid(f"Invalid {where}: network {network.name or network.uuid} has no "
                          f"IPv6 subnet (it was made before [network]local_subnet_pool_v6 "
                          f"was set, or that is empty); drop 'v6-fixed-ip'.")
    spec = db_networks.spec_of(network)
    twin = spec.twin4(ipaddress.IPv6Address(v6))
    if twin is None:
        first = spec.mirror6(spec.cidr.network_address)
        last = spec.mirror6(spec.cidr.broadcast_address)
        raise exc.Invalid(f"Invalid {where}: {v6} is not a container address of network "
                          f"{network.name or network.uuid}: its IPv6 addresses mirror the "
                          f"IPv4 ones of {spec.cidr}, from {first} to {last}.")
    if v4 and ipaddress.IPv4Address(v4) != twin:
        mirrored = spec.mirror6(ipaddress.IPv4Address(v4))
        raise exc.Invalid(f"Invalid {where}: on network {network.name or network.uuid} the "
                          f"IPv6 address of {v4} is {mirrored}, not {v6}; give one of the "
                          f"two.")
    return str(twin)


def requested_entry(network: Network, fixed_ip: str | None) -> RequestedNetwork:
    """One ``requested_networks`` item; a fixed IP outside the subnet's hosts is a 400."""
    if fixed_ip:
        check_fixed_ip(network, fixed_ip)
    return requested_network(network.uuid, shared=bool(network.shared),
                             fixed_ip=fixed_ip or "")


def check_fixed_ip(network: Network, fixed_ip: str) -> None:
    subnet = ipaddress.IPv4Network(network.subnet)
    address = ipaddress.IPv4Address(fixed_ip)
    reserved = {subnet.network_address, subnet.broadcast_address,
                ipaddress.IPv4Address(network.gateway)}
    if address not in subnet or address in reserved:
        raise exc.Invalid(
            f"Fixed IP {fixed_ip} is not a usable address of network {network.name or ''} "
            f"({network.uuid}, subnet {network.subnet}; its network, broadcast and gateway "
            f"{network.gateway} addresses are reserved).")


def metadata_of(requested: list[RequestedNetwork]) -> CniMetadata | None:
    """What the row keeps of its networks (``berth.network.metadata``): one entry
    per network, in interface order, none plugged yet."""
    if not requested:
        return None
    return {"networks": [_entry(f"eth{i}", r) for i, r in enumerate(requested)], "pid": 0}


def _entry(ifname: str, requested: RequestedNetwork) -> NetworkEntry:
    entry: NetworkEntry = {"network": requested["network"], "ifname": ifname,
                           "fixed_ip": requested.get("fixed_ip") or None}
    if requested.get("port"):     # a Neutron port the user gave (kept after the delete)
        entry["port"] = requested["port"]
        entry["preserve_on_delete"] = True
    return entry


# -- /v1/networks ------------------------------------------------------------------

def _admin(ctx: RequestContext, action: str) -> None:
    """``action``'s rule (admin by default)."""
    policy.authorize(ctx, action)


def _require_local(state: ApiState) -> None:
    if not local(state) and not neutron.enabled(state):
        raise exc.Invalid("This berth keeps containers on Docker's default bridge "
                          "([network]driver = docker): it has no networks to create, "
                          "delete, attach or detach.")


def create_network(state: ApiState, ctx: RequestContext, body: Any) -> Network:
    _admin(ctx, "network:create")
    _require_local(state)
    data = schemas.NETWORK_CREATE.check(body)
    name = str(data["name"])
    if neutron.enabled(state):
        return neutron.create_record(state, ctx, data)
    try:
        db_networks.get(state.db, name, ctx.project_id)
    except exc.NetworkNotFound:
        pass
    else:
        raise exc.Conflict(f"A network named {name} exists already in project "
                           f"{ctx.project_id}; choose another name.")
    return db_networks.create_local(state.db, state.settings.subnet_pool, {
        "name": name, "neutron_net_id": data.get("neutron_net_id"),
        "project_id": ctx.project_id, "user_id": ctx.user_id,
        "shared": bool(data.get("shared", False))})


def delete_network(state: ApiState, ctx: RequestContext, ident: str) -> None:
    """By uuid or name (or, as Zun, by the neutron_net_id it was created with); 409
    while a container asks for it or holds an address on it."""
    _admin(ctx, "network:delete")
    try:
        network = db_networks.get(state.db, ident, None)
    except exc.NetworkNotFound:
        by_neutron = db_networks.find_by_neutron_net_id(state.db, ident)
        if by_neutron is None:
            raise
        network = by_neutron
    users = db_networks.containers_using(state.db, network)
    if users:
        raise exc.Conflict(f"Network {ident} is in use by container(s) "
                           f"{', '.join(users)}; delete them or detach the network first.")
    db_networks.destroy(state.db, network.uuid)
    LOG.info("deleted network %s (%s, %s)", network.uuid, network.name, network.subnet)


# -- a container's network actions -------------------------------------------------

def _one_of(data: dict[str, Any]) -> str:
    if ("network" in data) == ("port" in data):
        raise exc.InvalidParameterValue(
            err="Give exactly one of 'network' (a name or uuid) or 'port'.")
    if "port" in data:
        raise exc.Invalid("A 'port' is a Neutron port, and this berth runs local networks "
                          "([network]driver = local), which have none: name the "
                          "'network' instead.")
    return str(data["network"])


def attach(state: ApiState, ctx: RequestContext, row: Container, params: dict[str, Any]
           ) -> None:
    _require_local(state)
    data = schemas.NETWORK_ATTACH.check(params)
    if neutron.enabled(state):
        _neutron_attach(state, ctx, row, data)
        return
    network = find(state, ctx, _one_of(data))
    if any(n.get("network") == network.uuid for n in attached(row)):
        raise exc.Invalid(f"Container {row.uuid} is already attached to network "
                          f"{network.name} ({network.uuid}).")
    entry = requested_entry(network, data.get("fixed_ip"))
    state.compute.check_host(row)
    actions.action_start(state.db, ctx, row.uuid, "network_attach")
    state.compute.network_attach(ctx, row, entry)


def detach(state: ApiState, ctx: RequestContext, row: Container, params: dict[str, Any]
           ) -> None:
    _require_local(state)
    data = schemas.NETWORK_DETACH.check(params)
    if neutron.enabled(state):
        _neutron_detach(state, ctx, row, data)
        return
    network = find(state, ctx, _one_of(data))
    if not any(n.get("network") == network.uuid for n in attached(row)):
        raise exc.Invalid(f"Container {row.uuid} is not attached to network "
                          f"{network.name} ({network.uuid}).")
    state.compute.check_host(row)
    actions.action_start(state.db, ctx, row.uuid, "network_detach")
    state.compute.network_detach(ctx, row, network.uuid)


def _neutron_attach(state: ApiState, ctx: RequestContext, row: Container,
                    data: dict[str, Any]) -> None:
    if ("network" in data) == ("port" in data):
        raise exc.InvalidParameterValue(
            err="Give exactly one of 'network' (a name or id) or 'port'.")
    entry = neutron.attach_entry(state, ctx, data)
    if any(n.get("network") == entry["network"] for n in attached(row)):
        raise exc.Invalid(f"Container {row.uuid} is already attached to network "
                          f"{entry['network']}.")
    state.compute.check_host(row)
    actions.action_start(state.db, ctx, row.uuid, "network_attach")
    state.compute.network_attach(ctx, row, entry)


def _neutron_detach(state: ApiState, ctx: RequestContext, row: Container,
                    data: dict[str, Any]) -> None:
    if ("network" in data) == ("port" in data):
        raise exc.InvalidParameterValue(
            err="Give exactly one of 'network' (a name or id) or 'port'.")
    if "port" in data:
        match = [n for n in attached(row) if n.get("port") == data["port"]]
        network_id = match[0]["network"] if match else str(data["port"])
    else:
        network_id = neutron.network(state, ctx, str(data["network"]), "network").id
    if not any(n.get("network") == network_id for n in attached(row)):
        raise exc.Invalid(f"Container {row.uuid} is not attached to "
                          f"{data.get('network') or data.get('port')}.")
    state.compute.check_host(row)
    actions.action_start(state.db, ctx, row.uuid, "network_detach")
    state.compute.network_detach(ctx, row, network_id)


def attached(row: Container) -> list[NetworkEntry]:
    return metadata.networks_of(row.cni_metadata)


def network_list(row: Container, version: APIVersion) -> dict[str, Any]:
    """From ``addresses`` only (behaviours.md): one entry per address before 1.18, one
    per port (here: per interface, with its IPv4 and IPv6 addresses) from 1.18."""
    out: list[dict[str, Any]] = []
    for net_id, addresses in (row.addresses or {}).items():
        ports: dict[Any, dict[str, Any]] = {}
        for a in addresses or []:
            if version.at_least("1.18"):
                fixed = {"subnet_id": a.get("subnet_id"), "version": a.get("version"),
                         "ip_address": a.get("addr")}
                port = ports.get(a.get("port"))
                if port is None:
                    port = ports[a.get("port")] = {"net_id": net_id,
                                                   "port_id": a.get("port"), "fixed_ips": []}
                    out.append(port)
                port["fixed_ips"].append(fixed)
            else:
                out.append({"net_id": net_id, "subnet_id": a.get("subnet_id"),
                            "port_id": a.get("port"), "version": a.get("version"),
                            "ip_address": a.get("addr")})
    return {"networks": out}
