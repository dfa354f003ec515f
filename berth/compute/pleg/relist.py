"""Relister: list this host's containers, compare with the previous listing, emit the
differences.

One ``docker ps --all`` per relist (never an inspect per container): a record holds
only what the listing tells, the state word and the exit code. What a difference
means::

    before            now                         emitted
    (absent)          running/paused/restarting   STARTED
    (absent)          anything else               CHANGED
    running-ish       exited/dead/created/removing DIED
    exited/created    running                     STARTED
    running           paused                      PAUSED
    paused            running                     UNPAUSED
    other change      (e.g. a new exit code)      CHANGED
    running-ish       (absent)                    DIED, REMOVED
    stopped           (absent)                    REMOVED

The first relist only records a baseline: the start-up ``sync_container_state``
already compares every row with the engine.

Keeping the old record (as kubelet's ``podsToReinspect``): when an event of a
container cannot be handed on (the queue is full) the snapshot keeps that
container's *previous* record, so the next relist finds the same difference and
emits it again. A sync that failed later on (inspect or database error) calls
:meth:`Relister.reinspect`, and the next relist emits CHANGED for that container
even though the listing shows no difference. A listing that fails keeps the whole
snapshot and does not count as a good relist (see ``EventGenerator.healthy``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from berth.compute.last_inspected import state_key
from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.metrics import catalog
from berth.runtime.base import (
    EventKind,
    RunState,
    Runtime,
    RuntimeContainer,
    RuntimeDriverError,
)

LOG = logging.getLogger(__name__)

#: States in which the container's process exists.
_ALIVE = frozenset({RunState.RUNNING, RunState.PAUSED, RunState.RESTARTING})


@dataclass(frozen=True, slots=True)
class ContainerRecord:
    """What one listing says about one container."""

    container_id: str
    uuid: str
    state: RunState
    exit_code: int | None = None

    @classmethod
    def of(cls, seen: RuntimeContainer) -> ContainerRecord | None:
        if not seen.uuid:
            return None
        state = seen.state.status if seen.state is not None else RunState.UNKNOWN
        code = seen.state.exit_code if seen.state is not None else None
        return cls(seen.id, seen.uuid, state, code)


def diff(old: ContainerRecord | None, new: ContainerRecord | None) -> list[EventKind]:
    """The events that take a container from ``old`` to ``new`` (see the module table)."""
    if old is None and new is None:
        return []
    if old is None:
        assert new is not None
        return [EventKind.STARTED if new.state in _ALIVE else EventKind.CHANGED]
    if new is None:
        if old.state in _ALIVE:
            return [EventKind.DIED, EventKind.REMOVED]
        return [EventKind.REMOVED]
    if old == new:
        return []
    was_alive, is_alive = old.state in _ALIVE, new.state in _ALIVE
    if was_alive and not is_alive:
        return [EventKind.DIED]
    if not was_alive and is_alive:
        return [EventKind.STARTED]
    if (old.state, new.state) == (RunState.RUNNING, RunState.PAUSED):
        return [EventKind.PAUSED]
    if (old.state, new.state) == (RunState.PAUSED, RunState.RUNNING):
        return [EventKind.UNPAUSED]
    return [EventKind.CHANGED]


class Relister:
    """Lists ``host``'s containers and hands each difference to ``emit``.

    ``relist`` is called from one thread at a time (the generator's relist loop);
    ``reinspect`` from any thread.
    """

    def __init__(self, runtime: Runtime, host: str, emit: Callable[[ContainerEvent], bool],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._runtime = runtime
        self._host = host
        self._emit = emit
        self._clock = clock
        self._records: dict[str, ContainerRecord] | None = None
        self._lock = threading.Lock()
        self._reinspect: dict[str, str] = {}      # container id -> uuid
        self._failing = False
        self.last_good: float | None = None
        self.relists = 0
        self.failures = 0

    @property
    def snapshot(self) -> dict[str, ContainerRecord]:
        """The records the next relist compares with (a copy), by container id."""
        return dict(self._records or {})

    def reinspect(self, container_id: str, uuid: str) -> None:
        """Have the next relist emit an event for this container whatever it lists."""
        with self._lock:
            self._reinspect[container_id] = uuid

    def relist(self) -> list[ContainerEvent]:
        """List, diff, emit; return what was handed on. A failed listing emits nothing."""
        with catalog.PLEG_RELIST_SECONDS.time():
            return self._list_and_diff()

    def _list_and_diff(self) -> list[ContainerEvent]:
        try:
            listed = self._runtime.list(host=self._host)
        except RuntimeDriverError as err:
            self.failures += 1
            catalog.PLEG_RELIST_FAILURES.inc()
            if not self._failing:
                LOG.warning("relist failed (%s); keeping the previous snapshot (logged "
                            "once until it recovers)", err.msg)
            self._failing = True
            return []
        if self._failing:
            LOG.info("relist recovered")
        self._failing = False
        current = {r.container_id: r for r in map(ContainerRecord.of, listed) if r is not None}
        self.relists += 1
        self.last_good = self._clock()
        if self._records is None:
            self._records = current
            LOG.debug("relist baseline: %d containers on %s", len(current), self._host)
            return []
        with self._lock:
            reinspect, self._reinspect = self._reinspect, {}
        emitted: list[ContainerEvent] = []
        kept: dict[str, ContainerRecord] = {}
        for cid in self._records.keys() | current.keys() | reinspect.keys():
            old, new = self._records.get(cid), current.get(cid)
            kinds = diff(old, new)
            listed_state = None if new is None else state_key(new.state, new.exit_code)
            if not kinds and cid in reinspect:
                kinds = [EventKind.CHANGED if new is not None else EventKind.REMOVED]
                listed_state = None     # a failed sync: look again whatever the state
            record = new or old
            uuid = record.uuid if record is not None else reinspect[cid]
            handed_on = True
            for kind in kinds:
                event = ContainerEvent(uuid=uuid, container_id=cid, kind=kind,
                                       source=EventSource.RELIST, at=self._clock(),
                                       listed=listed_state)
                if self._emit(event):
                    emitted.append(event)
                else:
                    handed_on = False
            if handed_on:
                if new is not None:
                    kept[cid] = new
            else:
                # Keep what we knew, so the next relist sees this difference again.
                if old is not None:
                    kept[cid] = old
                if cid in reinspect:
                    self.reinspect(cid, uuid)
        self._records = kept
        if emitted:
            LOG.info("relist found %d change(s): %s", len(emitted),
                     ", ".join(f"{e.uuid} {e.kind}" for e in emitted[:10]))
        return emitted
