"""Readiness: the checks behind ``/readyz`` (is the database, the RPC transport, the
Docker engine reachable?), and the JSON body that says which one failed.

A check is a callable that returns when its dependency answers and raises when it
does not. Probes must stay cheap and must not pile up behind a dependency that
hangs, so::

    report() ──► a report younger than max_age (1 s)? ──► that report
        │
        └─► each check on the "readyz" pool, all at once; wait at most timeout (2 s)
              a check still running from an earlier probe is not started again:
              it reads "no answer for N s"

``/healthz`` needs none of this: a process that answers HTTP is alive.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from berth.common.exceptions import BerthError
from berth.common.threads import ElasticThreadPool

LOG = logging.getLogger(__name__)

Check = Callable[[], object]

OK = "ok"
ALIVE_BODY = {"status": "alive"}


@dataclass(frozen=True, slots=True)
class ReadinessReport:
    """Each check's result: ``"ok"`` or what went wrong."""

    checks: dict[str, str]

    @property
    def failed(self) -> list[str]:
        return [name for name, result in self.checks.items() if result != OK]

    @property
    def ready(self) -> bool:
        return not self.failed

    @property
    def status_code(self) -> int:
        return 200 if self.ready else 503

    def body(self) -> dict[str, object]:
        return {"status": "ready" if self.ready else "not ready",
                "checks": dict(self.checks), "failed": self.failed}


class Readiness:
    """Named checks, run together with a time bound, the report cached ``max_age``
    seconds. Thread-safe."""

    def __init__(self, checks: dict[str, Check] | None = None, *, timeout: float = 2.0,
                 max_age: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._checks: dict[str, Check] = dict(checks or {})
        self._timeout = timeout
        self._max_age = max_age
        self._clock = clock
        self._lock = threading.Lock()
        self._pool = ElasticThreadPool(4, "readyz", idle_timeout=10.0)
        self._running: dict[str, tuple[float, cf.Future[object]]] = {}
        self._last: tuple[float, ReadinessReport] | None = None

    def add(self, name: str, check: Check) -> None:
        """Check ``name`` from the next report on (replacing one of that name)."""
        with self._lock:
            self._checks[name] = check
            self._last = None

    @property
    def names(self) -> list[str]:
        with self._lock:
            return list(self._checks)

    def report(self) -> ReadinessReport:
        with self._lock:
            now = self._clock()
            if self._last is not None and now - self._last[0] < self._max_age:
                return self._last[1]
            started = {name: self._start(name, check, now)
                       for name, check in self._checks.items()}
        cf.wait([f for _, f in started.values()], timeout=self._timeout)
        report = ReadinessReport({name: self._result(name, since, future)
                                  for name, (since, future) in started.items()})
        with self._lock:
            self._last = (self._clock(), report)
        if not report.ready:
            LOG.debug("not ready: %s", report.checks)
        return report

    def _start(self, name: str, check: Check, now: float) -> tuple[float, cf.Future[object]]:
        """The check's run in flight from an earlier probe, or a new one (lock held)."""
        running = self._running.get(name)
        if running is not None and not running[1].done():
            return running
        future = self._pool.submit(check)
        self._running[name] = (now, future)
        return now, future

    def _result(self, name: str, since: float, future: cf.Future[object]) -> str:
        if not future.done():
            return f"no answer for {self._clock() - since:.1f} s"
        err = future.exception()
        if err is None:
            return OK
        if isinstance(err, BerthError):
            return err.msg
        return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
