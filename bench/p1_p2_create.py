"""P1: create→Running through the API, sequential. P2: 50 concurrent creates.

Baseline: ``docker run -d`` of the same image and command through the Docker SDK
(``common.run_detached``: the engine calls of ``containers.run(detach=True)``, which
returns after the start, without its pull), in the same run.
P1's berth time runs from the POST until berth wrote the row Running (its
``updated_at`` once the API shows Running; the same machine's clock), P2's until
berth wrote the last of its rows Running (the same, read off the list, polled every
0.5 s, that shows them all Running).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import datetime as dt
import threading
import time
from collections.abc import Iterator
from typing import Any

import docker

from bench.common import (
    COMMAND,
    IMAGE,
    Berth,
    Result,
    docker_client,
    median,
    name,
    ratio,
    run_detached,
    settle,
    wait,
)
from bench.fleet.cpu import cpu_of, pids_of_command


def p1(berth: Berth, runs: int = 30, poll: float = 0.05) -> Result:
    """Paired runs, the order alternating (Docker first, then berth first). Each side
    removes its container completely before the next measured run (berth's delete
    returns before the agent has removed the Docker container: waited for), and each
    measured run starts on a quiet machine (``settle``).

    berth's side is timed to the moment berth wrote the row Running (the row's
    ``updated_at``, read once a poll every ``poll`` s shows Running), not to the poll
    that saw it. Until 2026-12-04 it was timed by a poll every 10 ms, and the poll cost
    more than the 5 % the goal allows before berth did anything: it was late by up to
    one interval (5 ms on average, 2 % of Docker's 0.24 s), and its GETs took CPU
    that Docker's start, on one of the machine's two cores, then lacked: Docker alone
    took 5.5 % longer while a thread polled a berth container every 10 ms (the
    ``poll_cost`` below). The poll is now every 50 ms, and what it sees is kept as
    ``poll_seen_all``.

    The detail's ``docker_polled`` series is Docker's side again while a thread polls
    a berth container at the same rate: what the poll's CPU alone costs the engine
    (``poll_cost``, its median over Docker's)."""
    client = docker_client()
    times: dict[str, list[float]] = {"docker": [], "berth": [], "docker_polled": [],
                                     "poll_seen": []}
    try:
        for _ in range(3):     # warm both paths (page cache, connection pools)
            _p1_docker(client)
            _p1_berth(berth)
        polled = berth.run(name("p1poll"))
        wait(lambda: berth.status(polled) == "Running", 60, poll)
        for i in range(runs):
            sides = ("docker", "berth", "docker_polled")
            for side in sides if i % 2 == 0 else sides[::-1]:
                settle(window=0.2)
                if side == "docker":
                    times[side].append(_p1_docker(client))
                elif side == "berth":
                    written, seen = _p1_berth(berth, poll)
                    times["berth"].append(written)
                    times["poll_seen"].append(seen)
                else:
                    with _polling(berth, polled, poll):
                        times[side].append(_p1_docker(client))
    finally:
        client.close()
        berth.delete_all()
    b, d = median(times["berth"]), median(times["docker"])
    r = ratio(b, d)
    # Goal raised from 1.10 to 1.05 by issue 22.
    return Result("P1", f"create→Running, median of {runs} sequential", b, d, "s",
                  "ratio ≤ 1.05", r is not None and r <= 1.05, r,
                  {"berth_all": times["berth"], "docker_all": times["docker"], "poll_s": poll,
                   "docker_polled_all": times["docker_polled"],
                   "poll_seen_all": times["poll_seen"],
                   "poll_cost": ratio(median(times["docker_polled"]), d)})


@contextlib.contextmanager
def _polling(berth: Berth, ident: str, interval: float) -> Iterator[None]:
    """A thread asking for ``ident``'s status every ``interval`` s, as P1's berth side
    does while it waits, for the duration of the block."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            berth.status(ident)
            stop.wait(interval)

    thread = threading.Thread(target=loop, name="p1-poll", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _p1_docker(client: docker.DockerClient) -> float:
    t0 = time.perf_counter()
    c = run_detached(client, IMAGE, COMMAND, name=name("p1d"), mem_limit="64m",
                     cpu_shares=102, labels={"bench": "1"})
    wall = time.perf_counter() - t0
    c.remove(force=True)
    return wall


def _p1_berth(berth: Berth, poll: float = 0.05) -> tuple[float, float]:
    """Seconds from the POST until berth wrote the row Running, and until a poll every
    ``poll`` s saw it."""
    began = time.time()
    t0 = time.perf_counter()
    u = berth.run(name("p1b"))
    shown = wait(lambda: _running(berth.shown(u)), 60, poll)
    seen = time.perf_counter() - t0
    berth.delete_and_wait(u)
    return written_at(shown) - began, seen


def _running(shown: dict[str, Any] | None) -> dict[str, Any] | None:
    return shown if shown is not None and shown.get("status") == "Running" else None


def written_at(shown: dict[str, Any]) -> float:
    """The row's ``updated_at`` (the API's naive UTC) as seconds since the epoch."""
    stamp = dt.datetime.fromisoformat(str(shown["updated_at"]))
    return stamp.replace(tzinfo=dt.UTC).timestamp()


def p2(berth: Berth, n: int = 50, rounds: int = 5) -> Result:
    """``rounds`` paired trials, the order alternating (Docker first, then berth first),
    each phase starting on a settled machine: removing 50 containers leaves the kernel
    tearing down their network namespaces for seconds after ``docker rm`` returns, and
    without the wait that work landed on whichever phase came second. The result is the
    median of each side. The detail carries, per round, the CPU seconds berth serve and
    dockerd spent over each phase's timed part (``cpu_s``), and their medians per
    create (``cpu_ms_per_create``): berth's moves far less between rounds than the
    ratio does."""
    client = docker_client()
    docker_walls: list[float] = []
    berth_walls: list[float] = []
    berth_seen: list[float] = []
    cpu: dict[str, list[float]] = {"berth_in_berth_phase": [], "dockerd_in_berth_phase": [],
                                   "dockerd_in_docker_phase": []}
    engines = dockerd_pids()
    try:
        for trial in range(rounds):
            for side in ("docker", "berth") if trial % 2 == 0 else ("berth", "docker"):
                settle()
                if side == "docker":
                    wall, spent = _p2_docker(client, n, engines)
                    docker_walls.append(wall)
                    cpu["dockerd_in_docker_phase"].append(sum(spent))
                else:
                    wall, spent, seen = _p2_berth(berth, n, (berth.proc.proc.pid, *engines))
                    berth_walls.append(wall)
                    berth_seen.append(seen)
                    cpu["berth_in_berth_phase"].append(spent[0])
                    cpu["dockerd_in_berth_phase"].append(sum(spent[1:]))
    finally:
        client.close()
        berth.delete_all(300)
    b, d = median(berth_walls), median(docker_walls)
    r = ratio(b, d)
    return Result("P2", f"{n} concurrent creates, wall time until all Running "
                        f"(median of {rounds})", b, d, "s", "ratio ≤ 1.10",
                  r is not None and r <= 1.10, r,
                  {"berth_all": berth_walls, "docker_all": docker_walls,
                   "ratios": [x / y for x, y in zip(berth_walls, docker_walls)],
                   "list_seen_all": berth_seen,
                   "cpu_s": cpu,
                   "cpu_ms_per_create": {key: median(spent) * 1000 / n
                                         for key, spent in cpu.items()}})


def dockerd_pids() -> tuple[int, ...]:
    """The Docker engines' processes (``dockerd``: one on a bench machine, more where
    a fleet's nodes run their own), whose CPU each phase reads together."""
    return tuple(pids_of_command("dockerd"))


def _cpu_now(pids: tuple[int, ...]) -> list[float]:
    return [cpu_of(pid) for pid in pids]


def _cpu_since(before: list[float], pids: tuple[int, ...]) -> list[float]:
    """The CPU seconds each of ``pids`` spent since ``before`` (``_cpu_now``)."""
    return [after - was for after, was in zip(_cpu_now(pids), before)]


def _p2_docker(client: docker.DockerClient, n: int,
               pids: tuple[int, ...] = ()) -> tuple[float, list[float]]:
    """The wall time of ``n`` concurrent ``docker run -d``, and the CPU seconds
    ``pids`` spent meanwhile; the containers are removed after."""
    before = _cpu_now(pids)
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(n) as pool:
        made = list(pool.map(lambda i: run_detached(
            client, IMAGE, COMMAND, name=name("p2d"), mem_limit="64m",
            labels={"bench": "1"}), range(n)))
    wall = time.perf_counter() - t0
    spent = _cpu_since(before, pids)
    with cf.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda c: c.remove(force=True), made))
    return wall, spent


