"""The agent's RPC endpoints, one mixin per area; ``manager.ComputeManager`` combines
them. Each mixin lists its methods in ``METHODS`` (the RPC surface is exactly their
union) and uses ``self._deps`` (AgentDeps) and ``self._workers`` (ContainerWorkers)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.workers import ContainerWorkers

Wire = dict[str, Any]

#: How long a call that runs on the container's worker waits for its turn, and how
#: long in all for its answer: below the API's default RPC timeout (60 s), so that
#: the caller gets a clear answer instead of a timeout and no RPC thread stays held
#: for a caller that has given up.
TURN_WAIT_SECONDS = 50.0
ANSWER_WAIT_SECONDS = 55.0


class EndpointBase:
    METHODS: frozenset[str] = frozenset()
    _deps: AgentDeps
    _workers: ContainerWorkers
    #: True while the event stream keeps the rows true (PLEG live): reads may use them.
    _live_state: Callable[[], bool]

    def _in_turn(self, uuid: str, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` on ``uuid``'s worker (in order with the casts before it)
        and return its result (or raise its error). Conflict when it has not begun
        within TURN_WAIT_SECONDS (it then never runs); ServiceUnavailable when it has
        begun but not ended within ANSWER_WAIT_SECONDS (it goes on, and its outcome
        shows in the container's actions)."""
        lock = threading.Lock()
        done = threading.Event()
        state = {"started": False, "gave_up": False}
        box: dict[str, Any] = {}

        def job() -> None:
            with lock:
                if state["gave_up"]:
                    return
                state["started"] = True
            try:
                box["value"] = fn(*args)
            except BaseException as err:  # noqa: BLE001 - handed to the waiting caller
                box["error"] = err
            finally:
                done.set()

        self._workers.submit(uuid, job)
        if not done.wait(TURN_WAIT_SECONDS):
            with lock:
                if not state["started"]:
                    state["gave_up"] = True
                    raise exc.Conflict(
                        f"Container {uuid} is busy with earlier actions and the {what} "
                        f"could not begin within {TURN_WAIT_SECONDS:g} s; nothing was "
                        f"changed. Try again when they are done.")
            if not done.wait(ANSWER_WAIT_SECONDS - TURN_WAIT_SECONDS):
                raise exc.ServiceUnavailable(
                    reason=f"The {what} of container {uuid} is still running after "
                           f"{ANSWER_WAIT_SECONDS:g} s; it goes on, and its outcome shows "
                           f"in the container's action list (zun action-list).")
        if "error" in box:
            raise box["error"]
        return box["value"]


def uuid_of(container: Wire) -> str:
    return str(container["uuid"])
