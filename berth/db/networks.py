"""Queries on ``network``: berth's local networks, and each project's default one.

A local network's subnet is carved from ``[network]local_subnet_pool``: the first
slice of the pool no network holds. Two creators that pick the same slice at once
cannot both win (``subnet`` is unique): the loser picks again. A project's default
network is made on first use; ``default_of`` is unique, so concurrent first creates
of one project agree on one network.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import String, cast, or_, select
from sqlalchemy.exc import IntegrityError

from berth.common import exceptions as exc
from berth.db import rows
from berth.db.containers import is_uuid_like
from berth.db.engine import Database
from berth.db.models import Container, Network
from berth.network.base import NetworkSpec

LOG = logging.getLogger(__name__)

DEFAULT_NAME = "default"


@dataclass(frozen=True, slots=True)
class SubnetPool:
    """Where local networks' subnets come from (``[network]``)."""

    cidr: str = "10.244.0.0/16"
    prefix: int = 24
    masquerade: bool = False
    #: ``[network]local_subnet_pool_v6``: empty, or the pool of new networks' /64s.
    cidr6: str = ""

    def subnets(self) -> list[ipaddress.IPv4Network]:
        pool = ipaddress.IPv4Network(self.cidr, strict=True)
        if self.prefix < pool.prefixlen:
            raise exc.Invalid(f"[network]local_subnet_prefix /{self.prefix} is wider than "
                              f"the pool {pool}")
        return list(pool.subnets(new_prefix=self.prefix))

    def subnet6(self, subnet: ipaddress.IPv4Network) -> ipaddress.IPv6Network | None:
        """The IPv6 /64 beside ``subnet`` (one of ``subnets()``): the pool's /64 at the
        index ``subnet`` has among them; None without an IPv6 pool."""
        if not self.cidr6:
            return None
        try:
            pool6 = ipaddress.IPv6Network(self.cidr6, strict=True)
        except ValueError as err:
            raise exc.Invalid(f"[network]local_subnet_pool_v6 {self.cidr6!r}: {err}") from err
        pool = ipaddress.IPv4Network(self.cidr, strict=True)
        index = (int(subnet.network_address) - int(pool.network_address)) >> (32 - self.prefix)
        if pool6.prefixlen > 64:
            raise exc.Invalid(f"[network]local_subnet_pool_v6 {pool6} is narrower than the "
                              f"/64 each network gets: use a /48 to /64")
        if index >= 2 ** (64 - pool6.prefixlen):
            raise exc.Conflict(f"[network]local_subnet_pool_v6 {pool6} has no /64 for the "
                              f"local network of {subnet} (slice {index + 1} of "
                              f"{self.cidr}): widen it (a /48 holds 65,536 /64s)")
        return ipaddress.IPv6Network((int(pool6.network_address) + (index << 64), 64))


def spec_of(network: Network, masquerade: bool = False) -> NetworkSpec:
    """The network as the CNI daemon knows it: named by its uuid (unique everywhere)."""
    return NetworkSpec.build(network.uuid, network.subnet, network.gateway, network.bridge,
                             masquerade=masquerade, cidr6=network.subnet_v6)


def create_local(db: Database, pool: SubnetPool, values: Mapping[str, Any]) -> Network:
    """A new local network with the next free subnet of ``pool``; ``values`` holds
    name, project_id, user_id, shared, default_of... ``Conflict`` when the pool is full
    (or, for ``default_of``, IntegrityError propagates: the caller reads the winner)."""
    for _attempt in range(8):
        with db.reader() as s:
            taken = {value for pair in s.execute(select(Network.subnet, Network.subnet_v6))
                     for value in pair if value}
        free = next((n for n in pool.subnets() if str(n) not in taken
                     and str(pool.subnet6(n)) not in taken), None)
        if free is None:
            raise exc.Conflict(f"The local subnet pool {pool.cidr} has no free /{pool.prefix} "
                               f"left: delete unused networks or widen "
                               f"[network]local_subnet_pool.")
        uuid = str(uuidlib.uuid4())
        free6 = pool.subnet6(free)
        spec = NetworkSpec.build(uuid, str(free), cidr6=str(free6) if free6 else None)
        row = Network(uuid=uuid, subnet=str(spec.cidr), gateway=str(spec.gateway),
                      bridge=spec.bridge, subnet_v6=str(free6) if free6 else None,
                      **dict(values))
        try:
            with db.writer() as s:
                s.add(row)
        except IntegrityError:
            project = values.get("default_of")
            if project and _default_of(db, str(project)) is not None:
                raise        # another creator made the project's default first
            LOG.info("subnet %s was taken meanwhile; picking another", free)
            continue
        LOG.info("created local network %s (%s, %s%s) for project %s", row.uuid, row.name,
                 row.subnet, f", {row.subnet_v6}" if row.subnet_v6 else "", row.project_id)
        return row
    raise exc.Conflict("Could not find a free subnet for a new network; try again.")


