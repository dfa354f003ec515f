"""A Neutron port plugged again: the OVS port an earlier plug left is deleted in a
transaction of its own before the new veth is made (on the userspace datapath
ovs-vswitchd keeps reading the first veth's socket behind a kept port, while Neutron
keeps the port ACTIVE), and the re-plug is waited for until Neutron's OVS agent has
bound the new OVS port, then until ACTIVE."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Self

import pytest

from berth.network.base import VIFNotReady
from berth.network.neutron import ovs
from berth.network.neutron.ovs import NeutronVIF, OvsPlugger
from berth.network.neutron.vifs import NeutronVifService

PORT = "0123456789abcdef-port"
TAP = "tap0123456789a"


def vif() -> NeutronVIF:
    return NeutronVIF(container_id="c1", ifname="eth0", netns="/proc/1/ns/net",
                      port_id=PORT, mac="fa:16:3e:00:00:01", addresses=("10.0.0.5/24",),
                      gateways=("10.0.0.1",))


class FakeIPRoute:
    def __init__(self, steps: list[str]) -> None:
        self.steps = steps

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def link(self, command: str, **kwargs: Any) -> None:
        self.steps.append(f"link {command} {kwargs.get('ifname')}")


@pytest.fixture
def plugger(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[OvsPlugger, list[str], set[str]]]:
    """An OvsPlugger whose kernel and OVSDB are fakes; ``steps`` records what it did in
    order, ``ports`` is OVSDB's set of port names."""
    steps: list[str] = []
    ports: set[str] = set()

    def vsctl(*args: str) -> str:
        words = [a for a in args if a != "--"]
        if words[:3] == ["--if-exists", "get", "Port"]:
            steps.append(f"get {words[3]} {words[4]}")
            return f"{words[3]}\n" if words[3] in ports else ""
        if "del-port" in words:
            name = words[words.index("del-port") + 2]
            steps.append(f"del-port {name}")
            ports.discard(name)
            return ""
        if "add-port" in words:
            name = words[words.index("add-port") + 2]
            steps.append(f"add-port {name}")
            ports.add(name)
            return ""
        raise AssertionError(f"unexpected ovs-vsctl {args}")

    @contextlib.contextmanager
    def iproute_in(netns: str) -> Iterator[None]:
        yield None

    monkeypatch.setattr(ovs, "_vsctl", vsctl)
    monkeypatch.setattr(ovs.ns, "open_fd", lambda netns: 99)
    monkeypatch.setattr(ovs.ns, "iproute_in", iproute_in)
    monkeypatch.setattr(ovs.os, "close", lambda fd: None)
    monkeypatch.setattr(ovs.ns, "host_iproute", lambda: FakeIPRoute(steps))
    monkeypatch.setattr(ovs, "delete_link", lambda ipr, name: steps.append(f"delete-link {name}"))
    monkeypatch.setattr(ovs, "_tune_inside", lambda v: None)
    monkeypatch.setattr(ovs, "_configure_inside", lambda ipr, v: None)
    yield OvsPlugger(), steps, ports


def test_a_first_plug_adds_the_ovs_port_after_the_veth_and_replaces_nothing(
        plugger: tuple[OvsPlugger, list[str], set[str]]) -> None:
    plug, steps, ports = plugger
    assert plug.plug(vif()) is False
    assert steps == [f"get {TAP} name", f"delete-link {TAP}", f"link add {TAP}",
                     f"add-port {TAP}"]
    assert ports == {TAP}


def test_a_plug_again_deletes_the_kept_ovs_port_before_making_the_veth(
        plugger: tuple[OvsPlugger, list[str], set[str]]) -> None:
    plug, steps, ports = plugger
    ports.add(TAP)          # left by the plug of the container's previous process
    assert plug.plug(vif()) is True
    # its own transaction, before the new veth: the add then opens the new interface
    assert steps == [f"get {TAP} name", f"del-port {TAP}", f"delete-link {TAP}",
                     f"link add {TAP}", f"add-port {TAP}"]


class FakePlugger:
    def __init__(self, replaced: bool, bound_after: int | None) -> None:
        self.replaced, self.bound_after = replaced, bound_after
        self.looks, self.unplugged = 0, False

    def plug(self, vif: NeutronVIF) -> bool:
        return self.replaced

    def bound(self, port_id: str) -> bool:
        self.looks += 1
        return self.bound_after is not None and self.looks > self.bound_after

    def unplug(self, port_id: str, bridge: str = "br-int") -> None:
        self.unplugged = True


class FakePoller:
    def __init__(self, plugger: FakePlugger) -> None:
        self.plugger = plugger
        self.asked: list[tuple[int, float]] = []

    def wait_active(self, port_id: str, timeout: float) -> bool:
        self.asked.append((self.plugger.looks, timeout))
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def service(plugger: FakePlugger, timeout: float = 10.0) -> tuple[NeutronVifService,
                                                                   FakePoller, Clock]:
    clock = Clock()
    poller = FakePoller(plugger)
    return (NeutronVifService(plugger, poller, vif_active_timeout=timeout,  # type: ignore[arg-type]
                              clock=clock, sleep=clock.sleep), poller, clock)


def test_a_first_plug_waits_for_active_only() -> None:
    plugger = FakePlugger(replaced=False, bound_after=None)
    svc, poller, _ = service(plugger)
    svc.add(vif())
    assert plugger.looks == 0 and poller.asked == [(0, 10.0)]


def test_a_re_plug_waits_for_the_agent_to_bind_the_new_ovs_port_then_for_active() -> None:
    plugger = FakePlugger(replaced=True, bound_after=3)
    svc, poller, clock = service(plugger)
    svc.add(vif())
    # ACTIVE is asked only once the new port is bound, within what is left of the timeout
    assert poller.asked == [(4, pytest.approx(10.0 - clock.now))]
    assert clock.now == pytest.approx(3 * svc.bound_interval)


def test_a_re_plug_the_agent_never_binds_is_not_ready_and_unplugged() -> None:
    plugger = FakePlugger(replaced=True, bound_after=None)
    svc, poller, _ = service(plugger, timeout=1.0)
    with pytest.raises(VIFNotReady):
        svc.add(vif())
    assert poller.asked == [] and plugger.unplugged
