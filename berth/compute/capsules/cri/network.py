"""A CRI capsule's berth networks (``[network]driver = local``, ``[cri]cni_conf_dir``
set): containerd plugs the pod, berth-cni-daemon holds its interfaces::

    the capsule row's cni_metadata (``berth.network.metadata``; the API's: the
      project's default network, or the nets asked for, eth0, eth1, ... in that order)
    ──► the pod's annotations: each network's CNI configuration, its interface and
        fixed IP, and this agent's daemon (``berth.cni.pod``)
    ──► RunPodSandbox: containerd runs berth-cni (``berth.cni.conflist``), which asks
        the daemon to plug each network into the pod's namespace
    ──► ``addresses``: the daemon's answer for each attachment (an ADD of what is
        already attached answers it again), written on the capsule and its members
    ──► StopPodSandbox: containerd's DEL unplugs them; after RemovePodSandbox the
        agent asks the daemon to unplug each one again (idempotent), so that nothing
        is left in the daemon's registry when containerd's DEL failed or never ran.

The annotations are the pod's for its whole life: containerd passes them again on
DEL, also after its own restart.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from berth.cni import pod as cni_pod
from berth.cni.contract import CniError, network_config
from berth.common import exceptions as exc
from berth.compute import networking
from berth.compute.capsules import network as capsule_network
from berth.compute.deps import AgentDeps
from berth.db.models import Container
from berth.network.addresses import Addresses, of_vif
from berth.network.metadata import CniMetadata
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)


#: Whether berth plugs this capsule's pod: as for a docker sandbox.
enabled = capsule_network.enabled


def daemon_url(deps: AgentDeps) -> str:
    assert deps.networks is not None
    client = deps.networks.client
    return f"http://{client.host}:{client.port}"


def pod_annotations(deps: AgentDeps, row: Container) -> dict[str, str]:
    """The annotations that give the pod its networks; {} when berth plugs none
    (``NetworkNotFound`` when a network was deleted since the API accepted it)."""
    if not enabled(deps, row):
        return {}
    assert deps.networks is not None
    entries = [{"config": network_config(deps.networks.spec(entry["network"])),
                "ifname": entry["ifname"], "ip": entry.get("fixed_ip") or None}
               for entry in networking.requested(row)]
    return cni_pod.pod_annotations(entries, daemon_url(deps))


def addresses(deps: AgentDeps, pods: PodRuntime, row: Container, pod_id: str
              ) -> dict[str, Any]:
    """The capsule's ``addresses`` and ``cni_metadata`` once its pod runs: the
    daemon's record of each attachment containerd made. ``CapsuleFailed``-worthy
    errors are ``NetworkPlugFailed``."""
    if not enabled(deps, row):
        return {}
    assert deps.networks is not None
    netns = pods.pod_netns(pod_id)
    entries = networking.requested(row)
    found: Addresses = {}
    for entry in entries:
        if netns is None:
            raise exc.NetworkPlugFailed(network=entry["network"],
                                        reason="containerd does not say where the pod's "
                                               "network namespace is")
        spec = deps.networks.spec(entry["network"])
        fixed = entry.get("fixed_ip")
        try:
            vif = deps.networks.client.add(
                spec, pod_id, netns, entry["ifname"],
                fixed_ip=ipaddress.IPv4Address(fixed) if fixed else None)
        except CniError as err:
            raise exc.NetworkPlugFailed(network=entry["network"], reason=err.msg) from err
        found.setdefault(entry["network"], []).extend(of_vif(vif))
    LOG.info("capsule %s: pod %s plugged into %s", row.uuid, pod_id[:12], ", ".join(
        f"{a['ifname']} {a['addr']}" for v in found.values() for a in v))
    meta: CniMetadata = {"networks": entries, "pid": 0, "pod": pod_id}
    return {"addresses": found, "cni_metadata": meta}


def release(deps: AgentDeps, row: Container, pod_id: str | None) -> None:
    """Unplug the pod's networks in the daemon (after containerd's own DEL: nothing
    to do then). Failures are logged: the daemon's sync pass removes an attachment
    whose namespace is gone."""
    if not enabled(deps, row) or not pod_id:
        return
    assert deps.networks is not None
    for entry in networking.requested(row):
        try:
            spec = deps.networks.spec(entry["network"])
            deps.networks.client.delete(spec, pod_id, entry["ifname"])
        except exc.NetworkNotFound:
            continue
        except CniError as err:
            LOG.warning("capsule %s: could not unplug pod %s from network %s (%s); the "
                        "daemon's sync pass removes it", row.uuid, pod_id[:12],
                        entry["network"], err.msg)
