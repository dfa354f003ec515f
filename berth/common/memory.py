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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import logging
import os

LOG = logging.getLogger(__name__)

#: glibc's mallopt parameter number for the arena limit (malloc.h: M_ARENA_MAX).
_M_ARENA_MAX = -8


def limit_malloc_arenas(arenas: int = 2) -> bool:
    """Cap glibc's malloc arenas; call before the process starts its threads. True
    when set; False with MALLOC_ARENA_MAX in the environment or without glibc."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        LOG.debug("no glibc mallopt here; malloc arenas left as they are")
        return False
    return bool(mallopt(_M_ARENA_MAX, arenas))


def freeze_started() -> int:
    """Collect what start-up left as garbage, then freeze every object left (the
    collector never walks them again; ``gc.freeze``). Call once the process has built
    what it keeps until it stops, before it serves. Returns the objects frozen.

    A fleet run's API workers spent 8 % of their CPU in the collector and its agent
    hosts 4 %, half or more in full collections walking start-up's objects (bench P15,
    docs/benchmarks.md runs AA)."""
    gc.collect()
    gc.freeze()
    frozen = gc.get_freeze_count()
    LOG.debug("%d objects of the start-up frozen out of the garbage collector", frozen)
    return frozen
