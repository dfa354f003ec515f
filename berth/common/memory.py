"""Process-wide memory settings of berth's long-running processes.

glibc gives each thread that allocates under contention an arena of its own (up to
8 per core), and an arena keeps the memory it once held. An agent's threads are
mostly waiting on Docker, the database or RabbitMQ, so more arenas buy nothing but
resident memory: with two, berth-compute with 100 running containers settled ~2 MiB
lower (bench P6a, 80.6 -> 78.7 MiB). Python's small objects do not use malloc at all
(pymalloc), so the lock contention two arenas could add is on large buffers only.

``MALLOC_ARENA_MAX`` in the environment wins: set it to choose another number.

Python's cyclic garbage collector walks every object it tracks at each full
collection, and a started process holds a few hundred thousand that live as long as
it does (modules, configuration, SQLAlchemy's tables and compiled statements, the
agent's threads). :func:`freeze_started` moves them out of the collector's sight once
the process has started, so a full collection walks only what came after.

glibc keeps what a burst of work freed inside its heaps: only the top of the main heap
goes back to the system by itself. :class:`FreedMemory` asks it to give back every
whole free page (``malloc_trim``) when enough is free to be worth it; an agent runs it
as a periodic task (``return_freed_memory``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger(__name__)

#: glibc's mallopt parameter number for the arena limit (malloc.h: M_ARENA_MAX).
_M_ARENA_MAX = -8


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (malloc.h, glibc 2.33 and newer): sizes in bytes."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


_LIBC = _libc()
_MALLINFO2 = getattr(_LIBC, "mallinfo2", None)   # glibc 2.33 and newer
if _MALLINFO2 is not None:
    _MALLINFO2.restype = _MallInfo2
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas; call before the process starts its threads. True
    when set; False with MALLOC_ARENA_MAX in the environment or without glibc."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = _LIBC.mallopt   # type: ignore[union-attr]
    except AttributeError:
        LOG.debug("no glibc mallopt here; malloc arenas left as they are")
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))


def freeze_started() -> int:
    """Collect what start-up left as garbage, then freeze every object left (the
    collector never walks them again; ``gc.freeze``), then give glibc's free pages back
    (``PROCESS_HEAPS``). Call once the process has built what it keeps until it stops,
    before it serves. Returns the objects frozen.

    A fleet run's API workers spent 8 % of their CPU in the collector and its agent
    hosts 4 %, half or more in full collections walking start-up's objects (bench P15,
    docs/benchmarks.md runs AA). Building the API's request schemas (fastjsonschema
    writes and compiles a module for each) leaves 16 MiB free inside the heap, below
    objects that stay: ``berth serve`` started at 117.6 MiB resident, 101.6 once they
    were given back (bench P6)."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    LOG.debug("%d objects of the start-up frozen out of the garbage collector", frozen)
    PROCESS_HEAPS.return_freed()
    return frozen


#: Free bytes inside glibc's heaps below which :class:`FreedMemory` does nothing: an
#: idle process's heaps hold about that much between two small allocations anyway.
FREED_WORTH_RETURNING = 1 << 20


def freed_in_heaps() -> int | None:
    """Bytes glibc holds free inside its heaps (``mallinfo2``'s ``fordblks``); None
    without glibc 2.33 or newer."""
    if _MALLINFO2 is None:
        return None
    return int(_MALLINFO2().fordblks)


class FreedMemory:
    """Gives the system back the whole free pages inside glibc's heaps
    (``malloc_trim(0)``) when the process has grown by ``at_least`` bytes of resident
    memory since the last time and that much is free in the heaps, looking at most
    once every ``spacing`` seconds. After a burst of 100 creates, an agent's resident
    memory settled about 0.5 MiB lower with it (bench P6a); an idle process pays a
    read of ``/proc/self/statm`` and one ``mallinfo2`` call. (The heaps' free bytes
    alone cannot tell: pages given back stay counted as free chunks, and a burst that
    reuses them leaves the count where it was.) Thread-safe. The heaps are the
    process's: :data:`PROCESS_HEAPS` is the one its agents share (bench P15's hosts run
    hundreds of agents in one process)."""

    def __init__(self, at_least: int = FREED_WORTH_RETURNING, spacing: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.at_least = at_least
        self.spacing = spacing
        self._clock = clock
        self._lock = threading.Lock()
        self._looked_at: float | None = None
        self._resident_after_last = 0

    def return_freed(self) -> bool:
        """True when glibc gave pages back."""
        with self._lock:
            now = self._clock()
            if self._looked_at is not None and now - self._looked_at < self.spacing:
                return False
            self._looked_at = now
            resident = resident_bytes()
            if resident is not None and resident - self._resident_after_last < self.at_least:
                return False
            free = freed_in_heaps()
            if free is None or free < self.at_least:
                return False
            released = bool(_LIBC.malloc_trim(0))   # type: ignore[union-attr]
            self._resident_after_last = resident_bytes() or 0
        LOG.debug("%d bytes were free in malloc's heaps; whole pages %sreturned", free,
                  "" if released else "none ")
        return released


def resident_bytes() -> int | None:
    """The process's resident memory (``/proc/self/statm``); None where there is none."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


#: The process's heaps' trimmer.
PROCESS_HEAPS = FreedMemory()
