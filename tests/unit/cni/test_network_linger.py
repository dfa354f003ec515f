"""``network_linger``: a network left without attachments keeps its bridge and rules
until the sync pass finds it idle long enough; a new network given its subnet
replaces it at once."""

from __future__ import annotations

import json
from pathlib import Path

from support.fake_network import FakeDriver, FakeFirewall
from test_service import CONFIG, FakeClock, request

from berth.cni.registry import Registry
from berth.cni.service import CniService


def make(tmp_path: Path, linger: float) -> tuple[CniService, FakeFirewall, FakeClock]:
    driver, firewall, clock = FakeDriver(), FakeFirewall(), FakeClock()
    service = CniService(driver, firewall, Registry(str(tmp_path / "reg.json")),
                         vif_active_timeout=5, clock=clock, sleep=clock.sleep,
                         network_linger=linger)
    service.recover()
    return service, firewall, clock


def namespace(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text("")
    return path


def test_an_idle_network_stays_until_the_sync_finds_it_idle_long_enough(tmp_path: Path
                                                                        ) -> None:
    service, firewall, clock = make(tmp_path, linger=300)
    ns1 = namespace(tmp_path, "ns1")
    service.add(request(ns1))
    service.delete(request(ns1, "DEL"))
    assert "net-a" in firewall.networks                 # kept: the next add is cheap
    clock.now += 100
    service.sync()
    assert "net-a" in firewall.networks
    service.add(request(ns1, container="c2"))           # in use again: no longer idle
    service.delete(request(ns1, "DEL", container="c2"))
    clock.now += 299
    service.sync()
    assert "net-a" in firewall.networks
    clock.now += 1
    service.sync()
    assert "net-a" not in firewall.networks
    assert json.loads((tmp_path / "reg.json").read_text())["networks"] == []


def test_a_new_network_on_an_idle_network_s_subnet_replaces_it(tmp_path: Path) -> None:
    service, firewall, _ = make(tmp_path, linger=300)
    ns1 = namespace(tmp_path, "ns1")
    service.add(request(ns1))
    service.delete(request(ns1, "DEL"))
    service.add(request(ns1, container="c2", config={**CONFIG, "name": "net-b"}))
    assert set(firewall.networks) == {"net-b"}


def test_without_linger_the_last_delete_removes_the_network(tmp_path: Path) -> None:
    service, firewall, _ = make(tmp_path, linger=0)
    ns1 = namespace(tmp_path, "ns1")
    service.add(request(ns1))
    service.delete(request(ns1, "DEL"))
    assert firewall.networks == {}


def test_idle_networks_go_when_the_daemon_stops(tmp_path: Path) -> None:
    service, firewall, _ = make(tmp_path, linger=300)
    ns1, ns2 = namespace(tmp_path, "ns1"), namespace(tmp_path, "ns2")
    service.add(request(ns1))
    service.delete(request(ns1, "DEL"))
    service.add(request(ns2, container="c2", config={**CONFIG, "name": "net-b",
                                                     "ipam": {"subnet": "10.244.2.0/29"}}))
    service.drop_idle_networks()
    assert set(firewall.networks) == {"net-b"}
