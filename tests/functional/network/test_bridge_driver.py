"""The bridge driver and the firewall by themselves, on real links and rules."""

from __future__ import annotations

import ipaddress
import subprocess

import pytest
from support.netns_tools import Netns, link_names

from berth.network.base import AttachmentMismatch, NetnsNotFound, NetworkDriverError, NetworkSpec
from berth.network.bridge import BridgeDriver
from berth.network.firewall import FORWARD_CHAIN, NAT_CHAIN, Firewall


@pytest.fixture
def spec(networks) -> NetworkSpec:  # type: ignore[no-untyped-def]
    networks.config()
    return networks.specs[-1]


def test_attach_is_idempotent_and_detach_leaves_nothing(spec, networks, netns) -> None:  # type: ignore[no-untyped-def]
    driver, ns = BridgeDriver(), netns()
    key = networks.track(spec.name, "c1")
    address = ipaddress.IPv4Interface(f"{spec.gateway + 1}/{spec.cidr.prefixlen}")
    driver.ensure_network(spec)
    driver.ensure_network(spec)
    first = driver.attach(spec, key, ns.path, address)
    again = driver.attach(spec, key, ns.path, address)  # a retried add converges
    assert first == again and driver.is_ready(again)
    driver.check(again)
    assert ns.run("ip", "-o", "link").count("eth0") == 1
    assert f"inet {address}" in ns.run("ip", "-o", "-4", "addr", "show", "eth0")
    assert f"default via {spec.gateway} dev eth0" in ns.run("ip", "route")
    assert f"{spec.gateway}/{spec.cidr.prefixlen}" in subprocess.run(
        ["ip", "-o", "-4", "addr", "show", "dev", spec.bridge], capture_output=True,
        text=True, check=True).stdout
    ns.run("ip", "link", "set", "eth0", "down")
    with pytest.raises(AttachmentMismatch):
        driver.check(again)
    driver.detach(key)
    driver.detach(key)
    driver.delete_network(spec)
    driver.delete_network(spec)
    links = link_names()
    assert key.host_ifname not in links and spec.bridge not in links
    assert "eth0" not in ns.run("ip", "-o", "link")


def test_attach_into_a_missing_namespace_makes_nothing(spec, networks) -> None:  # type: ignore[no-untyped-def]
    driver = BridgeDriver()
    key = networks.track(spec.name, "c1")
    driver.ensure_network(spec)
    with pytest.raises(NetnsNotFound):
        driver.attach(spec, key, "/proc/999999999/ns/net",
                      ipaddress.IPv4Interface(f"{spec.gateway + 1}/24"))
    assert key.host_ifname not in link_names()
    driver.delete_network(spec)


def test_masquerade_rules_and_cleanup_of_everything_berth_made(networks, netns) -> None:  # type: ignore[no-untyped-def]
    # In a namespace of its own: ``cleanup`` removes every chain of berth's, and other
    # berths on this host (in another xdist worker) keep theirs in the host's.
    ns = netns()
    networks.config(ipMasq=True)
    spec = NetworkSpec.build(networks.specs[-1].name, str(networks.specs[-1].cidr),
                             masquerade=True)
    firewall = Firewall(lambda args: _in(ns, ["iptables", "-w", *args]),
                        lambda text: _in(ns, ["iptables-restore", "-w", "--noflush"], text))
    firewall.ensure_network(spec)
    assert firewall.has_network(spec)
    assert any("-j MASQUERADE" in r and str(spec.cidr) in r
               for r in firewall.rules("nat", NAT_CHAIN))
    assert any(f"-i {spec.bridge} " in r and r.endswith("-j ACCEPT") and "-o" not in r
               for r in firewall.rules("filter", FORWARD_CHAIN))  # egress accepted
    firewall.cleanup()
    for table, chain, parent in (("filter", FORWARD_CHAIN, "FORWARD"),
                                 ("nat", NAT_CHAIN, "POSTROUTING")):
        listing = _in(ns, ["iptables", "-w", "-t", table, "-S"]).stdout
        assert chain not in listing, (table, listing)
        assert f"-A {parent} -j" in listing or parent in listing


def _in(ns: Netns, command: list[str], text: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ns.prefix(), *command], input=text, capture_output=True,
                          text=True, timeout=60, check=False)


def test_attach_after_the_bridge_was_made_again_and_into_a_taken_name(spec, networks, netns) -> None:  # type: ignore[no-untyped-def]
    driver, other = BridgeDriver(), BridgeDriver()
    key = networks.track(spec.name, "c1")
    address = ipaddress.IPv4Interface(f"{spec.gateway + 1}/{spec.cidr.prefixlen}")
    driver.ensure_network(spec)                     # the driver remembers its index
    other.delete_network(spec)                      # another process removes the bridge
    other.ensure_network(spec)                      # and makes it again: a new index
    vif = driver.attach(spec, key, netns().path, address)
    master = subprocess.run(["ip", "-o", "link", "show", key.host_ifname],
                            capture_output=True, text=True, check=True).stdout
    assert f"master {spec.bridge}" in master and driver.is_ready(vif)
    driver.detach(key)
    # A namespace whose eth0 berth did not make: a clear error, no host end left.
    taken = netns()
    taken.run("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "other0")
    with pytest.raises(NetworkDriverError, match="already has an interface eth0"):
        driver.attach(spec, key, taken.path, address)
    assert key.host_ifname not in link_names()
    driver.delete_network(spec)
