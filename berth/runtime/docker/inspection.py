"""DockerRuntime operations: logs, top, stats, archives, commit.

A mixin of :class:`~berth.runtime.docker.driver.DockerRuntime`: it uses
``self._api()`` (the shared low-level APIClient) inside ``translate_errors()``.
The module-level functions turn the engine's answers into berth's values and are pure.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from berth.runtime.base import ImageInfo
from berth.runtime.docker.errors import translate_errors
from berth.runtime.inspection_types import Archive, PathStat, ProcessTable, StatsSample

if TYPE_CHECKING:
    import docker

LOG = logging.getLogger(__name__)


class InspectionMixin:
    if TYPE_CHECKING:
        def _api(self) -> docker.APIClient: ...

        def inspect_image(self, ref: str) -> ImageInfo: ...

    def logs(self, container_id: str, *, stdout: bool = True, stderr: bool = True,
             timestamps: bool = False, tail: int | None = None,
             since: float | None = None) -> str:
        """``docker logs`` without following. The SDK inspects the container first and
        de-multiplexes the stdout/stderr frames of a non-tty container, so the answer is
        the plain interleaved output."""
        kwargs: dict[str, Any] = {"stdout": stdout, "stderr": stderr,
                                  "timestamps": timestamps,
                                  "tail": "all" if tail is None else int(tail)}
        if since is not None and since > 0:
            # The SDK takes an int or a float; the engine reads "sec.frac" exactly.
            kwargs["since"] = int(since) if float(since).is_integer() else float(since)
        with translate_errors():
            raw = self._api().logs(container_id, stream=False, **kwargs)
        if isinstance(raw, str):
            return raw
        return bytes(raw).decode("utf-8", errors="replace")

    def top(self, container_id: str, ps_args: str | None = None) -> ProcessTable:
        """``docker top``; the engine runs the node's ``ps`` over the container's pids."""
        with translate_errors():
            answer = self._api().top(container_id, ps_args=ps_args or None)
        return process_table(answer)

    def stats(self, container_id: str) -> StatsSample:
        """One ``docker stats`` reading, not streamed.

        ``one-shot`` is deliberately left unset: the engine's default (false) makes it
        wait for a second sample, so ``precpu_stats`` holds the reading about one
        second earlier and the CPU figure can be a delta, as ``docker stats`` prints
        it. With ``one-shot=true`` ``precpu_stats`` comes back empty.
        """
        with translate_errors():
            answer = self._api().stats(container_id, stream=False)
            sample = sample_from_stats(answer)
            if answer.get("networks"):
                return sample
            # berth's own networks (local, Neutron) plug interfaces the engine did not
            # make, and it counts none of their bytes: read the container's network
            # namespace's counters, as its init process sees them.
            state = self._api().inspect_container(container_id).get("State") or {}
        counted = namespace_net_io(int(state.get("Pid") or 0))
        if counted is None:
            return sample
        return dataclasses.replace(sample, net_rx=counted[0], net_tx=counted[1])

    def get_archive(self, container_id: str, path: str) -> Archive:
        """``GET /containers/{id}/archive?path=``, read whole into memory."""
        with translate_errors():
            chunks, stat = self._api().get_archive(container_id, path)
            data = b"".join(chunks)
        return Archive(data=data, stat=path_stat(stat or {}))

    def put_archive(self, container_id: str, path: str, data: bytes) -> None:
        """``PUT /containers/{id}/archive?path=`` with the tar ``data``."""
        with translate_errors():
            self._api().put_archive(container_id, path, data)

    def commit(self, container_id: str, repository: str, tag: str, pause: bool) -> ImageInfo:
        """``docker commit`` with the engine's own pause, which is undone by the engine
        even when the commit fails (an explicit pause/commit/unpause sequence could
        leave the container frozen if the agent died in between)."""
        with translate_errors():
            answer = self._api().commit(container_id, repository=repository, tag=tag,
                                        pause=pause)
        image_id = str(answer.get("Id") or "")
        LOG.info("committed Docker container %s as %s:%s (%s)", container_id[:12],
                 repository, tag, image_id[:19])
        return self.inspect_image(image_id or f"{repository}:{tag}")


def process_table(answer: Mapping[str, Any]) -> ProcessTable:
    """``docker top``'s ``{"Titles", "Processes"}`` as a :class:`ProcessTable`."""
    titles = tuple(str(t) for t in answer.get("Titles") or ())
    processes = tuple(tuple(str(c) for c in row) for row in answer.get("Processes") or ())
    return ProcessTable(titles=titles, processes=processes)


