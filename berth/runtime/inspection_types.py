"""Plain values of the runtime's inspection calls: logs, top, stats, archives.

They cross the :class:`~berth.runtime.base.Runtime` interface; the compute flows turn
them into Zun's wire shapes (``{"Titles", "Processes"}``, the stats keys of
behaviours.md §6.5, ``{"data", "stat"}``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProcessTable:
    """``ps`` run by the engine inside the container: column titles and one row per process."""

    titles: tuple[str, ...]
    processes: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class PathStat:
    """The engine's stat of an archived path (the ``X-Docker-Container-Path-Stat`` header).
    ``mtime`` is the engine's RFC 3339 text, ``mode`` Go's ``os.FileMode`` bits."""

    name: str
    size: int
    mode: int
    mtime: str
    link_target: str


@dataclass(frozen=True, slots=True)
class Archive:
    """A tar archive of one path in a container, and the stat of that path."""

    data: bytes
    stat: PathStat


@dataclass(frozen=True, slots=True)
class StatsSample:
    """One stats reading with the previous CPU reading (for a CPU delta).

    CPU times are nanoseconds: ``cpu_total``/``system_total`` now, ``precpu_total``/
    ``presystem_total`` about one second earlier (0 when the engine gave no earlier
    reading). Memory and I/O figures are bytes. ``mem_inactive_file`` is the page
    cache the kernel can drop (cgroup v1 ``total_inactive_file``, v2 ``inactive_file``),
    which ``docker stats`` does not count as used.
    """

    cpu_total: int
    system_total: int
    precpu_total: int
    presystem_total: int
    online_cpus: int
    mem_usage: int
    mem_inactive_file: int
    mem_limit: int
    block_read: int
    block_write: int
    net_rx: int
    net_tx: int
