"""A container's networks with Neutron (``[network]driver = cni``): ``nets`` at create,
network_attach / network_detach, security groups, and ``/v1/networks`` records of
Neutron networks.

Everything is checked here, before a row exists or a cast leaves: an unknown
network, port or security group, another project's, a port already in use, a fixed
IP outside the network's subnets of its version, or one already taken, is a 4xx that
leaves nothing; Neutron not answering is a 503. The agent then makes (or binds) the
ports on the container's host.

A ``network`` in ``nets`` is a network berth recorded (``POST /v1/networks``, by its
name or uuid) or a Neutron network (by id or name); requested entries carry the
Neutron network id, as Zun's do.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
from collections.abc import Iterator
from typing import Any

from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import networks as db_networks
from berth.db.models import Network as NetworkRow
from berth.network.metadata import RequestedNetwork, requested_network
from berth.network.neutron.client import (
    Network,
    NeutronAPI,
    NeutronConflict,
    NeutronError,
    NeutronNotFound,
    NeutronUnavailable,
)

LOG = logging.getLogger(__name__)


def enabled(state: ApiState) -> bool:
    return state.settings.network_driver in ("cni", "kuryr") and state.neutron is not None


@contextlib.contextmanager
def translated(where: str) -> Iterator[None]:
    """Neutron's answers as the API's: not found → 400 naming ``where``, in use → 409,
    no answer → 503."""
    try:
        yield
    except NeutronUnavailable as err:
        raise exc.ServiceUnavailable(reason=f"{err.msg} Nothing was created.") from err
    except NeutronNotFound as err:
        raise exc.Invalid(f"Invalid {where}: {err.msg}") from err
    except NeutronConflict as err:
        raise exc.Conflict(f"{where}: {err.msg}") from err
    except NeutronError as err:
        raise exc.ServiceUnavailable(reason=f"{err.msg} Nothing was created.") from err


def _api(state: ApiState) -> NeutronAPI:
    api: NeutronAPI = state.neutron
    return api


def _visible(ctx: RequestContext, project_id: str, shared: bool = False) -> bool:
    return ctx.is_admin or shared or project_id == (ctx.project_id or "")


def network(state: ApiState, ctx: RequestContext, ident: str, where: str) -> Network:
    """A recorded network's Neutron network, or Neutron's own by id or name."""
    neutron_id = ident
    try:
        row = db_networks.get(state.db, ident, None if ctx.is_admin else ctx.project_id)
    except (exc.NetworkNotFound, exc.Conflict):
        row = None
    if row is not None and row.neutron_net_id:
        neutron_id = row.neutron_net_id
    with translated(where):
        net = _api(state).network(neutron_id)
    if not _visible(ctx, net.project_id, net.shared):
        raise exc.Invalid(f"Invalid {where}: Neutron has no network {ident} in project "
                          f"{ctx.project_id}.")
    return net


def check_fixed_ip(state: ApiState, net: Network, address: str, version: int,
                   where: str) -> None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError as err:
        raise exc.Invalid(f"Invalid {where}: {address} is not an IP address.") from err
    if ip.version != version:
        raise exc.Invalid(f"Invalid {where}: {address} is not an IPv{version} address.")
    subnets = [s for s in net.subnets if s.ip_version == version]
    inside = [s for s in subnets if ip in ipaddress.ip_network(s.cidr)]
    if not inside:
        cidrs = ", ".join(s.cidr for s in subnets) or f"none of IPv{version}"
        raise exc.Invalid(f"Invalid {where}: {address} is not in a subnet of network "
                          f"{net.name or net.id} (its IPv{version} subnets: {cidrs}).")
    with translated(where):
        taken = _api(state).address_taken(net.id, address)
    if taken:
        raise exc.Conflict(f"{where}: {address} is already in use on network "
                           f"{net.name or net.id} (port {taken}); choose another.")


def requested_entry(state: ApiState, ctx: RequestContext, item: dict[str, str],
                    where: str) -> RequestedNetwork:
    """One ``requested_networks`` item (Zun's shape) for a ``nets`` entry."""
    if item.get("port"):
        with translated(where):
            port = _api(state).port(item["port"])
        if not _visible(ctx, port.project_id):
            raise exc.Invalid(f"Invalid {where}: Neutron has no port {item['port']} in "
                              f"project {ctx.project_id}.")
        if port.device_id:
            raise exc.Conflict(f"{where}: port {port.id} is in use by device "
                               f"{port.device_id}; give a free port.")
        with translated(where):
            net = _api(state).network(port.network_id)
        return requested_network(net.id, shared=net.shared, port=port.id)
    net = network(state, ctx, item["network"], where)
    fixed = ""
    for key, version in (("v4-fixed-ip", 4), ("v6-fixed-ip", 6)):
        if item.get(key):
            check_fixed_ip(state, net, item[key], version, f"{where}.{key}")
            fixed = item[key]
    if not net.subnets:
        raise exc.Invalid(f"Invalid {where}: Neutron network {net.name or net.id} has no "
                          f"subnet; add one before plugging containers into it.")
    return requested_network(net.id, shared=net.shared, fixed_ip=fixed)


def resolve_for_create(state: ApiState, ctx: RequestContext,
                       nets: list[dict[str, str]] | None) -> list[RequestedNetwork]:
    """The create's ``requested_networks``. Without ``nets``: the project's only
    network (a 400 when it has none, or several)."""
    if not nets:
        return [default_entry(state, ctx)]
    requested: list[RequestedNetwork] = []
    for index, item in enumerate(nets):
        entry = requested_entry(state, ctx, item, f"nets[{index}]")
        if any(r["network"] == entry["network"] for r in requested):
            raise exc.Invalid(f"Invalid nets[{index}]: network {entry['network']} is asked "
                              f"for twice; a container has one interface per network.")
        requested.append(entry)
    return requested


def default_entry(state: ApiState, ctx: RequestContext) -> RequestedNetwork:
    with translated("nets"):
        own = _api(state).project_networks(ctx.project_id or "")
    if len(own) != 1:
        names = ", ".join(n.name or n.id for n in own) or "none"
        raise exc.Invalid(f"Invalid nets: give a network ('nets'): project "
                          f"{ctx.project_id} has {len(own)} Neutron networks ({names}), "
                          f"and berth picks one only when there is exactly one.")
    return requested_entry(state, ctx, {"network": own[0].id}, "nets")


def security_groups(state: ApiState, ctx: RequestContext, names: list[str] | None
                    ) -> list[str] | None:
    """Names or ids → the ids of the caller's project's groups (400 for an unknown one)."""
    if not names:
        return names
    ids = []
    for index, name in enumerate(names):
        with translated(f"security_groups[{index}]"):
            ids.append(_api(state).security_group(name, ctx.project_id or ""))
    return ids


def security_group(state: ApiState, ctx: RequestContext, name: str) -> str:
    with translated("security group"):
        return _api(state).security_group(name, ctx.project_id or "")


def create_record(state: ApiState, ctx: RequestContext, data: dict[str, Any]) -> NetworkRow:
    """``POST /v1/networks``: records a Neutron network under a berth name."""
    neutron_id = data.get("neutron_net_id")
    if not neutron_id:
        raise exc.Invalid("Give 'neutron_net_id': with [network]driver = cni a network is a "
                          "Neutron network that berth records.")
    with translated("neutron_net_id"):
        net = _api(state).network(str(neutron_id))
    if db_networks.find_by_neutron_net_id(state.db, net.id) is not None:
        raise exc.Conflict(f"Neutron network {net.id} is recorded already.")
    return db_networks.create_neutron(state.db, {
        "name": str(data["name"]), "neutron_net_id": net.id, "project_id": ctx.project_id,
        "user_id": ctx.user_id, "shared": bool(data.get("shared", False))})


def attach_entry(state: ApiState, ctx: RequestContext, data: dict[str, Any]
                 ) -> RequestedNetwork:
    """network_attach's ``requested_network``."""
    item: dict[str, str] = {}
    if data.get("port"):
        item["port"] = str(data["port"])
    else:
        item["network"] = str(data["network"])
        if data.get("fixed_ip"):
            version = ipaddress.ip_address(str(data["fixed_ip"])).version \
                if _is_ip(str(data["fixed_ip"])) else 4
            item[f"v{version}-fixed-ip"] = str(data["fixed_ip"])
    return requested_entry(state, ctx, item, "network")


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True
