"""The client: fires creates at ``berth-api`` from ``concurrency`` threads, each an
HTTP client of its own, keeping at most ``window`` containers accepted and not yet
Running, and counts the containers Running in the database every ``poll`` seconds.
The fill curve is read off those counts: the time the count crossed each multiple
of ``step``."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

BODY = {"image": "local/busybox", "command": ["sleep", "3600"], "cpu": 0.1,
        "memory": "64", "image_pull_policy": "ifnotpresent"}
HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"}


@dataclass
class LoadResult:
    total: int
    seconds: float
    accepted: int
    refused: list[str]
    samples: list[tuple[float, int, int]] = field(default_factory=list)  # t, running, error

    def overall_rate(self) -> float:
        """Containers Running per second from the start to the last one Running."""
        if not self.samples:
            return 0.0
        last = max(running for _, running, _ in self.samples)
        at = next(t for t, running, _ in self.samples if running == last)
        return round(last / at, 1) if at > 0 else 0.0

    def crossings(self, step: int) -> list[tuple[int, float]]:
        """(count, time) when the Running count first reached each multiple of step."""
        out = [(0, 0.0)]
        goal = step
        for t, running, _ in self.samples:
            while running >= goal and goal <= self.total:
                out.append((goal, t))
                goal += step
        return out

    def curve(self, step: int) -> list[dict[str, float]]:
        """Per block of ``step`` containers: its start (containers Running before it)
        and the rate at which it filled (containers/s)."""
        points = self.crossings(step)
        return [{"from": a, "to": b, "seconds": round(tb - ta, 3),
                 "per_second": round((b - a) / (tb - ta), 1) if tb > ta else 0.0}
                for (a, ta), (b, tb) in itertools.pairwise(points)]


class _Counter:
    """Counts Running and Error rows; reconnects after the database went away (the
    machine's PostgreSQL is shared and may be restarted under the run)."""

    def __init__(self, pg_url: str, on_connect: Callable[[int], None] | None = None) -> None:
        self._url = pg_url
        self._conn: Any = None
        self._on_connect = on_connect

    def __call__(self) -> tuple[int, int] | None:
        try:
            if self._conn is None:
                self._conn = psycopg.connect(self._url, autocommit=True, connect_timeout=5)
                if self._on_connect is not None:
                    self._on_connect(self._conn.info.backend_pid)
            row = self._conn.execute(
                "SELECT count(*) FILTER (WHERE status = 'Running'), "
                "count(*) FILTER (WHERE status = 'Error') FROM container").fetchone()
            return int(row[0]), int(row[1])
        except psycopg.OperationalError:
            self.close()
            return None

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except psycopg.Error:
                pass
            self._conn = None


def fill(api_url: str, pg_url: str, total: int, *, concurrency: int = 16,
         window: int = 400, poll: float = 0.2, timeout: float = 3600,
         stall: float = 60, on_count: Callable[[int], None] | None = None,
         on_counter_backend: Callable[[int], None] | None = None) -> LoadResult:
    """Fill until ``total`` containers are Running or in Error, or until ``timeout``,
    or until nothing changed for ``stall`` seconds (what is left is then reported by
    the checks). ``on_count(running)`` is called with every count read;
    ``on_counter_backend(pid)`` with the PostgreSQL backend of each connection the
    count makes (its CPU is the client's: ``CpuMeter.count_as_client``)."""
    lock = threading.Lock()
    state = {"sent": 0, "accepted": 0, "running": 0, "errors": 0}
    refused: list[str] = []
    stop = threading.Event()

    def fire() -> None:
        with httpx.Client(base_url=api_url, headers=HEADERS, timeout=120) as http:
            while not stop.is_set():
                with lock:
                    if state["sent"] >= total:
                        return
                    if state["sent"] - state["running"] >= window:
                        ready = False
                    else:
                        state["sent"] += 1
                        ready = True
                if not ready:
                    time.sleep(0.01)
                    continue
                try:
                    resp = http.post("/v1/containers", params={"run": "true"}, json=BODY)
                except httpx.HTTPError as err:
                    with lock:
                        refused.append(f"no answer: {err!r}")
                    continue
                with lock:
                    if resp.status_code == 202:
                        state["accepted"] += 1
                    else:
                        refused.append(f"{resp.status_code}: {resp.text[:200]}")

    result = LoadResult(total=total, seconds=0.0, accepted=0, refused=refused)
    counts = _Counter(pg_url, on_counter_backend)
    try:
        began = time.monotonic()
        changed = 0.0
        threads = [threading.Thread(target=fire, name=f"fire-{i}", daemon=True)
                   for i in range(concurrency)]
        for t in threads:
            t.start()
        try:
            while time.monotonic() - began < timeout:
                got = counts()
                if got is None:
                    time.sleep(1)
                    continue
                running, errors = got
                now = time.monotonic() - began
                with lock:
                    state["running"], state["errors"] = running, errors
                if not result.samples or result.samples[-1][1:] != (running, errors):
                    changed = now
                elif now - changed > stall:
                    break
                result.samples.append((round(now, 3), running, errors))
                if on_count is not None:
                    on_count(running)
                if running + errors >= total or (refused and len(refused) + running
                                                 + errors >= total):
                    break
                time.sleep(poll)
        finally:
            stop.set()
            for t in threads:
                t.join(130)
        result.seconds = time.monotonic() - began
    finally:
        counts.close()
    result.accepted = state["accepted"]
    return result
