"""What a container's (or capsule's) row keeps of its networks: ``Container.cni_metadata``,
a JSON column, declared here once for every module that writes or reads it (the API at
create and attach, the agent's network step with each driver, evacuation, the Zun
takeover).

::

    cni_metadata = {"networks": [NetworkEntry, ...],   interface order: eth0, eth1, ...
                    "pid": <the process whose namespace is plugged; 0: unplugged>,
                    "exposed_sg": <the group berth made for the exposed ports>  Neutron,
                                                                       kuryr; or absent
                    "pod": <the pod sandbox's id>}     a cri capsule's; or absent
    NetworkEntry = {"network": <berth uuid (local) | Neutron network id>,
                    "ifname": "eth0",
                    "fixed_ip": <the user's fixed IP> | None,
                    "port": <Neutron port id> | None,            Neutron, kuryr; or absent
                    "preserve_on_delete": <the user gave the port>}    or absent

A row without networks has None. The types describe the stored JSON as it is (no key
is renamed or added on read), so rows written by older berths and by the Zun takeover
(``berth.takeover.containers``) read as they are; readers still ``.get`` the keys a
row may lack. Nothing here touches the database (``berth.db.models`` types the column
with it).

Also here: ``RequestedNetwork``, the create's ``requested_networks`` item in Zun's RPC
shape, from which the API makes the row's entries.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict


class NetworkEntry(TypedDict):
    """One interface of the container, in ``CniMetadata.networks``."""

    network: str
    ifname: str
    fixed_ip: str | None
    #: The Neutron port (Neutron and kuryr drivers): set once the port exists; None or
    #: absent before, and always absent with local networks.
    port: NotRequired[str | None]
    #: The user gave the port: unbound and kept at the delete instead of deleted.
    preserve_on_delete: NotRequired[bool]


class CniMetadata(TypedDict):
    """``Container.cni_metadata``: the row's networks and where they are plugged."""

    networks: list[NetworkEntry]
    pid: int
    #: The security group the Neutron and kuryr drivers made for the exposed ports.
    exposed_sg: NotRequired[str]
    #: The pod sandbox a cri capsule's networks were plugged into.
    pod: NotRequired[str]


#: One network of a create in Zun's RPC shape (``requested_networks``, model.md §7):
#: what the API resolves a ``nets`` item (or the default network) to and casts to the
#: agent; the row keeps a ``NetworkEntry`` of it. A functional TypedDict for the key
#: with a colon.
RequestedNetwork = TypedDict("RequestedNetwork", {
    "network": str,              # berth uuid (local) | Neutron network id
    "port": str,                 # the user's Neutron port; "" when berth makes one
    "router:external": bool,
    "shared": bool,
    "fixed_ip": str,             # the user's fixed IP; "" when none
    "preserve_on_delete": bool,  # the user gave the port: kept at the delete
})


def requested_network(network: str, *, shared: bool, fixed_ip: str = "",
                      port: str = "") -> RequestedNetwork:
    """One ``requested_networks`` item; a port the user gave is kept at the delete."""
    return {"network": network, "port": port, "router:external": False, "shared": shared,
            "fixed_ip": fixed_ip, "preserve_on_delete": bool(port)}


def networks_of(meta: CniMetadata | None) -> list[NetworkEntry]:
    """The row's interfaces in order, each a copy (the caller may change them)."""
    if not isinstance(meta, dict):
        return []
    return [entry.copy() for entry in meta.get("networks") or []]


def pid_of(meta: CniMetadata | None) -> int:
    """The process whose namespace is plugged; 0 when unplugged (or no networks)."""
    return int(meta.get("pid") or 0) if isinstance(meta, dict) else 0


def exposed_sg_of(meta: CniMetadata | None) -> str | None:
    """The exposed ports' security group the Neutron or kuryr driver made; None when
    it made none."""
    return meta.get("exposed_sg") if isinstance(meta, dict) else None


def copied(meta: CniMetadata | None) -> CniMetadata:
    """A copy to change and write back (a row without networks: none, unplugged).
    Writers replace ``networks`` and ``pid`` and keep the other keys, as they stand."""
    if not isinstance(meta, dict):
        return {"networks": [], "pid": 0}
    return meta.copy()


def fresh(networks: list[NetworkEntry], pid: int) -> CniMetadata:
    """A record of these interfaces plugged into ``pid`` (0: unplugged) and nothing
    else: the local driver's, which keeps no other key."""
    return {"networks": networks, "pid": pid}


def unplugged(meta: CniMetadata) -> CniMetadata:
    """``meta`` as it is but for ``pid``: 0, nothing plugged."""
    return {**meta, "pid": 0}


def with_plug(meta: CniMetadata | None, networks: list[NetworkEntry], pid: int
              ) -> CniMetadata:
    """``meta`` with these interfaces plugged into ``pid`` (0: unplugged), its other
    keys (``exposed_sg``, ...) kept."""
    return {**copied(meta), "networks": networks, "pid": pid}
