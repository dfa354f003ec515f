"""HostStateCache: the scheduler's view of the nodes, read from the database at most
every ``max_age`` seconds instead of on every create, and kept current in between by
what this process places (Nova's host manager does the same).

Reading every node, its service and its inventory for each create made a create's
cost grow with the fleet (bench P15: 1,000 nodes). The view may lag behind what
other API processes placed by up to ``max_age``; that is safe, because the row that
places a container is written under the node's lock after the node's usage is read
again (``node_claim``), and the fresh usage read there is learned here::

    create   hosts() ── cached view, reloaded when older than max_age
             select ─► hold(node, spec): the view counts it while it is in flight
             room_check under the node lock ── learn(node as it is now)
             insert committed ─► placed(node, spec): the view counts it at once
             release(hold)

So requests of one process spread over the nodes without waiting for the next read,
and a node another process filled is seen as filled after one refused attempt.
Counting the requests in flight matters as much as counting the committed ones:
without it, the requests a process handles at once all chose the same node from the
same view, and all but one were refused under the node's lock, with a rollback
each, and scheduled again (bench P15: 2.7 insert transactions per container at 50
nodes and 16 concurrent requests). A
refusal is never made on the cached view alone: the scheduler reads the nodes again
before it answers that none fits (a service enabled a moment ago must take the next
create).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from berth.scheduler.base import HostState, RequestSpec


class HostStateCache:
    """Callable: the nodes as last read, with this process's placements since. Thread-safe."""

    def __init__(self, load: Callable[[], Sequence[HostState]], max_age: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._load = load
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._reload = threading.Lock()
        self._hosts: dict[str, HostState] = {}
        #: hostname -> (cpu, memory MiB, vcpus, disk GB, count) of the requests of
        #: this process placing a container there now (``hold``), not yet committed.
        self._holds: dict[str, tuple[float, int, int, int, int]] = {}
        self._read_at: float | None = None
        #: Counts the reads; a placement chosen on an older read is not added (the
        #: newer read may hold it already: counting it twice would turn the node
        #: away wrongly, while missing it is caught by the check under the lock).
        self.generation = 0

    def __call__(self) -> Sequence[HostState]:
        if self._fresh():
            with self._lock:
                return self._view()
        # One thread reads; the others go on with the view they have, if any.
        if self._reload.acquire(blocking=self._read_at is None):
            try:
                if not self._fresh():
                    with self._lock:
                        self.generation += 1
                    hosts = list(self._load())
                    with self._lock:
                        self._hosts = {h.hostname: h for h in hosts}
                        self._read_at = self._clock()
            finally:
                self._reload.release()
        with self._lock:
            return self._view()

    def _view(self) -> list[HostState]:
        """The nodes with what is held on them added (the caller holds ``_lock``)."""
        if not self._holds:
            return list(self._hosts.values())
        out = dict(self._hosts)
        for name, held in self._holds.items():
            h = out.get(name)
            if h is not None:
                out[name] = replace(h, cpu_used=h.cpu_used + held[0],
                                    memory_used_mib=h.memory_used_mib + held[1],
                                    vcpus_used=h.vcpus_used + held[2],
                                    disk_used_gb=h.disk_used_gb + held[3])
        return list(out.values())

    def hold(self, hostname: str, spec: RequestSpec) -> None:
        """A request of this process is placing a container of ``spec`` on
        ``hostname``: the view counts it until ``release``. Every hold must be
        released, whatever the placement's outcome (``placed`` first if it was
        committed, so that the container is never counted by neither)."""
        with self._lock:
            cpu, mem, vcpus, disk, n = self._holds.get(hostname, (0.0, 0, 0, 0, 0))
            self._holds[hostname] = (cpu + spec.cpu, mem + spec.memory_mib,
                                     vcpus + spec.vcpus, disk + spec.disk_gb, n + 1)

    def release(self, hostname: str, spec: RequestSpec) -> None:
        """The placement that ``hold`` counted is over (committed or not)."""
        with self._lock:
            held = self._holds.get(hostname)
            if held is None:
                return
            if held[4] <= 1:
                del self._holds[hostname]
            else:
                self._holds[hostname] = (held[0] - spec.cpu, held[1] - spec.memory_mib,
                                         held[2] - spec.vcpus,
                                         held[3] - spec.disk_gb, held[4] - 1)

    def invalidate(self) -> None:
        """Read the nodes again at the next call (a refusal made on this view may be
        out of date: a service enabled, a node registered since)."""
        with self._lock:
            self._read_at = None

    def _fresh(self) -> bool:
        return (self._max_age > 0 and self._read_at is not None
                and self._clock() - self._read_at < self._max_age)

    def learn(self, host: HostState) -> None:
        """``host`` as read just now (under its lock): its usage replaces the view's."""
        with self._lock:
            if host.hostname in self._hosts:
                self._hosts[host.hostname] = host

    def placed(self, hostname: str, spec: RequestSpec, generation: int) -> None:
        """A container of ``spec`` was placed on ``hostname`` by this process, chosen
        on the read ``generation``."""
        with self._lock:
            if generation != self.generation:
                return
            h = self._hosts.get(hostname)
            if h is not None:
                self._hosts[hostname] = replace(
                    h, cpu_used=h.cpu_used + spec.cpu,
                    memory_used_mib=h.memory_used_mib + spec.memory_mib,
                    vcpus_used=h.vcpus_used + spec.vcpus,
                    disk_used_gb=h.disk_used_gb + spec.disk_gb)
