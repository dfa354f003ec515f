"""The compute agent's RPC endpoints: Zun's method names and arguments, nothing else.

A cast endpoint turns the wire arguments into a request context and a uuid and
queues the flow on the container's worker (``ContainerWorkers``): it returns at once,
and actions on one container run one at a time, in order. A call endpoint runs its
flow in the caller's RPC thread and returns plain JSON-able data. The endpoints live
in ``compute/endpoints/``, one mixin per area; this class only combines them.
"""

from __future__ import annotations

from collections.abc import Callable

from berth.compute.deps import AgentDeps
from berth.compute.endpoints.actions import ActionEndpoints
from berth.compute.endpoints.console import ConsoleEndpoints
from berth.compute.endpoints.containers import ContainerEndpoints
from berth.compute.endpoints.images import ImageEndpoints
from berth.compute.endpoints.inspection import InspectionEndpoints
from berth.compute.endpoints.networks import NetworkEndpoints
from berth.compute.workers import ContainerWorkers

_MIXINS = (ContainerEndpoints, ActionEndpoints, InspectionEndpoints, ConsoleEndpoints,
           ImageEndpoints, NetworkEndpoints)


class ComputeManager(*_MIXINS):  # type: ignore[misc]
    RPC_METHODS: frozenset[str] = frozenset().union(*(m.METHODS for m in _MIXINS))

    def __init__(self, deps: AgentDeps, workers: ContainerWorkers,
                 live_state: Callable[[], bool] = lambda: False) -> None:
        self._deps = deps
        self._workers = workers
        self._live_state = live_state
