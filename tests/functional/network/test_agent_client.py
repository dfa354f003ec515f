"""What the compute agent will do: plug a running process's namespace
(``/proc/<pid>/ns/net``, as Docker's containers have) through the daemon's typed client,
and see the sync pass clean up once the process is gone."""

from __future__ import annotations

import ipaddress
import subprocess
import time

from support.netns_tools import forward_rules_of, link_names

from berth.cni.client import DaemonClient
from berth.network.base import AttachmentKey, NetworkSpec


def test_a_process_namespace_is_plugged_and_cleaned_up_when_the_process_dies(  # type: ignore[no-untyped-def]
        daemon_factory, networks) -> None:
    daemon = daemon_factory(sync_interval=1)
    networks.config()
    spec: NetworkSpec = networks.specs[-1]
    key: AttachmentKey = networks.track(spec.name, "agent-c1")
    # A process in a network namespace of its own, as a container with network_mode none.
    proc = subprocess.Popen(["unshare", "--net", "sleep", "300"])
    try:
        netns = f"/proc/{proc.pid}/ns/net"
        deadline = time.monotonic() + 10
        while subprocess.run(["readlink", netns], capture_output=True, text=True,
                             check=False).stdout == subprocess.run(
                ["readlink", "/proc/self/ns/net"], capture_output=True, text=True,
                check=False).stdout:
            assert time.monotonic() < deadline, "unshare did not enter a new namespace"
            time.sleep(0.05)
        client = DaemonClient(daemon.url)
        fixed = ipaddress.IPv4Address(str(spec.gateway + 9))
        vif = client.add(spec, "agent-c1", netns, fixed_ip=fixed)
        assert vif.address.ip == fixed and vif.netns == netns
        inside = subprocess.run(["nsenter", "-t", str(proc.pid), "-n", "ip", "-o", "-4",
                                 "addr", "show", "eth0"], capture_output=True, text=True,
                                check=True).stdout
        assert str(vif.address) in inside
        client.check(spec, "agent-c1", netns)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    deadline = time.monotonic() + 15
    while daemon.registry()["networks"] and time.monotonic() < deadline:
        time.sleep(0.2)  # the attachment goes first, then its network
    assert daemon.registry() == {"version": 1, "networks": [], "attachments": []}
    assert key.host_ifname not in link_names() and spec.bridge not in link_names()
    assert forward_rules_of(spec.bridge) == []
