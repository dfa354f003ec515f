"""The CPU of the process that calls it, by kind of thread: a Python thread's kind is
its name without the number its pool gave it (``rpc_12`` and ``rpc_3`` are ``rpc``;
``state-sync_4`` is ``state-sync``), read from the thread's CPU clock. A thread that
ends takes its figure with it, so a ``Census`` has each thread report what it spent
as it ends (see its docstring).

The agents' host (``nodes.py``) installs one before it builds its agents and answers
its ``threads`` command with a reading; the run reads it before and after the fill
and divides by the containers made, which tells which of an agent's loops a create's
cost goes to (the RPC server's workers, the flows' workers, the event stream, the
periodic tasks)."""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.fleet.cpu import cpu_of

_NUMBERED = re.compile(r"[_-]\d+$")
_UNNAMED = re.compile(r"^Thread-\d+ ")     # threading's default name: ``Thread-7 (_runner)``


def kind_of(name: str) -> str:
    """``rpc_12`` → ``rpc``, ``ThreadPoolExecutor-0_3`` → ``ThreadPoolExecutor``,
    ``Thread-7 (_runner)`` → ``Thread (_runner)``: a thread's name without the numbers
    its pool or ``threading`` added."""
    name = _UNNAMED.sub("Thread ", name)
    while True:
        shorter = _NUMBERED.sub("", name)
        if shorter == name:
            return name
        name = shorter


def _thread_ms(thread: threading.Thread) -> float | None:
    """CPU milliseconds ``thread`` spent so far, to the nanosecond, from its POSIX CPU
    clock (``/proc``'s figures are whole ticks, 10 ms, which a short-lived thread's
    work is not); None once it is gone. The clock is named by the kernel's thread id,
    as glibc's ``pthread_getcpuclockid`` names it: that function reads the thread's
    descriptor, freed memory once a thread that ended since ``threading.enumerate()``
    has had its stack unmapped; the kernel refuses a gone thread's clock instead."""
    tid = thread.native_id
    if tid is None:
        return None
    try:
        return time.clock_gettime(((~tid) << 3) | 6) * 1000   # per thread, scheduler time
    except OSError:
        return None


class Census:
    """Every thread of this process seen so far, with the CPU it spent: ``reading()``
    looks at the live threads, and once ``install()``ed, each thread that ends reports
    what it spent as it ends (a wrapper of ``threading.Thread._bootstrap_inner``, the
    bench's own), so that a pool's thread that does a create's work and then idles out
    is counted under its kind. Without ``install()``, the CPU of threads that ended is
    the kind ``ended``; threads without a Python name are read from ``/proc`` (whole
    ticks) as ``unnamed``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: dict[int, list[Any]] = {}   # Thread object's serial -> [kind, ms]
        self._serials = itertools.count()

    def _serial(self, thread: threading.Thread) -> int:
        serial = getattr(thread, "_census_serial", None)
        if serial is None:
            serial = next(self._serials)
            thread._census_serial = serial      # type: ignore[attr-defined]
        return serial

    def install(self) -> None:
        """Count each thread started from now on when it ends."""
        started = threading.Thread._bootstrap_inner     # type: ignore[attr-defined]

        def run_and_report(thread: threading.Thread) -> None:
            try:
                started(thread)
            finally:
                ms = time.thread_time_ns() / 1e6
                with self._lock:
                    self._seen[self._serial(thread)] = [kind_of(thread.name), ms]

        threading.Thread._bootstrap_inner = run_and_report  # type: ignore[attr-defined]

    def reading(self) -> dict[str, float]:
        """CPU milliseconds so far by kind (every thread seen, live or ended), and
        ``total``, the whole process's."""
        named = set()
        for thread in threading.enumerate():
            named.add(thread.native_id)
            ms = _thread_ms(thread)
            if ms is None:
                continue
            with self._lock:
                seen = self._seen.setdefault(self._serial(thread), [kind_of(thread.name), 0.0])
                seen[1] = max(seen[1], ms)
        out: dict[str, float] = {}
        for task in Path("/proc/self/task").iterdir():
            if int(task.name) not in named:
                out["unnamed"] = out.get("unnamed", 0.0) + cpu_of(f"self/task/{task.name}") * 1000
        with self._lock:
            for kind, ms in self._seen.values():
                out[kind] = out.get(kind, 0.0) + ms
        out["total"] = cpu_of("self") * 1000
        return out


def spent_by_kind(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """CPU milliseconds spent between two ``Census.reading()``s of one process, by
    kind; what the process spent beyond that is ``ended`` (threads that ended unseen)."""
    out = {kind: ms - before.get(kind, 0.0) for kind, ms in after.items() if kind != "total"}
    total = after["total"] - before["total"]
    out["ended"] = max(total - sum(out.values()), 0.0)
    out["total"] = total
    return out


def per_unit(spent: Mapping[str, float], units: int) -> dict[str, float]:
    """``spent`` per unit (a create), largest first; kinds under a thousandth left out."""
    return {k: round(v / max(units, 1), 3)
            for k, v in sorted(spent.items(), key=lambda kv: -kv[1]) if v / max(units, 1) >= 0.001}
