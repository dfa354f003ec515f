"""QueueDepths: a gauge whose values are read from the queues' owners when /metrics is
scraped, so that queueing and finishing a job cost nothing extra.

An owner registers a callable per queue (``track("actions", workers.pending)``); a
bound method is held weakly, so a stopped agent that is dropped (as in tests, which
make many) leaves the gauge. The depths of one queue name are summed over its live
owners: one per process in production.
"""

from __future__ import annotations

import inspect
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

LOG = logging.getLogger(__name__)

Depth = Callable[[], int]


class QueueDepths:
    """A prometheus-client collector: one gauge, labelled ``queue``."""

    def __init__(self, name: str, documentation: str, queues: Iterable[str]) -> None:
        self._name = name
        self._documentation = documentation
        self._queues = tuple(queues)
        self._lock = threading.Lock()
        self._sources: dict[str, list[Callable[[], Depth | None]]] = {
            q: [] for q in self._queues}

    def track(self, queue: str, depth: Depth) -> None:
        """Report ``depth()`` under ``queue`` from now on (while its owner lives)."""
        if queue not in self._sources:
            raise ValueError(f"unknown queue {queue!r}; declare it in berth.metrics.catalog")
        ref: Callable[[], Depth | None]
        if inspect.ismethod(depth):
            ref = weakref.WeakMethod(depth)
        else:
            ref = lambda: depth   # a plain function: held as long as the gauge
        with self._lock:
            self._sources[queue].append(ref)

    def depth(self, queue: str) -> int:
        """The queue's depth now, summed over its live owners."""
        with self._lock:
            refs = list(self._sources[queue])
        total = 0
        dead = []
        for ref in refs:
            fn = ref()
            if fn is None:
                dead.append(ref)
                continue
            try:
                total += int(fn())
            except Exception:  # a scrape must not fail for one owner
                LOG.debug("could not read the depth of queue %s", queue, exc_info=True)
        if dead:
            with self._lock:
                self._sources[queue] = [r for r in self._sources[queue] if r not in dead]
        return total

    def _family(self) -> GaugeMetricFamily:
        return GaugeMetricFamily(self._name, self._documentation, labels=["queue"])

    def describe(self) -> Iterator[Metric]:
        yield self._family()

    def collect(self) -> Iterator[Metric]:
        family = self._family()
        for queue in self._queues:
            family.add_metric([queue], self.depth(queue))
        yield family
