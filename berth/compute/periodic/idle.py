"""When an agent's periodic tasks may skip their database round trip: an idle node
costs the shared database a heartbeat and the state sync's one read of its rows,
and the other tasks run only on change (bench P15's idle figure).

* ``expire_tasks`` reads the rows past their deadline only when one may be: the
  state sync's last read of this host's rows saw a deadline that has now passed, or
  that read is older than ``max_age`` (the sync is off, failing, or rarer than the
  agent's other tasks: a deadline set since may have passed unseen), or there was
  none. A deadline set after a read is seen by the next one, within the sync's
  spacing: a lost cast (deadline ``task_state_timeout``, 600 s) is taken up as soon
  as before.
* ``delete_unused_containers`` runs when the last sync read an unused auto_remove
  row, or a change was synced from the engine since its last run (an auto_remove
  container that exits is removed by Docker: its row becomes Deleted there).
* ``audit_allocations`` runs at start, after this agent saw Placement fail (an undo
  that could not reach it is what the audit repairs), and every ``full_every``
  seconds besides (failures of other processes, the API's among them).

Each rule falls back to running when it cannot tell.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from typing import Any

from berth.compute.periodic.sync_state import SyncReport
from berth.placement.base import PlacementError


def expiry_due(sync: SyncReport | None, now: dt.datetime, max_age: float) -> bool:
    """Whether ``expire_tasks`` must read (see the module docstring). ``sync``: the
    last state sync's report; ``now``: naive UTC, as the database stores times."""
    if sync is None or sync.read_at is None:
        return True
    if sync.earliest_deadline is not None and sync.earliest_deadline <= now:
        return True
    return (now - sync.read_at).total_seconds() >= max_age


def read_max_age(sync_spacing: float, periodic_interval_max: float,
                 full_run_intervals: int) -> float:
    """``expiry_due``'s ``max_age``: half a spacing more than the sync's (a sync on
    time is fresh enough), at most ``full_run_intervals`` periodic intervals (a sync
    much rarer than the agent's other tasks does not delay them); a sync that is off
    (spacing <= 0): 0, every run reads."""
    if sync_spacing <= 0:
        return 0.0
    return min(1.5 * sync_spacing, full_run_intervals * max(periodic_interval_max, 1))


class CleanupGate:
    """``delete_unused_containers`` is due (see the module docstring)."""

    def __init__(self) -> None:
        self._due = threading.Event()
        self._due.set()                      # once at start

    def changed(self) -> None:
        """A change was synced from the engine."""
        self._due.set()

    def synced(self, report: SyncReport) -> None:
        if report.unused:
            self._due.set()

    def take(self) -> bool:
        """Whether to run now (and then not again until something says so)."""
        if not self._due.is_set():
            return False
        self._due.clear()
        return True


class AuditGate:
    """``audit_allocations`` is due (see the module docstring); :meth:`watch` wraps
    the agent's Placement so that a failure there makes it so."""

    def __init__(self, full_every: float, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self._full_every = full_every
        self._clock = clock
        self._last: float | None = None
        self._failed = threading.Event()

    def failed(self) -> None:
        self._failed.set()

    def take(self) -> bool:
        now = self._clock()
        if not self._failed.is_set() and self._last is not None \
                and now - self._last < self._full_every:
            return False
        self._failed.clear()
        self._last = now
        return True

    def watch(self, placement: Any) -> Any:
        return _FailureWatch(placement, self)


class _FailureWatch:
    """``placement`` whose every method tells ``gate`` when it raises PlacementError."""

    def __init__(self, placement: Any, gate: AuditGate) -> None:
        self._placement = placement
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._placement, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attr(*args, **kwargs)
            except PlacementError:
                self._gate.failed()
                raise
        return call
