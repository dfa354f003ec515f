"""Queries on the network table: subnets carved from the pool, a project's default
network made once, lookups by name or uuid, and which containers use a network."""

from __future__ import annotations

import pytest

from berth.common import exceptions as exc
from berth.db import containers
from berth.db import networks as db_networks
from berth.db.engine import Database

POOL = db_networks.SubnetPool("10.244.0.0/22", 24)


def test_networks_get_the_free_subnets_of_the_pool_in_order(db: Database) -> None:
    made = [db_networks.create_local(db, POOL, {"name": f"n{i}", "project_id": "p1"})
            for i in range(4)]
    assert [n.subnet for n in made] == [f"10.244.{i}.0/24" for i in range(4)]
    assert made[0].gateway == "10.244.0.1" and made[0].bridge.startswith("bth")
    with pytest.raises(exc.Conflict, match="no free /24"):
        db_networks.create_local(db, POOL, {"name": "full", "project_id": "p1"})
    db_networks.destroy(db, made[1].uuid)
    assert db_networks.create_local(db, POOL, {"name": "again"}).subnet == "10.244.1.0/24"


def test_a_project_has_one_default_network_made_on_first_use(db: Database) -> None:
    first = db_networks.default_for_project(db, POOL, "p1", "u1")
    assert db_networks.default_for_project(db, POOL, "p1", "u2").uuid == first.uuid
    other = db_networks.default_for_project(db, POOL, "p2", "u3")
    assert other.uuid != first.uuid and other.subnet != first.subnet
    assert (first.name, first.default_of, first.project_id) == ("default", "p1", "p1")


def test_get_finds_a_project_s_and_shared_networks_by_name_or_uuid(db: Database) -> None:
    mine = db_networks.create_local(db, POOL, {"name": "a", "project_id": "p1"})
    shared = db_networks.create_local(db, POOL, {"name": "s", "project_id": "p9",
                                                 "shared": True})
    assert db_networks.get(db, "a", "p1").uuid == mine.uuid
    assert db_networks.get(db, mine.uuid.upper(), "p1").uuid == mine.uuid
    assert db_networks.get(db, "s", "p1").uuid == shared.uuid
    with pytest.raises(exc.NetworkNotFound):
        db_networks.get(db, "a", "p2")
    assert db_networks.get(db, "a", None).uuid == mine.uuid


def test_containers_using_a_network_are_found_by_request_or_address(db: Database) -> None:
    net = db_networks.create_local(db, POOL, {"name": "a", "project_id": "p1"})
    asked = containers.create(db, {"project_id": "p1", "status": "Creating", "cni_metadata": {
        "networks": [{"network": net.uuid, "ifname": "eth0", "fixed_ip": None}], "pid": 0}})
    containers.create(db, {"project_id": "p1", "status": "Creating"})
    assert db_networks.containers_using(db, net) == [asked.uuid]


def test_containers_on_a_recorded_neutron_network_are_found_by_its_neutron_id(
        db: Database) -> None:
    net = db_networks.create_neutron(db, {"name": "tenant", "neutron_net_id": "n-123",
                                          "project_id": "p1"})
    assert db_networks.containers_using(db, net) == []
    on_it = containers.create(db, {"project_id": "p1", "status": "Running", "cni_metadata": {
        "networks": [{"network": "n-123", "port": "", "fixed_ip": ""}], "pid": 0}})
    held = containers.create(db, {"project_id": "p1", "status": "Stopped",
                                  "addresses": {"n-123": [{"addr": "10.0.0.5"}]}})
    assert sorted(db_networks.containers_using(db, net)) == sorted([on_it.uuid, held.uuid])


def test_with_an_ipv6_pool_each_network_gets_the_64_at_its_ipv4_subnet_s_index(
        db: Database) -> None:
    pool = db_networks.SubnetPool("10.244.0.0/22", 24, cidr6="fd00:b47::/48")
    v4_only = db_networks.create_local(db, POOL, {"name": "old"})
    made = [db_networks.create_local(db, pool, {"name": f"n{i}"}) for i in range(2)]
    assert v4_only.subnet_v6 is None
    assert [(n.subnet, n.subnet_v6) for n in made] == [
        ("10.244.1.0/24", "fd00:b47:0:1::/64"), ("10.244.2.0/24", "fd00:b47:0:2::/64")]
    spec = db_networks.spec_of(made[0])
    assert (str(spec.cidr6), str(spec.gateway6)) == ("fd00:b47:0:1::/64", "fd00:b47:0:1::1")
    assert db_networks.spec_of(v4_only).cidr6 is None


@pytest.mark.parametrize("cidr6, room, error, why", [
    ("fd00::/65", 0, exc.Invalid, "narrower than the /64"),
    ("fd00::/63", 2, exc.Conflict, "no /64"),
    ("fd00::1/48", 0, exc.Invalid, "host bits")])
def test_an_ipv6_pool_without_room_is_a_clear_error(db: Database, cidr6: str, room: int,
                                                    error: type[Exception], why: str) -> None:
    pool = db_networks.SubnetPool("10.244.0.0/22", 24, cidr6=cidr6)
    for i in range(room):
        db_networks.create_local(db, pool, {"name": f"fits{i}"})
    with pytest.raises(error, match=why):
        db_networks.create_local(db, pool, {"name": "n"})
