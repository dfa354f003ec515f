"""The console's change watcher: one per API process, shared by all its clients.

API processes share nothing but the database (``[api]workers`` > 1, several berth-api
machines), so a process learns of a change made by another process, or by an agent,
only from the rows. Once a second, while at least one console is connected, the
watcher reads the *fingerprint* of every container and capsule row (uuid, type,
project, status, task_state, updated_at: :func:`berth.db.containers.fingerprints`),
compares it with the previous read and hands the differences to every subscriber:
one query per process per second, however many consoles are open, as kubelet's
PLEG relists once for all pods.

Timeline of one subscriber::

    subscribe() ──► queue gets Batch(...) each second something changed ──► unsubscribe()
                    (a full queue: the subscriber is marked ``overflowed`` and
                     the stream sends it a fresh snapshot instead of the lost batches)

The watcher does not render views: each subscriber filters a batch by its own project
scope and renders it with its own policy (berth.dashboard.stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from berth.db import capsules, containers
from berth.db.engine import Database

LOG = logging.getLogger(__name__)

KINDS = {containers.CONTAINER: "container", capsules.CAPSULE: "capsule"}
#: Batches a subscriber may hold before it is sent a snapshot instead.
QUEUE_SIZE = 64


@dataclass(frozen=True, slots=True)
class Change:
    """A row that appeared, changed (``deleted`` False) or went away."""

    kind: str            # "container" | "capsule"
    uuid: str
    project_id: str | None
    deleted: bool = False


@dataclass(frozen=True, slots=True)
class Batch:
    """What changed between two reads."""

    changes: tuple[Change, ...]


@dataclass(eq=False, slots=True)
class Subscriber:
    queue: asyncio.Queue[Batch] = field(default_factory=lambda: asyncio.Queue(QUEUE_SIZE))
    #: Batches were dropped: the stream must send a snapshot before the next batch.
    overflowed: bool = False


Fingerprint = tuple[Any, ...]


def diff(before: dict[str, Fingerprint], after: dict[str, Fingerprint]
         ) -> tuple[Change, ...]:
    """The changes from one read to the next (fingerprints by uuid; a fingerprint's
    first two fields are its container_type and project_id)."""
    out = [Change(KINDS[fp[0]], uuid, fp[1]) for uuid, fp in after.items()
           if before.get(uuid) != fp]
    out += [Change(KINDS[fp[0]], uuid, fp[1], deleted=True) for uuid, fp in before.items()
            if uuid not in after]
    return tuple(out)


class ChangeWatcher:
    """Reads the rows' fingerprints every ``interval`` seconds while anybody listens.

    ``subscribe``/``unsubscribe`` are called on the event loop; the read runs on a
    worker thread (a database may be across the network). The loop task starts with
    the first subscriber and ends a tick after the last one leaves."""

    def __init__(self, db: Database, interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        self.interval = interval
        self.clock = clock
        self._subscribers: set[Subscriber] = set()
        self._task: asyncio.Task[None] | None = None
        self._last: dict[str, Fingerprint] | None = None
        self._failing = False
        self._baseline = asyncio.Event()
        #: Reads done since the process started (for tests and /metrics readers).
        self.reads = 0

    def subscribe(self) -> Subscriber:
        sub = Subscriber()
        self._subscribers.add(sub)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="dashboard-change-watcher")
        return sub

    async def baseline(self) -> None:
        """Return once a read is the baseline of the next diff: a snapshot taken after
        this misses no change (one made between the two shows in both)."""
        await self._baseline.wait()

    def unsubscribe(self, sub: Subscriber) -> None:
        self._subscribers.discard(sub)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def read(self) -> dict[str, Fingerprint]:
        """One read of every container's and capsule's fingerprint (a worker thread)."""
        rows = containers.fingerprints(self.db, tuple(KINDS))
        self.reads += 1
        return {r[0]: tuple(r[1:]) for r in rows}

    async def poll_once(self) -> Batch | None:
        """Read, diff against the last read and publish; the batch, if anything changed.
        The first read only sets the baseline (a subscriber starts from a snapshot)."""
        current = await anyio.to_thread.run_sync(self.read)
        before, self._last = self._last, current
        self._baseline.set()
        if before is None:
            return None
        changes = diff(before, current)
        if not changes:
            return None
        batch = Batch(changes)
        for sub in list(self._subscribers):
            try:
                sub.queue.put_nowait(batch)
            except asyncio.QueueFull:
                sub.overflowed = True
        return batch

    async def _run(self) -> None:
        while self._subscribers:
            began = self.clock()
            try:
                await self.poll_once()
                if self._failing:
                    LOG.info("console change watcher reads the database again")
                    self._failing = False
            except Exception:  # the loop's boundary: log once, keep trying
                if not self._failing:
                    LOG.exception("console change watcher cannot read the database; "
                                  "consoles show no changes until it can")
                    self._failing = True
            await asyncio.sleep(max(0.0, self.interval - (self.clock() - began)))
        # Nobody listens: forget the baseline, whose rows may be long gone when the
        # next console connects (it starts from a snapshot anyway).
        self._last = None
        self._baseline.clear()
