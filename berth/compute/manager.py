"""The compute agent's RPC endpoints: Zun's method names and arguments, nothing else.

A cast endpoint turns the wire arguments into a request context and a uuid and
queues the flow on the container's worker (``ContainerWorkers``): it returns at once,
and actions on one container run one at a time, in order. A call endpoint runs its
flow in the caller's RPC thread and returns plain JSON-able data.
"""

from __future__ import annotations

import logging
from typing import Any

from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute.deps import AgentDeps
from berth.compute.flows import create, delete, images, lifecycle
from berth.compute.views import container_payload
from berth.compute.workers import ContainerWorkers

LOG = logging.getLogger(__name__)

Wire = dict[str, Any]


def _uuid(container: Wire) -> str:
    return str(container["uuid"])


class ComputeManager:
    RPC_METHODS = frozenset({
        "container_create", "container_delete", "container_start", "container_stop",
        "container_show", "image_search",
    })

    def __init__(self, deps: AgentDeps, workers: ContainerWorkers) -> None:
        self._deps = deps
        self._workers = workers

    # -- casts ---------------------------------------------------------------------

    def container_create(self, context: Wire, limits: Wire | None, requested_networks: list,
                         requested_volumes: Wire | None, container: Wire, run: bool,
                         pci_requests: list | None = None) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit(_uuid(container), create.create_container, self._deps, ctx,
                             _uuid(container), run=bool(run), limits=limits or {})

    def container_delete(self, context: Wire, container: Wire, force: bool = False) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit(_uuid(container), delete.delete_container, self._deps, ctx,
                             _uuid(container), force=bool(force))

    def container_start(self, context: Wire, container: Wire) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit(_uuid(container), lifecycle.start_container, self._deps, ctx,
                             _uuid(container))

    def container_stop(self, context: Wire, container: Wire, timeout: int | None = None) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit(_uuid(container), lifecycle.stop_container, self._deps, ctx,
                             _uuid(container), timeout=None if timeout is None else int(timeout))

    # -- calls ---------------------------------------------------------------------

    def container_show(self, context: Wire, container: Wire) -> Wire:
        with container_context(_uuid(container)):
            return container_payload(lifecycle.refresh(self._deps, _uuid(container)))

    def image_search(self, context: Wire, image: str, image_driver_name: str | None = None,
                     exact_match: bool = False, registry: Wire | None = None) -> list[Wire]:
        return images.search_image(self._deps, image, bool(exact_match))
