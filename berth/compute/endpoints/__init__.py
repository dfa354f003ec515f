"""The agent's RPC endpoints, one mixin per area; ``manager.ComputeManager`` combines
them. Each mixin lists its methods in ``METHODS`` (the RPC surface is exactly their
union) and uses ``self._deps`` (AgentDeps) and ``self._workers`` (ContainerWorkers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.compute.deps import AgentDeps
from berth.compute.workers import ContainerWorkers

Wire = dict[str, Any]


class EndpointBase:
    METHODS: frozenset[str] = frozenset()
    _deps: AgentDeps
    _workers: ContainerWorkers
    #: True while the event stream keeps the rows true (PLEG live): reads may use them.
    _live_state: Callable[[], bool]


def uuid_of(container: Wire) -> str:
    return str(container["uuid"])