def _p2_berth(berth: Berth, n: int, pids: tuple[int, ...] = (),
              poll: float = 0.5) -> tuple[float, list[float], float]:
    """The seconds from the first POST of ``n`` concurrent creates until berth wrote
    the last of their rows Running (its ``updated_at``, as P1 times one), the CPU
    seconds ``pids`` spent until a list showed them all Running, and the seconds
    until that list; the containers are deleted after.

    Timed by the rows, not by the list that saw them: the list, every ``poll`` s, is
    the observer's, which Docker's side has none of (``docker run -d`` returns after
    the start). Listed every 0.1 s (until 2026-12-07) it cost berth about a tenth of
    its CPU in the phase (a py-spy profile of P2: 9.6 % of berth's samples in the 50-row
    lists), taken from the two cores Docker's starts run on, and it was late by up to
    its interval."""
    before = _cpu_now(pids)
    began = time.time()
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(n) as pool:
        uuids = list(pool.map(lambda i: berth.run(name("p2b")), range(n)))
    wanted = set(uuids)
    rows = wait(lambda: _all_running(berth, wanted), 300, poll)
    seen = time.perf_counter() - t0
    spent = _cpu_since(before, pids)
    berth.delete_all(300)
    return max(written_at(row) for row in rows) - began, spent, seen


def _all_running(berth: Berth, wanted: set[str]) -> list[dict[str, Any]] | None:
    """The rows of ``wanted`` once the list shows every one Running, else None."""
    rows = [c for c in berth.http.get("/v1/containers").json()["containers"]
            if c["uuid"] in wanted]
    return rows if len(rows) == len(wanted) and all(
        c["status"] == "Running" for c in rows) else None
