"""berth-cni-daemon killed with SIGKILL during and after adds and deletes, restarted on
the same registry: the registry is rebuilt, and no veth exists that it does not record;
and the sync pass that removes what a vanished namespace left."""

from __future__ import annotations

import os
import subprocess
import time
import uuid

from support.cni_proc import run_cni
from support.netns_tools import forward_rules_of, link_names


def wait_for(predicate, timeout: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return bool(predicate())


def active_containers(daemon) -> set[str]:  # type: ignore[no-untyped-def]
    registry = daemon.registry()
    assert all(a["state"] == "active" for a in registry["attachments"]), registry
    return {a["vif"]["container_id"] for a in registry["attachments"]}


def records_only(daemon, expected: set[str]) -> bool:  # type: ignore[no-untyped-def]
    """Whether the registry records the attachments of ``expected`` alone, each active
    (False while the sync pass is still taking one down: its state is then another)."""
    attachments = daemon.registry()["attachments"]
    return all(a["state"] == "active" for a in attachments) and \
        {a["vif"]["container_id"] for a in attachments} == expected


def assert_registry_matches_host(daemon, networks) -> None:  # type: ignore[no-untyped-def]
    """Every recorded attachment has its veth; every veth of the test is recorded."""
    active, links = active_containers(daemon), link_names()
    for key in networks.keys:
        assert (key.host_ifname in links) == (key.container_id in active), (key, active)


def test_sigkill_after_add_keeps_the_attachment_and_a_restart_rebuilds_it(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    config = networks.config(daemon)
    ns1, ns2 = netns(), netns()
    networks.track(config["name"], "c1")
    networks.track(config["name"], "c2")
    rc, first = run_cni("ADD", config, container_id="c1", netns=ns1.path)
    assert rc == 0
    daemon.kill()
    daemon.start()
    assert active_containers(daemon) == {"c1"}
    assert_registry_matches_host(daemon, networks)
    assert run_cni("CHECK", config, container_id="c1", netns=ns1.path) == (0, None)
    rc, second = run_cni("ADD", config, container_id="c2", netns=ns2.path)
    assert rc == 0 and second["ips"][0]["address"] != first["ips"][0]["address"]  # IPAM rebuilt
    for cid, ns in (("c1", ns1), ("c2", ns2)):
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)
    assert_registry_matches_host(daemon, networks)
    assert networks.specs[0].bridge not in link_names()


def kill_when(daemon, proc, trigger, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    """SIGKILL the daemon as soon as ``trigger()`` holds; False when the plugin finished
    first (the daemon is killed then anyway)."""
    deadline = time.monotonic() + timeout
    fired = False
    while proc.poll() is None and time.monotonic() < deadline:
        if trigger():
            fired = True
            break
        time.sleep(0.0005)
    daemon.kill()
    proc.wait(timeout=60)
    return fired


def after(seconds: float):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    return lambda: time.monotonic() > deadline


def test_sigkill_during_adds_leaves_no_orphan_after_restart(daemon, networks, netns) -> None:  # type: ignore[no-untyped-def]
    config = networks.config(daemon)

    def registry_says_plugging() -> bool:
        try:
            return '"plugging"' in daemon.registry_file.read_text()
        except (FileNotFoundError, ValueError):
            return False

    def link_exists(name: str):  # type: ignore[no-untyped-def]
        return lambda: os.path.exists(f"/sys/class/net/{name}")

    outcomes = []
    for i in range(9):
        ns, cid = netns(), f"c{i}"
        key = networks.track(config["name"], cid)
        # Kill points inside the daemon's add: right after its intent is on disk; once
        # the veth pair exists (its address and route may not be set yet); and on
        # timers, which also land before and after the add.
        trigger, label = [
            (registry_says_plugging, "intent written"),
            (link_exists(key.host_ifname), "veth made"),
            (after(0.15 + 0.04 * i), "timer"),
        ][i % 3]
        proc = run_cni("ADD", config, container_id=cid, netns=ns.path, popen=True)
        fired = kill_when(daemon, proc, trigger)
        daemon.start()
        active = active_containers(daemon)
        if proc.returncode == 0:
            assert cid in active  # an answered add is never lost
        assert_registry_matches_host(daemon, networks)
        assert ("eth0" in ns.run("ip", "-o", "link")) == (cid in active)
        outcomes.append((label, fired, proc.returncode, cid in active))
    for i in range(len(outcomes)):
        assert run_cni("DEL", config, container_id=f"c{i}", netns="") == (0, None)
    assert_registry_matches_host(daemon, networks)
    assert daemon.registry()["networks"] == []
    assert forward_rules_of(networks.specs[0].bridge) == []
    print("SIGKILL during ADD (kill point, fired before the answer, plugin exit, kept):",
          outcomes)
    # At least the deterministic kill points fired before the add was answered.
    assert sum(1 for label, fired, *_ in outcomes if fired and label != "timer") >= 4


def test_sigkill_during_deletes_then_del_again_leaves_nothing(daemon, networks, netns) -> None:  # type: ignore[no-untyped-def]
    config = networks.config(daemon)
    plugged = []
    for i in range(4):
        ns, cid = netns(), f"c{i}"
        networks.track(config["name"], cid)
        assert run_cni("ADD", config, container_id=cid, netns=ns.path)[0] == 0
        plugged.append((ns, cid))
    for (ns, cid), delay in zip(plugged, (0.08, 0.12, 0.16, 0.3), strict=True):
        proc = run_cni("DEL", config, container_id=cid, netns=ns.path, popen=True)
        time.sleep(delay)
        daemon.kill()
        proc.wait(timeout=60)
        daemon.start()
        assert_registry_matches_host(daemon, networks)
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)
        assert cid not in active_containers(daemon)
    assert_registry_matches_host(daemon, networks)
    assert networks.specs[0].bridge not in link_names()


def test_restart_removes_a_berth_veth_that_no_entry_records(daemon, networks) -> None:  # type: ignore[no-untyped-def]
    key = networks.track("ft-orphan", "lost")
    peer = f"btp-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "link", "add", key.host_ifname, "type", "veth", "peer", "name",
                    peer], check=True)
    daemon.kill()
    daemon.start()
    links = link_names()
    assert key.host_ifname not in links and peer not in links


