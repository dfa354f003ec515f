"""The CPU the process that installs it spends in Python's cyclic garbage collector:
each collection is timed on the CPU clock of the thread it runs on, from the
``gc.callbacks`` call that starts it to the one that ends it. The agents' host
(``nodes.py``) and each API worker (``api_host.py``) install one; their statement
tallies carry its figure (``statements.COLLECTOR``), so that the run reports the
collector's share of each part's CPU per container (berth freezes start-up's objects
out of it: ``berth.common.memory.freeze_started``)."""

from __future__ import annotations

import gc
import threading
import time
from typing import Any


class CollectorClock:
    """Microseconds of CPU spent in collections so far (``microseconds()``)."""

    def __init__(self) -> None:
        self._began = threading.local()
        self._lock = threading.Lock()
        self._ns = 0

    @classmethod
    def install(cls) -> CollectorClock:
        clock = cls()
        gc.callbacks.append(clock._on_collection)
        return clock

    def _on_collection(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._began.ns = time.thread_time_ns()
            return
        began = getattr(self._began, "ns", None)
        if began is None:       # installed during a collection
            return
        self._began.ns = None
        with self._lock:
            self._ns += time.thread_time_ns() - began

    def microseconds(self) -> int:
        with self._lock:
            return self._ns // 1000