def default_for_project(db: Database, pool: SubnetPool, project_id: str,
                        user_id: str | None) -> Network:
    """The project's default network, made now when it has none."""
    found = _default_of(db, project_id)
    if found is not None:
        return found
    try:
        return create_local(db, pool, {"name": DEFAULT_NAME, "project_id": project_id,
                                       "user_id": user_id, "default_of": project_id})
    except IntegrityError:
        found = _default_of(db, project_id)
        if found is None:
            raise
        return found


def _default_of(db: Database, project_id: str) -> Network | None:
    with db.reader() as s:
        return s.scalars(select(Network).where(Network.default_of == project_id)).first()


def get(db: Database, ident: str, project_id: str | None) -> Network:
    """By uuid or name among ``project_id``'s networks and the shared ones (None: all).
    NetworkNotFound, or Conflict when a name matches several networks."""
    with db.reader() as s:
        base = select(Network)
        if project_id is not None:
            base = base.where(or_(Network.project_id == project_id, Network.shared.is_(True)))
        if is_uuid_like(ident):
            row = s.scalars(base.where(Network.uuid == ident.lower())).first()
            if row is not None:
                return row
        found = s.scalars(base.where(Network.name == ident).limit(2)).all()
    if not found:
        raise exc.NetworkNotFound(network=ident)
    if len(found) > 1:
        raise exc.Conflict(f"Multiple networks exist with the name {ident}; use the uuid "
                           f"instead.")
    return found[0]


def find_by_uuid(db: Database, uuid: str) -> Network | None:
    with db.reader() as s:
        return s.scalars(select(Network).where(Network.uuid == uuid)).first()


def containers_using(db: Database, network: Network, limit: int = 5) -> list[str]:
    """Uuids of (at most ``limit``) containers that ask for or hold this network: by
    its uuid (a local network), or by the Neutron network it records (containers of
    ``[network]driver = cni`` name Neutron's id)."""
    names = [network.uuid] + ([network.neutron_net_id] if network.neutron_net_id else [])
    with db.reader() as s:
        return list(s.scalars(select(Container.uuid).where(or_(*(
            clause for name in names for clause in (
                cast(Container.cni_metadata, String).contains(name),
                cast(Container.addresses, String).contains(name))))).limit(limit)).all())


def destroy(db: Database, uuid: str) -> bool:
    return rows.destroy_by_uuid(db, Network, uuid)


def find_by_neutron_net_id(db: Database, neutron_net_id: str) -> Network | None:
    with db.reader() as s:
        return s.scalars(select(Network).where(
            Network.neutron_net_id == neutron_net_id).limit(1)).first()


def create_neutron(db: Database, values: Mapping[str, Any]) -> Network:
    """A record of a Neutron network ([network]driver = cni). The local columns hold
    placeholders: ``subnet`` (unique) ``neutron:<id>``, no gateway, the bridge
    ``br-int``; Neutron holds the subnets."""
    neutron_id = str(values["neutron_net_id"])
    row = Network(uuid=str(uuidlib.uuid4()), subnet=f"n:{neutron_id}"[:43], gateway="",
                  bridge="br-int", **dict(values))
    with db.writer() as s:
        s.add(row)
    LOG.info("recorded Neutron network %s as %s (%s)", neutron_id, row.uuid, row.name)
    return row


def docker_placeholder(neutron_net_id: str, host: str) -> str:
    """``subnet`` (unique, 43 characters) of a node's Docker network of a Neutron
    network ([network]driver = kuryr): Neutron holds the subnets."""
    digest = hashlib.sha256(host.encode()).hexdigest()[:5]
    return f"k{digest}:{neutron_net_id}"[:43]


def find_docker(db: Database, neutron_net_id: str, host: str) -> Network | None:
    """The row of this node's Docker network of ``neutron_net_id``."""
    with db.reader() as s:
        return s.scalars(select(Network).where(
            Network.neutron_net_id == neutron_net_id, Network.host == host)).first()


def claim_docker(db: Database, neutron_net_id: str, host: str,
                 values: Mapping[str, Any]) -> Network | None:
    """The row that makes its writer the one creator of the node's Docker network of
    ``neutron_net_id`` (unique (neutron_net_id, host)); None when another writer holds
    it already (the loser reads the winner's row, and waits for its Docker id)."""
    row = Network(uuid=str(uuidlib.uuid4()), neutron_net_id=neutron_net_id, host=host,
                  subnet=docker_placeholder(neutron_net_id, host), gateway="", bridge="",
                  **dict(values))
    try:
        with db.writer() as s:
            s.add(row)
    except IntegrityError:
        return None
    return row


def set_docker_id(db: Database, uuid: str, network_id: str) -> None:
    with db.writer() as s:
        row = s.scalars(select(Network).where(Network.uuid == uuid)).first()
        if row is not None:
            row.network_id = network_id


def visible(db: Database, project_id: str | None) -> list[Network]:
    """The networks a project can use (its own and the shared ones), by name; every
    network when ``project_id`` is None. Read by the console's network view."""
    query = select(Network).order_by(Network.name, Network.id)
    if project_id is not None:
        query = query.where(or_(Network.project_id == project_id, Network.shared.is_(True)))
    with db.reader() as s:
        return list(s.scalars(query))
