"""LastInspected: when this agent last wrote to a row what the engine said of its
container, on PLEG's clock (monotonic seconds).

A create with run makes the engine emit "create" and "start" within milliseconds of
the flow's own inspect; PLEG queues a state sync for each, and each sync would read
the row and inspect the container again to learn what the flow has just written.
An event PLEG observed at ``at`` reflects a change the engine made before ``at``; an
inspect that began after ``at`` saw that change, so once its answer is in the row,
the event has nothing to tell (``covers``). Only inspects whose answer was written
(or found already in the row) are recorded; an event observed after the inspect
began is synced as before. Entries older than ``horizon`` seconds are dropped: by
then every event they could cover has been handled.

The event stream often delivers "start" a moment after the start call returned and
the flow's inspect began. The engine stamps each event (``timeNano``) after making
the change, so when the engine shares this host's clock (a local socket,
``engine_clock_shared``), an event stamped before the inspect began is covered too.

PLEG's relist reports a container new since the last listing (every new container
once) with the state ``docker ps`` shows: when that is the state the last recorded
inspect saw (``state_key``), the row already says it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from berth.runtime.base import ContainerState, RunState

#: Entries beyond which expired ones are dropped on the next ``record``.
_PRUNE_AT = 512


class Mark(NamedTuple):
    """When an inspect began: PLEG's clock, and the wall clock in ns."""

    at: float
    wall_ns: int


#: A state as both ``docker ps`` and inspect can tell it: the status word, and the
#: exit code of an exited container.
StateKey = tuple[str, int | None]


def state_key(status: RunState, exit_code: int | None) -> StateKey:
    return status.value, exit_code if status == RunState.EXITED else None


class LastInspected:
    def __init__(self, horizon: float = 60.0, *, engine_clock_shared: bool = False,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock_ns: Callable[[], int] = time.time_ns) -> None:
        self._horizon = horizon
        self._engine_clock_shared = engine_clock_shared
        self._clock = clock
        self._wall_clock_ns = wall_clock_ns
        self._lock = threading.Lock()
        self._at: dict[str, tuple[Mark, StateKey | None]] = {}
        self.covered = 0

    def now(self) -> Mark:
        """Read just before an inspect whose answer will be recorded."""
        return Mark(self._clock(), self._wall_clock_ns())

    def record(self, uuid: str, inspect_began: Mark, seen: ContainerState | None = None
               ) -> None:
        """The row of ``uuid`` now holds what an inspect begun at ``inspect_began``
        said (``seen``: the state it found)."""
        key = None if seen is None else state_key(seen.status, seen.exit_code)
        with self._lock:
            if len(self._at) >= _PRUNE_AT:
                oldest = self._clock() - self._horizon
                self._at = {k: v for k, v in self._at.items() if v[0].at >= oldest}
            last = self._at.get(uuid)
            if last is None or inspect_began.at > last[0].at:
                self._at[uuid] = (inspect_began, key)

    def covers(self, uuid: str, observed_at: float, engine_at_ns: int | None = None,
               listed: StateKey | None = None) -> bool:
        """Whether syncing an event would learn nothing: it was observed at
        ``observed_at`` (stamped ``engine_at_ns`` by the engine, when it came from
        the stream) before the last recorded inspect of ``uuid`` began, or a
        listing found the container in the state (``listed``) that inspect saw."""
        with self._lock:
            last = self._at.get(uuid)
            if last is None:
                return False
            began, key = last
            if observed_at < began.at or (
                    self._engine_clock_shared and engine_at_ns is not None
                    and engine_at_ns < began.wall_ns) or (
                    listed is not None and listed == key):
                self.covered += 1
                return True
            return False

    def forget(self, uuid: str) -> None:
        """The row changed without an inspect (a stop, a delete...): events count again."""
        with self._lock:
            self._at.pop(uuid, None)
