"""Functional tests of berth's local networks: real namespaces, bridges, veths and
iptables rules on this host. They need root, not Docker.

Everything a test makes is its own: namespaces ``bt-<random>``, networks with random
names (so bridges ``bth<hash>`` of their own) on 10.244.1xx.0/24 inside those
namespaces. The fixtures remove every namespace, veth, bridge and rule they made, on
failure too.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cni_proc import CniDaemon
from support.netns_tools import Netns, delete_netns, make_netns

from berth.network.base import AttachmentKey, NetworkSpec

_SUBNETS = itertools.count(110)


@pytest.fixture(autouse=True)
def _requires_docker() -> None:
    """Overrides the functional suite's: these tests do not use Docker."""


@pytest.fixture(autouse=True)
def _requires_root() -> None:
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("iptables") is None:
        pytest.skip("needs root, iproute2 and iptables (network namespaces, bridges)")


@pytest.fixture
def netns() -> Iterator[Callable[[], Netns]]:
    made: list[Netns] = []

    def make() -> Netns:
        ns = make_netns()
        made.append(ns)
        return ns

    yield make
    for ns in made:
        delete_netns(ns)


class Networks:
    """Network configurations of one test, and the clean-up of their host parts."""

    def __init__(self) -> None:
        self.specs: list[NetworkSpec] = []
        self.keys: list[AttachmentKey] = []

    def config(self, daemon: CniDaemon | None = None, dual_stack: bool = False,
               **extra: Any) -> dict[str, Any]:
        """A network of its own; ``dual_stack``: with an IPv6 /64 of its own too."""
        name = f"ft-{uuid.uuid4().hex[:8]}"
        index = next(_SUBNETS) % 90 + 110
        subnet = f"10.244.{index}.0/24"
        subnet6 = f"fd00:b47:{uuid.uuid4().hex[:4]}:{index:x}::/64" if dual_stack else None
        self.specs.append(NetworkSpec.build(name, subnet, cidr6=subnet6))
        config: dict[str, Any] = {"cniVersion": "1.0.0", "name": name, "type": "berth-cni",
                                  "ipam": {"subnet": subnet}}
        if subnet6:
            config["ipam"]["subnet6"] = subnet6
        if daemon is not None:
            config["daemonUrl"] = daemon.url
        config.update(extra)
        return config

    def track(self, network: str, container_id: str, ifname: str = "eth0") -> AttachmentKey:
        key = AttachmentKey(network, container_id, ifname)
        self.keys.append(key)
        return key

    def cleanup(self) -> None:
        from berth.network.firewall import DualStackFirewall

        for key in self.keys:
            subprocess.run(["ip", "link", "del", key.host_ifname], capture_output=True,
                           check=False)
        firewall = DualStackFirewall()
        for spec in self.specs:
            subprocess.run(["ip", "link", "del", spec.bridge], capture_output=True, check=False)
            firewall.remove_network(spec)


@pytest.fixture
def networks() -> Iterator[Networks]:
    nets = Networks()
    yield nets
    nets.cleanup()


@pytest.fixture
def daemon_factory(tmp_path: Path) -> Iterator[Callable[..., CniDaemon]]:
    made: list[CniDaemon] = []

    def make(**kwargs: Any) -> CniDaemon:
        d = CniDaemon(tmp_path / f"d{len(made)}", **kwargs)
        made.append(d)
        return d.start()

    yield make
    for d in made:
        d.stop()


@pytest.fixture
def daemon(daemon_factory: Callable[..., CniDaemon]) -> CniDaemon:
    return daemon_factory()

