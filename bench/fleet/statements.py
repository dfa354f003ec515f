"""Database statements counted by caller, in the process that installs the tally:
every statement any SQLAlchemy engine of the process runs is counted under the
first frame of berth's own code outside ``berth.db``
(``berth.compute.periodic.heartbeat:update_zun_service``), the caller that decided to
touch the database. The agents' host (``nodes.py``) and the API's workers
(``api_host.py``) each install one; the run reads them before and after a window and
divides the difference by the containers made (or by the nodes and the minutes, when
idle).

The count is taken in the dialects' ``do_execute`` methods, through which every
statement goes, not by an engine event listener: a listener on any engine turns on
SQLAlchemy's event dispatch at each checkout and each execution of every connection,
a cost of the bench's own that berth does not have and the bench measured as berth's
(5 % of the agents' CPU under yappi; within a run's noise without it)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from bench.fleet.collector import CollectorClock

_SKIPPED = ("berth.db", "berth.common.retry")
#: A tally's values: statements (int) or milliseconds (float).
N = TypeVar("N", int, float)


def caller_of(frame: Any) -> str:
    """``module:function`` of the first frame of berth (or the bench) outside the
    database layer, walking out from ``frame``; ``?`` when there is none."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith(("berth.", "bench.")) \
                and not module.startswith(_SKIPPED):
            return f"{module}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


class StatementTally:
    """Statements run in this process by caller (cumulative; see the module), and the
    rows of the SELECTs run on a thread while it counts them (``rows_read``)."""

    def __init__(self, collector: CollectorClock | None = None) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._rows = threading.local()
        self._collector = collector

    @classmethod
    def install(cls) -> StatementTally:
        """Count this process's statements from now on, and the CPU of its garbage
        collector (``COLLECTOR``)."""
        from sqlalchemy.engine.default import DefaultDialect

        tally = cls(CollectorClock.install())
        for name in ("do_execute", "do_executemany", "do_execute_no_params"):
            setattr(DefaultDialect, name, tally._counted(getattr(DefaultDialect, name)))
        return tally

    def _counted(self, run: Callable[..., None]) -> Callable[..., None]:
        def counted(dialect: Any, cursor: Any, statement: str, *args: Any,
                    **kwargs: Any) -> None:
            run(dialect, cursor, statement, *args, **kwargs)
            self._executed(cursor, statement)
        return counted

    def _executed(self, cursor: Any, statement: str) -> None:
        self.count(caller_of(sys._getframe(2)))
        rows = getattr(self._rows, "tally", None)
        if rows is not None and statement.lstrip()[:6].upper() == "SELECT":
            rows["statements"] += 1
            rows["rows"] += max(cursor.rowcount, 0)

    def rows_read(self, fn: Callable[[], object]) -> dict[str, int]:
        """Run ``fn``; the SELECTs it ran on this thread and the rows they returned."""
        self._rows.tally = {"rows": 0, "statements": 0}
        try:
            fn()
            return dict(self._rows.tally)
        finally:
            self._rows.tally = None

    def count(self, key: str) -> None:
        with self._lock:
            self._counts[key] += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            counts = dict(self._counts)
        if self._collector is not None:
            counts[COLLECTOR] = self._collector.microseconds()
        counts[PROCESS_CPU] = time.process_time_ns() // 1000
        return counts

    def dump(self, path: Path) -> None:
        """Write the snapshot to ``path`` (whole: written aside, then renamed)."""
        aside = path.with_name(f".{path.name}.{os.getpid()}")
        aside.write_text(json.dumps(self.snapshot()))
        aside.replace(path)


#: The tally's keys that count the API's casts and calls to agents (``rpc call
#: image_search``), not statements: ``api_host.py`` counts them in its tally.
RPC_PREFIX = "rpc "
#: The tally's key that holds the CPU microseconds of the process's garbage collector
#: (``collector.CollectorClock``), not statements.
COLLECTOR = "gc cpu us"
#: The tally's key that holds the process's whole CPU in microseconds, not statements
#: (which of the API's workers the work went to).
PROCESS_CPU = "process cpu us"


def statements_and_collector(tally: dict[str, int]) -> tuple[dict[str, int], int]:
    """``tally`` as (its statements, the collector's CPU microseconds); the process's
    own CPU (``PROCESS_CPU``) left out."""
    rest = dict(tally)
    rest.pop(PROCESS_CPU, None)
    return rest, rest.pop(COLLECTOR, 0)


def cpu_shares(before: Mapping[int, Mapping[str, int]], after: Mapping[int, Mapping[str, int]]
               ) -> list[float]:
    """Each process's share of the CPU the processes spent between two readings of
    their tallies (by pid; one that started between them counts from 0), largest
    first."""
    spent = [tally.get(PROCESS_CPU, 0) - before.get(pid, {}).get(PROCESS_CPU, 0)
             for pid, tally in after.items()]
    total = sum(spent)
    return sorted((round(x / total, 3) for x in spent), reverse=True) if total > 0 else []


def split_rpc(tally: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """``tally`` as (statements, RPC casts and calls)."""
    return ({k: v for k, v in tally.items() if not k.startswith(RPC_PREFIX)},
            {k[len(RPC_PREFIX):]: v for k, v in tally.items() if k.startswith(RPC_PREFIX)})


def difference(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """The statements of each caller between two snapshots (callers with none left out)."""
    out = {k: v - before.get(k, 0) for k, v in after.items()}
    return {k: v for k, v in out.items() if v > 0}


def merged(tallies: Iterable[Mapping[str, N]]) -> dict[str, N]:
    """Several processes' tallies (statements, or milliseconds) summed key by key."""
    total: dict[str, N] = {}
    for tally in tallies:
        for key, value in tally.items():
            total[key] = total.get(key, 0) + value
    return total


def per_unit(tally: dict[str, int], units: float, top: int = 25) -> dict[str, float]:
    """``tally`` divided by ``units`` (containers, node-minutes), largest first, the
    ``top`` largest callers and the rest summed under ``other``; ``total`` besides."""
    if units <= 0:
        return {}
    ranked = sorted(tally.items(), key=lambda kv: -kv[1])
    out = {k: round(v / units, 3) for k, v in ranked[:top]}
    rest = sum(v for _, v in ranked[top:])
    if rest:
        out["other"] = round(rest / units, 3)
    out["total"] = round(sum(tally.values()) / units, 3)
    return out
