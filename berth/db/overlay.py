"""Queries on ``overlay_address``: the network-wide IPAM of spanning local networks
and the membership every node's CNI daemon writes its VXLAN tables from
(``berth.network.overlay``).

``(network_uuid, address)`` is unique: a claim that loses a race to another node's
fails at its commit and is answered False (the allocator picks again). Liveness is the
compute service's: a node whose ``zun-compute`` has not reported for
``service_down_time`` seconds (or is forced down) is not live, and the other nodes
withdraw its members' entries.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import Collection
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from berth.db import nodes
from berth.db.engine import Database
from berth.db.models import Network, OverlayAddress
from berth.network.overlay.ipam import Claim
from berth.network.overlay.plan import Member
from berth.network.policy import InvalidPolicy, Policy


class OverlayStore:
    """``berth.network.overlay.ipam.AddressStore`` and the membership reads, on the
    database."""

    def __init__(self, db: Database, service_down_time: int = 180) -> None:
        self.db, self.service_down_time = db, service_down_time

    # -- IPAM --

    def taken(self, network: str) -> set[ipaddress.IPv4Address]:
        with self.db.reader() as s:
            return {ipaddress.IPv4Address(a) for a in s.scalars(
                select(OverlayAddress.address).where(OverlayAddress.network_uuid == network))}

    def held(self, network: str, owner: str) -> Claim | None:
        with self.db.reader() as s:
            row = s.scalars(select(OverlayAddress).where(
                OverlayAddress.network_uuid == network, OverlayAddress.owner == owner)).first()
        return None if row is None else _claim(row)

    def claim(self, claim: Claim) -> bool:
        try:
            with self.db.writer() as s:
                row = s.scalars(select(OverlayAddress).where(
                    OverlayAddress.network_uuid == claim.network,
                    OverlayAddress.address == str(claim.address))).first()
                if row is not None and row.owner != claim.owner:
                    return False
                s.execute(delete(OverlayAddress).where(
                    OverlayAddress.network_uuid == claim.network,
                    OverlayAddress.owner == claim.owner,
                    OverlayAddress.address != str(claim.address)))
                if row is None:
                    row = OverlayAddress(network_uuid=claim.network, address=str(claim.address),
                                         owner=claim.owner)
                    s.add(row)
                row.mac, row.host, row.tunnel_ip = claim.mac, claim.host, str(claim.tunnel_ip)
                row.policy = claim.policy.to_dict() if claim.policy is not None else None
        except IntegrityError:     # another node inserted the address first
            return False
        return True

    def release(self, network: str, owner: str, host: str | None = None) -> bool:
        stmt = delete(OverlayAddress).where(OverlayAddress.network_uuid == network,
                                            OverlayAddress.owner == owner)
        if host is not None:
            stmt = stmt.where(OverlayAddress.host == host)
        with self.db.writer() as s:
            result = s.execute(stmt)
        return bool(result.rowcount)  # type: ignore[attr-defined]

    # -- membership --

    def vni(self, network: str) -> int | None:
        """The network's VXLAN id: its row's id (None when the network is gone)."""
        with self.db.reader() as s:
            return s.scalars(select(Network.id).where(Network.uuid == network)).first()

    def members(self, networks: Collection[str]) -> dict[str, list[Member]]:
        """Every member of ``networks``, by network, whatever node holds it."""
        out: dict[str, list[Member]] = {n: [] for n in networks}
        if not networks:
            return out
        with self.db.reader() as s:
            rows = s.execute(select(OverlayAddress.network_uuid, OverlayAddress.address,
                                    OverlayAddress.mac, OverlayAddress.host,
                                    OverlayAddress.tunnel_ip, OverlayAddress.owner,
                                    OverlayAddress.policy)
                             .where(OverlayAddress.network_uuid.in_(list(networks)))).all()
        for network, address, mac, host, tunnel_ip, owner, policy in rows:
            out[network].append(Member(ipaddress.IPv4Address(address), mac, host,
                                       ipaddress.IPv4Address(tunnel_ip), owner,
                                       _policy(policy)))
        return out

    def owners_on(self, host: str) -> dict[str, set[str]]:
        """The owners each network has on ``host``: what its daemon reconciles its
        registry against after a restart."""
        out: dict[str, set[str]] = {}
        with self.db.reader() as s:
            for network, owner in s.execute(select(OverlayAddress.network_uuid,
                                                   OverlayAddress.owner)
                                            .where(OverlayAddress.host == host)):
                out.setdefault(network, set()).add(owner)
        return out

    def live_hosts(self, now: dt.datetime | None = None) -> set[str]:
        return {svc.host for svc in nodes.list_services(self.db, nodes.COMPUTE_BINARY)
                if nodes.service_is_up(svc, self.service_down_time, now)}


def _claim(row: OverlayAddress) -> Claim:
    return Claim(row.network_uuid, ipaddress.IPv4Address(row.address), row.owner, row.mac,
                 row.host, ipaddress.IPv4Address(row.tunnel_ip), _policy(row.policy))


def _policy(data: Any) -> Policy | None:
    """The row's policy; a row no node could have written reads as none."""
    if data is None:
        return None
    try:
        return Policy.from_dict(data)
    except InvalidPolicy:
        return None
