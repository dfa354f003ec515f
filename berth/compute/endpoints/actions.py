"""reboot, pause, unpause, kill, rebuild, update, resize_container, security groups.

Casts queue their flow on the container's worker and return. ``container_update`` is
a call, but it changes the container, so it too runs on the container's worker (in
turn with the casts before it) while the RPC thread waits for its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.common.context import RequestContext
from berth.compute.endpoints import EndpointBase, Wire, uuid_of
from berth.compute.flows import actions, rebuild
from berth.compute.periodic import lost_casts
from berth.compute.views import container_payload

# A reboot or rebuild cast that arrives after the agent took it for lost and did it
# (``periodic/lost_casts.py``) is not done twice.
_REBOOT = lost_casts.unless_done(actions.reboot_container, lost_casts.REBOOT_ACTIONS)
_REBUILD = lost_casts.unless_done(rebuild.rebuild_container, lost_casts.REBUILD_ACTIONS)


class ActionEndpoints(EndpointBase):
    METHODS = frozenset({"container_reboot", "container_pause", "container_unpause",
                         "container_kill", "container_rebuild", "container_update",
                         "resize_container", "add_security_group",
                         "remove_security_group"})

    def _queue(self, context: Wire, container: Wire, flow: Callable[..., Any],
               *args: Any) -> None:
        uuid = uuid_of(container)
        self._workers.submit_flow(uuid, flow, self._deps, RequestContext.from_dict(context),
                                  uuid, *args)

    def container_reboot(self, context: Wire, container: Wire,
                         timeout: int | None = None) -> None:
        self._queue(context, container, _REBOOT, None if timeout is None else int(timeout))

    def container_pause(self, context: Wire, container: Wire) -> None:
        self._queue(context, container, actions.pause_container)

    def container_unpause(self, context: Wire, container: Wire) -> None:
        self._queue(context, container, actions.unpause_container)

    def container_kill(self, context: Wire, container: Wire, signal: str | None = None
                       ) -> None:
        self._queue(context, container, actions.kill_container,
                    None if signal is None else str(signal))

    def container_rebuild(self, context: Wire, container: Wire, run: bool = False) -> None:
        self._queue(context, container, _REBUILD, bool(run))

    def resize_container(self, context: Wire, container: Wire, patch: Wire) -> None:
        self._queue(context, container, actions.resize_container, dict(patch or {}))

    def add_security_group(self, context: Wire, container: Wire, security_group: str
                           ) -> None:
        self._queue(context, container, actions.add_security_group, str(security_group))

    def remove_security_group(self, context: Wire, container: Wire, security_group: str
                              ) -> None:
        self._queue(context, container, actions.remove_security_group, str(security_group))

    def container_update(self, context: Wire, container: Wire, patch: Wire) -> Wire:
        uuid = uuid_of(container)
        row = self._in_turn(uuid, "update", actions.update_container, self._deps, uuid,
                            dict(patch or {}))
        return container_payload(row)
