"""Network-wide IPAM on the database (SQLite at the migration head): one address per
attachment across nodes, a lost race picks again, fixed IPs, moves, release."""

from __future__ import annotations

import ipaddress

import pytest

from berth.db import networks as db_networks
from berth.db.engine import Database
from berth.db.overlay import OverlayStore
from berth.network.base import AddressExhausted, AddressInUse, AddressOutOfRange
from berth.network.overlay.ipam import Claim, NetworkWideAllocator

IP = ipaddress.IPv4Address


@pytest.fixture
def spec(db: Database):  # type: ignore[no-untyped-def]
    row = db_networks.create_local(db, db_networks.SubnetPool("10.244.0.0/16", 29),
                                   {"name": "n", "project_id": "p"})
    return db_networks.spec_of(row)


def node(db: Database, host: str, tunnel: str) -> NetworkWideAllocator:
    return NetworkWideAllocator(OverlayStore(db), host, IP(tunnel))


def test_two_nodes_never_hand_out_one_address(db: Database, spec) -> None:  # type: ignore[no-untyped-def]
    a, b = node(db, "a", "192.0.2.1"), node(db, "b", "192.0.2.2")
    got = [a.allocate(spec, "k1", "02:00:00:00:00:01"), b.allocate(spec, "k2", "02:00:00:00:00:02"),
           a.allocate(spec, "k3", "02:00:00:00:00:03"), b.allocate(spec, "k4", "02:00:00:00:00:04"),
           a.allocate(spec, "k5", "02:00:00:00:00:05")]
    # A /29: .1 is the gateway, .2-.6 the five hosts.
    assert sorted(str(i.ip) for i in got) == [f"10.244.0.{n}" for n in range(2, 7)]
    with pytest.raises(AddressExhausted):
        b.allocate(spec, "k6", "02:00:00:00:00:06")
    assert b.release(spec, "k2")
    assert not b.release(spec, "k2")
    assert str(b.allocate(spec, "k6", "02:00:00:00:00:06").ip) == str(got[1].ip)


def test_an_owner_keeps_its_address_and_a_fixed_ip_held_elsewhere_is_refused(
        db: Database, spec) -> None:  # type: ignore[no-untyped-def]
    a, b = node(db, "a", "192.0.2.1"), node(db, "b", "192.0.2.2")
    first = a.allocate(spec, "k1", "02:00:00:00:00:01")
    assert a.allocate(spec, "k1", "02:00:00:00:00:01") == first
    with pytest.raises(AddressInUse):
        b.allocate(spec, "k2", "02:00:00:00:00:02", requested=first.ip)
    with pytest.raises(AddressOutOfRange):
        b.allocate(spec, "k2", "02:00:00:00:00:02", requested=IP("10.244.0.1"))
    assert OverlayStore(db).taken(spec.name) == {first.ip}


def test_an_attachment_moved_to_another_node_keeps_its_address(db: Database, spec) -> None:  # type: ignore[no-untyped-def]
    a, b = node(db, "a", "192.0.2.1"), node(db, "b", "192.0.2.2")
    first = a.allocate(spec, "k1", "02:00:00:00:00:01")
    a.allocate(spec, "k2", "02:00:00:00:00:02")
    moved = b.allocate(spec, "k1", "02:00:00:00:00:01")
    assert moved == first
    held = OverlayStore(db).held(spec.name, "k1")
    assert held is not None and (held.host, str(held.tunnel_ip)) == ("b", "192.0.2.2")
    assert len(OverlayStore(db).taken(spec.name)) == 2


class RacingStore(OverlayStore):
    """The real store, with another node claiming the address this one picked just
    before its claim (the first ``races`` times): what two daemons at once do."""

    def __init__(self, db: Database, races: int) -> None:
        super().__init__(db)
        self.races = races

    def claim(self, claim: Claim) -> bool:
        if self.races:
            self.races -= 1
            assert super().claim(Claim(claim.network, claim.address, f"other{self.races}",
                                       "02:00:00:00:00:ff", "z", IP("192.0.2.9")))
        return super().claim(claim)


def test_a_claim_lost_to_another_node_picks_the_next_address(db: Database, spec) -> None:  # type: ignore[no-untyped-def]
    racing = NetworkWideAllocator(RacingStore(db, races=2), "a", IP("192.0.2.1"))
    got = racing.allocate(spec, "k1", "02:00:00:00:00:01")
    assert str(got.ip) == "10.244.0.4"
    assert OverlayStore(db).held(spec.name, "other1").address == IP("10.244.0.2")  # type: ignore[union-attr]


def test_the_old_node_releasing_a_moved_attachment_leaves_the_new_node_s_claim(
        db: Database, spec) -> None:  # type: ignore[no-untyped-def]
    a, b = node(db, "a", "192.0.2.1"), node(db, "b", "192.0.2.2")
    first = a.allocate(spec, "k1", "02:00:00:00:00:01")
    assert b.allocate(spec, "k1", "02:00:00:00:00:01") == first     # evacuated to b
    assert not a.release(spec, "k1")                                 # a cleans up, late
    held = OverlayStore(db).held(spec.name, "k1")
    assert held is not None and held.host == "b" and held.address == first.ip


def test_an_address_just_freed_is_not_handed_out_again_at_once(db: Database, spec) -> None:  # type: ignore[no-untyped-def]
    a = node(db, "a", "192.0.2.1")
    first = a.allocate(spec, "k1", "02:00:00:00:00:01")
    a.release(spec, "k1")
    second = a.allocate(spec, "k2", "02:00:00:00:00:02")
    assert second.ip == first.ip + 1
