"""berth.network.metadata: the rows' cni_metadata read as stored, written back with the
same keys in the same order (the JSON column's text does not change)."""

from __future__ import annotations

import json
from typing import Any

from berth.network import metadata
from berth.network.metadata import CniMetadata, NetworkEntry

NEUTRON: CniMetadata = {
    "networks": [{"network": "n1", "ifname": "eth0", "fixed_ip": None, "port": "p1",
                  "preserve_on_delete": False}],
    "pid": 42, "exposed_sg": "sg1"}


def test_a_row_without_networks_or_with_an_odd_value_reads_as_none_unplugged() -> None:
    odd: Any = ["not", "a", "dict"]
    for meta in (None, odd):
        assert metadata.networks_of(meta) == []
        assert metadata.pid_of(meta) == 0
        assert metadata.exposed_sg_of(meta) is None


def test_a_row_the_api_wrote_before_any_plug_reads_as_it_is() -> None:
    stored = json.loads('{"networks": [{"network": "u1", "ifname": "eth0", '
                        '"fixed_ip": null}], "pid": 0}')
    assert metadata.networks_of(stored) == [{"network": "u1", "ifname": "eth0",
                                             "fixed_ip": None}]
    assert metadata.pid_of(stored) == 0
    assert metadata.exposed_sg_of(stored) is None


def test_the_entries_read_are_copies() -> None:
    entries = metadata.networks_of(NEUTRON)
    entries[0]["port"] = "changed"
    assert NEUTRON["networks"][0]["port"] == "p1"


def test_a_replug_keeps_the_other_keys_in_their_place() -> None:
    networks: list[NetworkEntry] = [{"network": "n2", "ifname": "eth0", "fixed_ip": None}]
    replugged = metadata.with_plug(NEUTRON, networks, 0)
    before = dict(NEUTRON, networks=networks, pid=0)    # what the drivers wrote before
    assert json.dumps(replugged) == json.dumps(before)
    assert json.dumps(metadata.with_plug(None, networks, 7)) == json.dumps(
        {"networks": networks, "pid": 7})
    assert NEUTRON["pid"] == 42, "the row's value is not changed"


def test_the_local_driver_keeps_nothing_but_networks_and_pid() -> None:
    assert metadata.fresh(NEUTRON["networks"], 3) == {"networks": NEUTRON["networks"],
                                                      "pid": 3}


def test_an_evacuated_row_is_unplugged_with_its_other_keys_as_they_were() -> None:
    assert json.dumps(metadata.unplugged(NEUTRON)) == json.dumps(dict(NEUTRON, pid=0))