def path_stat(stat: Mapping[str, Any]) -> PathStat:
    """The SDK's decoded ``X-Docker-Container-Path-Stat`` header."""
    return PathStat(name=str(stat.get("name") or ""), size=int(stat.get("size") or 0),
                    mode=int(stat.get("mode") or 0), mtime=str(stat.get("mtime") or ""),
                    link_target=str(stat.get("linkTarget") or ""))


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _cpu(section: Mapping[str, Any] | None) -> tuple[int, int, int]:
    """(total usage, system usage, online cpus) of a ``cpu_stats``/``precpu_stats``."""
    section = section or {}
    usage = section.get("cpu_usage") or {}
    online = _int(section.get("online_cpus")) or len(usage.get("percpu_usage") or ())
    return _int(usage.get("total_usage")), _int(section.get("system_cpu_usage")), online


def _inactive_file(memory: Mapping[str, Any]) -> int:
    """Page cache not counted as used, as the Docker CLI: cgroup v1 reports
    ``total_inactive_file``, cgroup v2 ``inactive_file``."""
    detail = memory.get("stats") or {}
    if "total_inactive_file" in detail:
        return _int(detail["total_inactive_file"])
    return _int(detail.get("inactive_file"))


def _block_io(blkio: Mapping[str, Any] | None) -> tuple[int, int]:
    """Bytes read and written: the ``Read``/``Write`` entries (any case) of
    ``io_service_bytes_recursive`` summed over devices (null on cgroup v2 idle)."""
    read = write = 0
    for entry in (blkio or {}).get("io_service_bytes_recursive") or ():
        op = str(entry.get("op", "")).lower()
        if op == "read":
            read += _int(entry.get("value"))
        elif op == "write":
            write += _int(entry.get("value"))
    return read, write


def namespace_net_io(pid: int, proc: str = "/proc") -> tuple[int, int] | None:
    """Bytes received and sent by every interface but ``lo`` in the network namespace
    of process ``pid`` (``<proc>/<pid>/net/dev``); None when it cannot be read (no
    such process here: an engine on another machine, a container that just stopped)."""
    if pid <= 0:
        return None
    try:
        with open(f"{proc}/{pid}/net/dev", encoding="ascii") as f:
            lines = f.read().splitlines()[2:]
    except OSError:
        return None
    rx = tx = 0
    for line in lines:
        name, _, counters = line.partition(":")
        fields = counters.split()
        if name.strip() == "lo" or len(fields) < 9:
            continue
        rx += int(fields[0])
        tx += int(fields[8])
    return rx, tx


def sample_from_stats(answer: Mapping[str, Any]) -> StatsSample:
    """A non-streamed ``docker stats`` answer as a :class:`StatsSample`. Missing sections
    (a container without networks, cgroup v2 without blkio) count as zero."""
    cpu_total, system_total, online = _cpu(answer.get("cpu_stats"))
    precpu_total, presystem_total, _ = _cpu(answer.get("precpu_stats"))
    memory = answer.get("memory_stats") or {}
    read, write = _block_io(answer.get("blkio_stats"))
    networks = answer.get("networks") or {}
    return StatsSample(
        cpu_total=cpu_total, system_total=system_total,
        precpu_total=precpu_total, presystem_total=presystem_total, online_cpus=online,
        mem_usage=_int(memory.get("usage")), mem_inactive_file=_inactive_file(memory),
        mem_limit=_int(memory.get("limit")), block_read=read, block_write=write,
        net_rx=sum(_int(n.get("rx_bytes")) for n in networks.values()),
        net_tx=sum(_int(n.get("tx_bytes")) for n in networks.values()),
    )
