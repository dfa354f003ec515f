from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from berth.cni.registry import Entry, Registry, State
from berth.network.base import VIF, AttachmentKey, NetworkSpec

SPEC = NetworkSpec.build("net-a", "10.244.1.0/24")


def entry(container: str, state: State = State.ACTIVE) -> Entry:
    key = AttachmentKey("net-a", container, "eth0")
    vif = VIF(key=key, netns=f"/proc/1/ns/{container}", mac="02:00:00:00:00:01",
              address=ipaddress.IPv4Interface("10.244.1.2/24"), gateway=SPEC.gateway,
              bridge=SPEC.bridge, host_ifname=key.host_ifname)
    return Entry(vif, state, "4:1234")


def test_every_change_is_on_disk_and_a_new_registry_reads_it_back(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "registry.json"
    registry = Registry(str(path))
    registry.put(entry("c1", State.PLUGGING), SPEC)
    registry.set_state(entry("c1").key, State.ACTIVE)
    registry.put(entry("c2"), SPEC)
    registry.remove(entry("c2").key)
    again = Registry(str(path))
    again.load()
    assert again.entries() == [entry("c1")]
    assert again.networks() == [SPEC]
    assert [p.name for p in path.parent.iterdir()] == ["registry.json"]  # no temp left
    assert json.loads(path.read_text())["version"] == 1


def test_a_network_with_attachments_cannot_be_dropped(tmp_path: Path) -> None:
    registry = Registry(str(tmp_path / "r.json"))
    registry.put(entry("c1"), SPEC)
    with pytest.raises(ValueError):
        registry.drop_network("net-a")
    registry.remove(entry("c1").key)
    registry.drop_network("net-a")
    assert registry.networks() == []


def test_an_absent_file_is_an_empty_registry(tmp_path: Path) -> None:
    registry = Registry(str(tmp_path / "none.json"))
    registry.load()
    assert registry.entries() == [] and registry.networks() == []


def test_a_loaded_registry_writes_back_what_it_read_with_each_change(tmp_path: Path) -> None:
    """Each entry's JSON is kept beside it (a save joins them): the entries read at
    start-up, and every later change of one, are all in the next file."""
    path = tmp_path / "registry.json"
    first = Registry(str(path))
    for c in ("c1", "c2", "c3"):
        first.put(entry(c, State.PLUGGING), SPEC)
    loaded = Registry(str(path))
    loaded.load()
    loaded.set_state(entry("c2").key, State.ACTIVE)
    loaded.remove(entry("c3").key)
    loaded.put(entry("c4"), SPEC)
    again = Registry(str(path))
    again.load()
    assert again.entries() == [entry("c1", State.PLUGGING), entry("c2"), entry("c4")]
    assert json.loads(path.read_text())["networks"] == [SPEC.to_dict()]
