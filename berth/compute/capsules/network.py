r"""A docker-driver capsule's berth networks (``[network]driver = local``): the sandbox
is made with ``network_mode=none`` and, once started, plugged by the CNI daemon as a
container is (``berth.compute.networking``), keyed by the capsule's uuid; its members
join the sandbox's namespace, so they have its addresses::

    the capsule row's cni_metadata (the API's: the project's default network, or
      the nets asked for, eth0, eth1, ... in that order) and exposed_ports (the
      members' ports, the sandbox's since members have no network of their own)
    ──► docker create (network none) + start of the sandbox
    ──► plug into the sandbox's process's namespace (its policy: the capsule's
        security groups and exposed ports)
    ──► the members' ``hostPort``\ s published on the node by the standard CNI
        ``portmap`` plugin (Docker's port bindings do nothing on ``network_mode=none``),
        as containerd chains it after berth-cni for a pod
    ──► ``addresses`` written on the capsule and on each member
    ──► delete or a failed create: ports withdrawn, unplugged (a DEL of what is gone
        is nothing)

The cri driver's pods are plugged by containerd instead (``capsules.cri.network``).
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

from berth.cni.conflist import PORTMAP, has_portmap
from berth.common import exceptions as exc
from berth.compute import networking
from berth.compute.deps import AgentDeps
from berth.compute.flows.network_step import unplug_quietly
from berth.db import containers
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def enabled(deps: AgentDeps, row: Container) -> bool:
    """Whether berth plugs this capsule's sandbox (local networks, networks asked for)."""
    return deps.networks is not None and bool(networking.requested(row))


def network_mode(deps: AgentDeps, row: Container
                 ) -> tuple[str | None, rt.NetworkEndpoint | None]:
    """The sandbox's Docker network mode and its endpoint there: ``none`` when berth
    plugs it (the kuryr driver's: the Docker network of its first network, with its
    port's addresses), else Docker's default bridge."""
    if not enabled(deps, row):
        return None, None
    assert deps.networks is not None
    return deps.networks.engine_networking(row)


def plug_sandbox(deps: AgentDeps, row: Container, seen: rt.RuntimeContainer
                 ) -> dict[str, Any]:
    """The capsule's row values once its started sandbox (``seen``) is plugged: its
    ``addresses`` and ``cni_metadata``; {} when berth plugs nothing.
    ``NetworkPlugFailed`` when a network cannot be plugged (nothing left plugged)."""
    if not enabled(deps, row):
        return {}
    assert deps.networks is not None
    if seen.state is None or not seen.state.running or not seen.state.pid:
        raise exc.NetworkPlugFailed(network="(all)",
                                    reason="the sandbox stopped before it could be plugged")
    values = deps.networks.plug(row, seen.state.pid)
    LOG.info("capsule %s: sandbox %s plugged", row.uuid, (row.container_id or seen.id)[:12])
    return values


def publish_ports(deps: AgentDeps, row: Container, ports: tuple[rt.PublishedPort, ...],
                  values: dict[str, Any], pid: int) -> None:
    """The members' host ports forwarded to the sandbox's first address (``values``:
    its plug's) by ``portmap`` ADD. ``NetworkPlugFailed`` when there is no portmap
    plugin on the node or it fails (the caller's undo withdraws what it laid)."""
    if not ports or not values:
        return
    first = networking.requested(row)[0]
    address = values["addresses"][first["network"]][0]
    ip = ipaddress.ip_interface(f"{address['addr']}/"
                                f"{ipaddress.ip_network(address['subnet_id']).prefixlen}")
    previous = {"cniVersion": "1.0.0",
                "interfaces": [{"name": first["ifname"], "sandbox": f"/proc/{pid}/ns/net"}],
                "ips": [{"address": str(ip), "interface": 0}]}
    _portmap(deps, row, "ADD", ports, f"/proc/{pid}/ns/net", first["ifname"], previous)
    LOG.info("capsule %s: host port(s) %s forwarded to %s", row.uuid,
             ", ".join(f"{p.host_port}/{p.protocol}" for p in ports), ip.ip)


def withdraw_ports(deps: AgentDeps, row: Container,
                   ports: tuple[rt.PublishedPort, ...]) -> None:
    """``portmap`` DEL (idempotent); a failure is logged."""
    if not ports or not enabled(deps, row):
        return
    try:
        _portmap(deps, row, "DEL", ports, "", networking.requested(row)[0]["ifname"], None)
    except exc.NetworkPlugFailed as err:
        LOG.warning("capsule %s: could not withdraw its host ports (%s)", row.uuid, err.msg)


def _portmap(deps: AgentDeps, row: Container, command: str,
             ports: tuple[rt.PublishedPort, ...], netns: str, ifname: str,
             previous: dict[str, Any] | None) -> None:
    found = next((Path(d) for d in deps.settings.cni_bin_dirs if has_portmap(d)), None)
    if found is None:
        raise exc.NetworkPlugFailed(
            network="(host ports)",
            reason=f"no portmap CNI plugin in {', '.join(deps.settings.cni_bin_dirs)} to "
                   f"publish hostPort: install containernetworking-plugins on host "
                   f"{deps.host}, or drop hostPort")
    config: dict[str, Any] = {
        "cniVersion": "1.0.0", "name": f"berth-capsule-{networking.requested(row)[0]['network']}",
        **PORTMAP, "runtimeConfig": {"portMappings": [
            {"hostPort": p.host_port, "containerPort": p.container_port,
             "protocol": p.protocol} for p in ports]}}
    if previous is not None:
        config["prevResult"] = previous
    env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
           "CNI_COMMAND": command, "CNI_CONTAINERID": row.uuid, "CNI_NETNS": netns,
           "CNI_IFNAME": ifname, "CNI_PATH": str(found)}
    try:
        done = subprocess.run([str(found / "portmap")], input=json.dumps(config).encode(),
                              env=env, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise exc.NetworkPlugFailed(network="(host ports)", reason=str(err)) from err
    if done.returncode != 0:
        raise exc.NetworkPlugFailed(network="(host ports)", reason=(
            f"portmap {command} failed: {done.stdout.decode(errors='replace')[:300]} "
            f"{done.stderr.decode(errors='replace')[:300]}").strip())


def release(deps: AgentDeps, row: Container) -> None:
    """Unplug the sandbox's networks (idempotent), then release what the driver made
    for it (with Neutron, its ports). Failures are logged: the daemon's sync pass
    removes an attachment whose namespace is gone."""
    if not enabled(deps, row):
        return
    assert deps.networks is not None
    row = containers.find_by_uuid(deps.db, row.uuid) or row   # with what the plug wrote
    unplug_quietly(deps, row, None)
    networking.release(deps.networks, row)     # Neutron: the ports made for it

