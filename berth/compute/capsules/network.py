"""A docker-driver capsule's berth networks (``[network]driver = local``): the sandbox
is made with ``network_mode=none`` and, once started, plugged by the CNI daemon as a
container is (``berth.compute.networking``), keyed by the capsule's uuid; its members
join the sandbox's namespace, so they have its addresses::

    the capsule row's cni_metadata (the API's: the project's default network, or
      the nets asked for, eth0, eth1, ... in that order) and exposed_ports (the
      members' ports, the sandbox's since members have no network of their own)
    ──► docker create (network none) + start of the sandbox
    ──► plug into the sandbox's process's namespace (its policy: the capsule's
        security groups and exposed ports)
    ──► ``addresses`` written on the capsule and on each member
    ──► delete or a failed create: unplugged (a DEL of what is gone is nothing)

The cri driver's pods are plugged by containerd instead (``capsules.cri.network``).
"""

from __future__ import annotations

import logging
from typing import Any

from berth.common import exceptions as exc
from berth.compute import networking
from berth.compute.deps import AgentDeps
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def enabled(deps: AgentDeps, row: Container) -> bool:
    """Whether berth plugs this capsule's sandbox (local networks, networks asked for)."""
    return deps.networks is not None and bool(networking.requested(row))


def network_mode(deps: AgentDeps, row: Container) -> str | None:
    """The sandbox's Docker network mode: ``none`` when berth plugs it, else Docker's
    default bridge."""
    return "none" if enabled(deps, row) else None


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


def release(deps: AgentDeps, row: Container) -> None:
    """Unplug the sandbox's networks (idempotent). Failures are logged: the daemon's
    sync pass removes an attachment whose namespace is gone."""
    if not enabled(deps, row):
        return
    assert deps.networks is not None
    try:
        deps.networks.unplug(row)
    except networking.NetworkPlugFailed as err:
        LOG.warning("capsule %s: could not unplug its sandbox (%s); the daemon's sync "
                    "pass removes it", row.uuid, err.msg)