def test_restart_leaves_the_veths_on_another_daemons_bridge(daemon) -> None:  # type: ignore[no-untyped-def]
    """A second berth on the host (another test run's) keeps its veths: the sweep takes
    only veths on this daemon's bridges or on none."""
    tag = uuid.uuid4().hex[:10]
    bridge, veth, peer = f"bto-{tag[:8]}", f"vth{tag}x", f"btp-{tag[:8]}"
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], check=True)
    try:
        subprocess.run(["ip", "link", "add", veth, "type", "veth", "peer", "name", peer],
                       check=True)
        subprocess.run(["ip", "link", "set", veth, "master", bridge], check=True)
        daemon.kill()
        daemon.start()
        assert veth in link_names(), daemon.log()
    finally:
        subprocess.run(["ip", "link", "del", veth], check=False, capture_output=True)
        subprocess.run(["ip", "link", "del", bridge], check=False, capture_output=True)


def test_sync_removes_the_attachment_of_a_namespace_that_is_gone(  # type: ignore[no-untyped-def]
        daemon_factory, networks, netns) -> None:
    daemon = daemon_factory(sync_interval=1)
    config = networks.config(daemon)
    ns1, ns2 = netns(), netns()
    k1 = networks.track(config["name"], "c1")
    networks.track(config["name"], "c2")
    assert run_cni("ADD", config, container_id="c1", netns=ns1.path)[0] == 0
    assert run_cni("ADD", config, container_id="c2", netns=ns2.path)[0] == 0
    subprocess.run(["ip", "netns", "del", ns1.name], check=True)
    assert wait_for(lambda: records_only(daemon, {"c2"})), daemon.log()
    assert k1.host_ifname not in link_names()
    subprocess.run(["ip", "netns", "del", ns2.name], check=True)
    assert wait_for(lambda: daemon.registry()["networks"] == []), daemon.log()
    assert networks.specs[0].bridge not in link_names()
    assert forward_rules_of(networks.specs[0].bridge) == []
