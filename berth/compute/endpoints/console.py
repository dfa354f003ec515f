"""exec, exec resize, attach, TTY resize (RPC calls; no lock, no task_state)."""

from __future__ import annotations

from typing import Any

from berth.common.log import container_context
from berth.compute.endpoints import EndpointBase, Wire, uuid_of
from berth.compute.flows import console


class ConsoleEndpoints(EndpointBase):
    METHODS: frozenset[str] = frozenset({"container_exec", "container_exec_resize",
                                         "container_attach", "container_resize"})

    def container_exec(self, context: Wire, container: Wire, command: Any, run: bool = True,
                       interactive: bool = False) -> Wire:
        with container_context(uuid_of(container)):
            return console.execute(self._deps, uuid_of(container), command, bool(run),
                                   bool(interactive))

    def container_exec_resize(self, context: Wire, exec_id: str, height: int,
                              width: int) -> None:
        console.exec_resize(self._deps, str(exec_id), int(height), int(width))

    def container_attach(self, context: Wire, container: Wire) -> str:
        with container_context(uuid_of(container)):
            return console.attach(self._deps, uuid_of(container))

    def container_resize(self, context: Wire, container: Wire, height: int,
                         width: int) -> None:
        with container_context(uuid_of(container)):
            console.resize(self._deps, uuid_of(container), int(height), int(width))
