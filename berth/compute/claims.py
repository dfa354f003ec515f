"""Resource claims on one node, under the node-wide ``compute_resources`` lock.

berth derives a node's usage from its container rows instead of keeping a separate
ledger: every row placed on the node (``host``) holds its cpu and memory until it is
destroyed or reaches Error/Deleted. So there is nothing to leak: a failed create
that sets Error has released its claim by that very write, and a crash between two
steps leaves a row that start-up recovery resolves the same way. The lock makes
"check that it fits, then record it" atomic against the other claims of the node.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Connection

from berth.common import exceptions as exc
from berth.common.units import memory_mib
from berth.db import containers, nodes
from berth.db.engine import Database

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Capacity:
    """What the node offers to containers (after reservations and allocation ratios)."""

    cpus: float
    memory_mib: int

    @classmethod
    def of(cls, cpus: int, mem_total_mib: int, reserved_cpus: int, reserved_mem_mib: int,
           cpu_ratio: float, ram_ratio: float) -> Capacity:
        return cls(cpus=max(0, cpus - reserved_cpus) * cpu_ratio,
                   memory_mib=int(max(0, mem_total_mib - reserved_mem_mib) * ram_ratio))


@dataclass(frozen=True, slots=True)
class Usage:
    cpus: float
    memory_mib: int


def shortfall(capacity: Capacity, used: Usage, request: Usage) -> str | None:
    """Why ``request`` does not fit next to ``used``; None when it fits."""
    reasons = []
    free_cpu = capacity.cpus - used.cpus
    if request.cpus > free_cpu + 1e-9:
        reasons.append(f"cpu: requested {request.cpus:g}, free {max(free_cpu, 0):g} "
                       f"of {capacity.cpus:g}")
    free_mem = capacity.memory_mib - used.memory_mib
    if request.memory_mib > free_mem:
        reasons.append(f"memory: requested {request.memory_mib} MiB, free "
                       f"{max(free_mem, 0)} MiB of {capacity.memory_mib} MiB")
    return "; ".join(reasons) or None


def request_of(cpu: float | None, memory: str | int | None) -> Usage:
    return Usage(cpus=float(cpu or 0.0), memory_mib=memory_mib(memory))


class ResourceTracker:
    """The node's capacity and its ``compute_resources`` lock.

    ``publish_delay``: a claim publishes the node's usage to its compute_node row (for
    readers of the database; the API, the scheduler and the claims count the rows
    themselves) at most that many seconds later, one publish for every claim made
    meanwhile: 50 concurrent creates made 50 census queries and 50 writes of the
    row. 0: at once, in the claim."""

    def __init__(self, db: Database, host: str, publish_delay: float = 0.0) -> None:
        self._db = db
        self._host = host
        self._lock = threading.Lock()
        self._capacity: Capacity | None = None
        self._publish_delay = publish_delay
        self._publish_lock = threading.Lock()
        self._publish_wanted = threading.Condition(self._publish_lock)
        self._publish_due = False
        self._publisher: threading.Thread | None = None
        self._stopping = threading.Event()
        self._publishing = threading.Lock()   # one census-and-write at a time

    @property
    def capacity(self) -> Capacity | None:
        return self._capacity

    def set_capacity(self, capacity: Capacity) -> None:
        with self._lock:
            self._capacity = capacity

    def claim(self, uuid: str, cpu: float | None, memory: str | None, *,
              placed: bool = False) -> None:
        """Check that the container fits next to everything else on the node, then
        record it as placed here. ResourcesUnavailable when it does not fit.
        ``placed``: the row already names this host (the scheduler's pick), which is
        the record; nothing to write."""
        self._claim(uuid, cpu, memory, {} if placed else {"host": self._host})

    def claim_update(self, uuid: str, cpu: float | None, memory: str | None, *,
                     guard: Callable[[Connection], object] | None = None) -> None:
        """Resize a placed container's claim: check that its new ``cpu`` / ``memory``
        fit next to everything else on the node, then write them to its row (which
        is the claim). ResourcesUnavailable, and the row unchanged, when they do not.
        ``guard(conn)`` runs in the write's transaction and may refuse it (the
        project's quota: ``berth.quota``)."""
        self._claim(uuid, cpu, memory, {"cpu": cpu, "memory": memory}, guard)

    def _claim(self, uuid: str, cpu: float | None, memory: str | None,
               record: dict[str, object],
               guard: Callable[[Connection], object] | None = None) -> None:
        """Under the node lock: the fit check, then ``record`` written to the row."""
        with self._lock:
            if self._capacity is None:
                raise exc.ResourcesUnavailable(
                    reason="the node has not reported its resources yet")
            used_cpu, used_mem, _ = containers.usage_on_host(self._db, self._host,
                                                             exclude=[uuid])
            why = shortfall(self._capacity, Usage(used_cpu, used_mem), request_of(cpu, memory))
            if why:
                raise exc.ResourcesUnavailable(reason=why)
            if record:
                containers.update_(self._db, uuid, record, guard=guard)
        self.publish_usage_soon()

    def publish_usage_soon(self) -> None:
        """``publish_usage`` within ``publish_delay`` seconds, shared by every call
        made until it runs (at once when the delay is 0)."""
        if self._publish_delay <= 0:
            self.publish_usage()
            return
        with self._publish_lock:
            if self._publish_due or self._stopping.is_set():
                return
            self._publish_due = True
            if self._publisher is None:
                # One thread for the tracker's life: a timer thread per burst made
                # the claim wait for that thread's start (~1 ms, more under load).
                self._publisher = threading.Thread(target=self._publish_when_due,
                                                   name="publish-usage", daemon=True)
                self._publisher.start()
            else:
                self._publish_wanted.notify()

    def stop(self) -> None:
        """End the publishing thread (a publish due is dropped: the next start's
        inventory publishes the usage)."""
        with self._publish_lock:
            self._stopping.set()
            self._publish_wanted.notify()
        if self._publisher is not None:
            self._publisher.join(10)

    def _publish_when_due(self) -> None:
        while True:
            with self._publish_lock:
                while not self._publish_due and not self._stopping.is_set():
                    self._publish_wanted.wait()
            if self._stopping.wait(self._publish_delay):
                return
            with self._publish_lock:
                self._publish_due = False    # a claim from now on asks for the next one
            try:
                self.publish_usage()
            except Exception:
                LOG.exception("could not publish the node's usage; the next claim or the "
                              "periodic inventory publishes it")

    def publish_usage(self) -> None:
        """Write the node's current usage to its compute_node row. Serialised, so that
        an older census never overwrites a newer one."""
        with self._publishing:
            nodes.publish_usage(self._db, self._host)
