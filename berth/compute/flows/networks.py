"""network_attach and network_detach: one more network for a container, or one fewer,
while it runs or not (rpc-compute.md). The interface is eth<N>, the first N free; a
running container is plugged (or unplugged) at once, a stopped one at its next start.

Both are calls: the API answers once the row says the outcome. Unlike Zun's, a
failure reaches the caller (Zun swallows it and answers 200)."""

from __future__ import annotations

import logging
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.networking import ContainerNetworks
from berth.compute.states import TaskState
from berth.db import containers
from berth.db.models import Container

LOG = logging.getLogger(__name__)


def attach_network(deps: AgentDeps, ctx: RequestContext, uuid: str,
                   requested_network: dict[str, Any]) -> Container:
    networks = _local(deps)
    with common.recorded(deps, ctx, uuid, "compute__do_network_attach"), \
            common.task(deps, uuid, TaskState.NETWORK_ATTACHING) as row:
        values = networks.attach(row, str(requested_network["network"]),
                                 requested_network.get("fixed_ip") or None,
                                 port=requested_network.get("port") or None)
        row = containers.update_(deps.db, uuid, values)
    LOG.info("attached to network %s", requested_network["network"])
    return row


def detach_network(deps: AgentDeps, ctx: RequestContext, uuid: str, network: str
                   ) -> Container:
    networks = _local(deps)
    with common.recorded(deps, ctx, uuid, "compute__do_network_detach"), \
            common.task(deps, uuid, TaskState.NETWORK_DETACHING) as row:
        row = containers.update_(deps.db, uuid, networks.detach(row, network))
    LOG.info("detached from network %s", network)
    return row


def _local(deps: AgentDeps) -> ContainerNetworks:
    if deps.networks is None:
        raise exc.Invalid("This node keeps containers on Docker's default bridge "
                          "([network]driver = docker): it cannot attach or detach networks.")
    return deps.networks
