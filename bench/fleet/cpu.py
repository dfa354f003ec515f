"""CPU seconds each part of the run spent during the fill, read from ``/proc``: the
API (its supervisor and workers), the agents' hosts, PostgreSQL (the run database's
backends, and every backend that ended meanwhile), RabbitMQ (the whole broker: it
is the machine's) and the client. Divided by the containers made, it is the cost of
one create in each part, a figure that the machine's other load changes far less
than a rate.

A backend that ends (a connection a pool opened past its size and closed when it
came back, an autovacuum worker) is gone from ``/proc`` before the next sample; its
CPU is then counted in its parent's, the postmaster's, children's times (``cutime``,
``cstime``), which every sample reads too (as the pseudo-process ``REAPED``).
Those are every database's backends, so a run on a machine whose PostgreSQL serves
others counts theirs that ended too."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")
#: The key under which a role's samples carry the CPU of its processes that ended
#: (the postmaster's reaped children), where a role has such a parent.
REAPED = 0


def _stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command's name (state first);
    empty when the process is gone. ``pid`` may also be a path under ``/proc``
    (``self``, or ``self/task/<tid>``: one thread's)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def cpu_of(pid: int | str) -> float:
    """User + system seconds of ``pid`` (as ``_stat`` takes it), in whole clock
    ticks; 0.0 when it is gone."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / _TICK if fields else 0.0


def _reaped_cpu_of(pid: int) -> float:
    """User + system seconds of the children ``pid`` waited for, once they ended."""
    fields = _stat(pid)
    return (int(fields[13]) + int(fields[14])) / _TICK if fields else 0.0


def _parent_of(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _pids() -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()]


def pids_of_command(name: str) -> list[int]:
    """The processes whose command name (``/proc/<pid>/comm``) is ``name``."""
    found = []
    for pid in _pids():
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == name:
                found.append(pid)
        except OSError:
            continue
    return found


class CpuMeter:
    """``start()`` before the fill, ``per_container(n)`` after it; ``mark(n)`` on the
    way, when ``n`` containers are Running, for the cost of each block
    (``block_costs``)."""

    def __init__(self, api_pid: int, node_pids: Iterable[int], database: str) -> None:
        self._api = api_pid
        self._nodes = list(node_pids)
        self._database = database
        self._before: dict[str, dict[int, float]] = {}
        self._marks: list[tuple[int, dict[str, dict[int, float]]]] = []
        self._postmaster: int | None = None
        #: Backends of the run database that serve the client (its count of the rows
        #: Running): the client's CPU, not PostgreSQL's (``count_as_client``).
        self._client_backends: set[int] = set()

    def count_as_client(self, backend_pid: int) -> None:
        """The backend ``backend_pid`` serves the client: counted as the client's from
        the next sample on (one that ends is reaped into PostgreSQL's, as any)."""
        self._client_backends.add(backend_pid)

    def sample(self) -> dict[str, dict[int, float]]:
        return self._sample()

    def _sample(self) -> dict[str, dict[int, float]]:
        everyone = _pids()
        backends = [p for p in everyone
                    if _cmdline(p).startswith("postgres:") and f" {self._database} " in
                    _cmdline(p) + " " and p not in self._client_backends]
        broker = [p for p in everyone if "beam.smp" in _cmdline(p)]
        api = [self._api, *_children(self._api)]
        roles = {"api": api, "nodes": self._nodes, "postgres": backends,
                 "rabbitmq": broker,
                 "client": [os.getpid(), *(p for p in self._client_backends if p in everyone)]}
        sample = {role: {p: cpu_of(p) for p in pids} for role, pids in roles.items()}
        if self._postmaster is None and backends:
            self._postmaster = _parent_of(backends[0])
        if self._postmaster is not None:
            sample["postgres"][REAPED] = _reaped_cpu_of(self._postmaster)
        return sample

    def start(self) -> None:
        self._before = self._sample()
        self._marks = [(0, self._before)]

    def mark(self, containers: int) -> None:
        self._marks.append((containers, self._sample()))

    def per_container(self, containers: int) -> dict[str, float]:
        """Milliseconds of CPU per container for each part (a process that began
        during the fill counts from zero; one that ended is missing)."""
        return per_unit(self._before, self._sample(), containers)

    def block_costs(self) -> list[dict[str, float]]:
        """For each pair of consecutive marks: the containers it spans and the CPU
        milliseconds per container of each part in it."""
        return [{"from": a, "to": b, **per_unit(before, after, b - a)}
                for (a, before), (b, after) in zip(self._marks, self._marks[1:], strict=False)
                if b > a]


def per_unit(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]],
             units: float) -> dict[str, float]:
    """Milliseconds of CPU each part spent between two samples, per one of ``units``
    (containers made; seconds times nodes, when idle); ``total`` besides. Where a
    part's samples carry ``REAPED`` (both of them), a process of the first sample
    gone by the second is counted in the reaped CPU with its whole life: what it
    had spent by the first sample is taken off."""
    out: dict[str, float] = {}
    for role, now in after.items():
        was = before.get(role, {})
        spent = sum(cpu - was.get(pid, 0.0) for pid, cpu in now.items())
        if REAPED in now and REAPED in was:
            spent -= sum(cpu for pid, cpu in was.items() if pid not in now)
        out[role] = round(1000 * spent / max(units, 1e-9), 3)
    out["total"] = round(sum(out.values()), 3)
    return out
