"""create, delete, start, stop, show."""

from __future__ import annotations

from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute.capsules import create as capsule_create
from berth.compute.capsules import delete as capsule_delete
from berth.compute.endpoints import EndpointBase, Wire, uuid_of
from berth.compute.flows import create, delete, lifecycle, sync
from berth.compute.views import container_payload
from berth.db import containers
from berth.db.capsules import CAPSULE


class ContainerEndpoints(EndpointBase):
    METHODS = frozenset({"container_create", "container_delete", "container_start",
                         "container_stop", "container_show"})

    def container_create(self, context: Wire, limits: Wire | None, requested_networks: list,
                         requested_volumes: Wire | None, container: Wire, run: bool,
                         pci_requests: list | None = None) -> None:
        ctx = RequestContext.from_dict(context)
        if container.get("container_type") == CAPSULE:
            self._workers.submit_flow(uuid_of(container), capsule_create.create_capsule,
                                      self._deps, ctx, uuid_of(container), limits or {})
            return
        self._workers.submit_flow(uuid_of(container), create.create_container, self._deps,
                                  ctx, uuid_of(container), run=bool(run), limits=limits or {},
                                  volumes=bool(requested_volumes))

    def container_delete(self, context: Wire, container: Wire, force: bool = False) -> None:
        ctx = RequestContext.from_dict(context)
        flow = capsule_delete.delete_capsule if container.get("container_type") == CAPSULE \
            else delete.delete_container
        self._workers.submit_flow(uuid_of(container), flow, self._deps, ctx,
                                  uuid_of(container), force=bool(force))

    def container_start(self, context: Wire, container: Wire) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit_flow(uuid_of(container), lifecycle.start_container, self._deps,
                                  ctx, uuid_of(container))

    def container_stop(self, context: Wire, container: Wire, timeout: int | None = None) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit_flow(uuid_of(container), lifecycle.stop_container, self._deps,
                                  ctx, uuid_of(container),
                                  timeout=None if timeout is None else int(timeout))

    def container_show(self, context: Wire, container: Wire) -> Wire:
        """The container as Docker holds it. While the event stream is live the row is
        already that (updated within about a second of any change), so it is returned
        without asking Docker; otherwise the engine is inspected and the row refreshed."""
        uuid = uuid_of(container)
        with container_context(uuid):
            if self._live_state():
                return container_payload(containers.get_by_uuid(self._deps.db, uuid))
            return container_payload(sync.refresh(self._deps, uuid))
