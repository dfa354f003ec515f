"""``SimulatedRuntime``: containers in memory behind the Runtime interface (see the
package docstring: for benchmarks only).

State changes happen under one lock and are published on the event stream as Docker
publishes them (``create``, ``start``, ``die``, ``destroy``...). ``start`` and
``restart`` sleep ``start_latency`` seconds in the caller's thread first, as a call
to a real engine blocks that long. Calls the agent never makes on the benchmark's
path (exec, archives, commit, stats, top) raise :class:`RuntimeInvalid`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from berth.runtime.base import (
    LABEL_HOST,
    LABEL_UUID,
    ContainerSpec,
    ContainerState,
    EventKind,
    ExecResult,
    HostInfo,
    ImageInfo,
    ImageRef,
    ImageSearchResult,
    PullProgress,
    RegistryAuth,
    RunState,
    RuntimeConflict,
    RuntimeContainer,
    RuntimeEvent,
    RuntimeInvalid,
    RuntimeNotFound,
)
from berth.runtime.inspection_types import Archive, ProcessTable, StatsSample
from berth.runtime.simulated.events import EventHub, SimulatedEventStream

_KINDS = {"start": EventKind.STARTED, "die": EventKind.DIED, "destroy": EventKind.REMOVED,
          "pause": EventKind.PAUSED, "unpause": EventKind.UNPAUSED}


@dataclass(frozen=True, slots=True)
class SimulatedNode:
    """What the simulated node reports as its resources."""

    cpus: int = 8
    mem_total_mib: int = 32768


@dataclass(slots=True)
class _Container:
    id: str
    spec: ContainerSpec
    state: ContainerState


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class SimulatedRuntime:
    """An in-memory engine for one node. Thread-safe."""

    base_url = "simulated://"

    def __init__(self, start_latency: float = 0.0, node: SimulatedNode | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.start_latency = start_latency
        self.node = node or SimulatedNode()
        self._sleep = sleep
        self._lock = threading.Lock()
        self._containers: dict[str, _Container] = {}
        self._by_name: dict[str, str] = {}
        self._hub = EventHub()
        self._ids = itertools.count(1)

    # --- engine and images ------------------------------------------------------

    def ping(self) -> None:
        return None

    def info(self) -> HostInfo:
        with self._lock:
            states = [c.state for c in self._containers.values()]
        return HostInfo(
            cpus=self.node.cpus, mem_total_mib=self.node.mem_total_mib,
            architecture="x86_64", os_type="linux", os="simulated", kernel_version="0",
            labels={}, runtimes=("runc",), total_containers=len(states),
            running_containers=sum(s.running and not s.paused for s in states),
            paused_containers=sum(s.paused for s in states),
            stopped_containers=sum(not s.running for s in states),
            docker_root_dir="/simulated", storage_driver="simulated")

    def inspect_image(self, ref: str) -> ImageInfo:
        return self._image(ref)

    def pull_image(self, image: ImageRef, auth: RegistryAuth | None = None,
                   progress: Callable[[PullProgress], None] | None = None) -> ImageInfo:
        return self._image(image.ref)

    def image_exists_in_registry(self, image: ImageRef,
                                 auth: RegistryAuth | None = None) -> bool | None:
        return True

    def import_image(self, ref: str, rootfs_tar: bytes, command: tuple[str, ...],
                     labels: dict[str, str]) -> None:
        return None

    def remove_image(self, ref: str) -> None:
        return None

    def load_image(self, tar_path: str) -> tuple[str, ...]:
        raise RuntimeInvalid("docker load is not simulated")

    def save_image(self, ref: str) -> Iterator[bytes]:
        raise RuntimeInvalid("docker save is not simulated")

    def search_images(self, term: str, limit: int = 25) -> tuple[ImageSearchResult, ...]:
        return (ImageSearchResult(name=term),)

    @staticmethod
    def _image(ref: str) -> ImageInfo:
        digest = hashlib.sha256(ref.encode()).hexdigest()
        return ImageInfo(id=f"sha256:{digest}", repo_tags=(ref,), size=0, cmd=("sleep",),
                         entrypoint=None)

    # --- containers ---------------------------------------------------------------

    def create(self, spec: ContainerSpec) -> str:
        with self._lock:
            if spec.name in self._by_name:
                raise RuntimeConflict(f"the name {spec.name} is already in use")
            cid = hashlib.sha256(f"{spec.uuid}-{next(self._ids)}".encode()).hexdigest()
            labels = dict(spec.labels, **{LABEL_UUID: spec.uuid, LABEL_HOST: spec.host})
            self._containers[cid] = _Container(cid, replace(spec, labels=labels),
                                               ContainerState(status=RunState.CREATED))
            self._by_name[spec.name] = cid
        self._publish(cid, spec.uuid, "create")
        return cid

    def start(self, container_id: str) -> None:
        self._get(container_id)
        if self.start_latency > 0:
            self._sleep(self.start_latency)
        self._set_running(container_id)

    def _set_running(self, container_id: str) -> None:
        with self._lock:
            c = self._get_locked(container_id)
            if c.state.running:
                return
            c.state = ContainerState(status=RunState.RUNNING, running=True, pid=4242,
                                     started_at=_now(), exit_code=0)
        self._publish(c.id, c.spec.uuid, "start")

    def stop(self, container_id: str, timeout: int | None = None) -> None:
        self._exit(container_id, 0)

    def kill(self, container_id: str, signal: str | None = None) -> None:
        with self._lock:
            if not self._get_locked(container_id).state.running:
                raise RuntimeConflict(f"container {container_id} is not running")
        self._exit(container_id, 137)

    def _exit(self, container_id: str, code: int) -> None:
        with self._lock:
            c = self._get_locked(container_id)
            if not c.state.running:
                return
            c.state = ContainerState(status=RunState.EXITED, exit_code=code,
                                     started_at=c.state.started_at, finished_at=_now())
        self._publish(c.id, c.spec.uuid, "die", code)

    def restart(self, container_id: str, timeout: int | None = None) -> None:
        self._exit(container_id, 0)
        self.start(container_id)

    def delete(self, container_id: str, force: bool = False) -> None:
        with self._lock:
            c = self._find_locked(container_id)
            if c is None:
                return
            if c.state.running and not force:
                raise RuntimeConflict(f"container {container_id} is running: stop it first")
            del self._containers[c.id]
            self._by_name.pop(c.spec.name, None)
        if c.state.running:
            self._publish(c.id, c.spec.uuid, "die", 137)
        self._publish(c.id, c.spec.uuid, "destroy")

    def pause(self, container_id: str) -> None:
        self._pause(container_id, True)

    def unpause(self, container_id: str) -> None:
        self._pause(container_id, False)

    def _pause(self, container_id: str, paused: bool) -> None:
        with self._lock:
            c = self._get_locked(container_id)
            if not c.state.running or c.state.paused == paused:
                raise RuntimeConflict(f"container {container_id} is "
                                      f"{'not running or already paused' if paused else 'not paused'}")
            c.state = replace(c.state, paused=paused,
                              status=RunState.PAUSED if paused else RunState.RUNNING)
        self._publish(c.id, c.spec.uuid, "pause" if paused else "unpause")

    def update(self, container_id: str, *, memory_mib: int | None = None,
               memory_swap_mib: int | None = None, cpu_shares: int | None = None) -> None:
        with self._lock:
            c = self._get_locked(container_id)
            c.spec = replace(c.spec, memory_mib=memory_mib or c.spec.memory_mib,
                             cpu_shares=cpu_shares or c.spec.cpu_shares)
        self._publish(c.id, c.spec.uuid, "update")

    def inspect(self, container_id: str) -> RuntimeContainer:
        with self._lock:
            return self._view(self._get_locked(container_id))

    def list(self, host: str | None = None) -> list[RuntimeContainer]:
        with self._lock:
            return [self._view(c) for c in self._containers.values()
                    if host is None or c.spec.host == host]

    def events(self, since_nano: int | None = None) -> SimulatedEventStream:
        return self._hub.subscribe(since_nano)

    def close(self) -> None:
        """End every open event stream (the node goes away)."""
        self._hub.close_all()

    # --- not simulated ----------------------------------------------------------------

    def logs(self, container_id: str, *, stdout: bool = True, stderr: bool = True,
             timestamps: bool = False, tail: int | None = None,
             since: float | None = None) -> str:
        self._get(container_id)
        return ""

    def top(self, container_id: str, ps_args: str | None = None) -> ProcessTable:
        raise RuntimeInvalid("top is not simulated")

    def stats(self, container_id: str) -> StatsSample:
        raise RuntimeInvalid("stats are not simulated")

    def get_archive(self, container_id: str, path: str) -> Archive:
        raise RuntimeInvalid("archives are not simulated")

    def put_archive(self, container_id: str, path: str, data: bytes) -> None:
        raise RuntimeInvalid("archives are not simulated")

    def commit(self, container_id: str, repository: str, tag: str, pause: bool) -> ImageInfo:
        raise RuntimeInvalid("commit is not simulated")

    def exec_create(self, container_id: str, command: Sequence[str], *,
                    interactive: bool = False) -> str:
        raise RuntimeInvalid("exec is not simulated")

    def exec_run(self, exec_id: str, *, timeout: float) -> ExecResult:
        raise RuntimeInvalid("exec is not simulated")

    def exec_resize(self, exec_id: str, height: int, width: int) -> None:
        raise RuntimeNotFound(f"no such exec instance: {exec_id}")

    def resize(self, container_id: str, height: int, width: int) -> None:
        self._get(container_id)

    # --- internals --------------------------------------------------------------------

    def _get(self, container_id: str) -> _Container:
        with self._lock:
            return self._get_locked(container_id)

    def _find_locked(self, ident: str) -> _Container | None:
        found = self._containers.get(ident)
        if found is None:
            cid = self._by_name.get(ident.lstrip("/"))
            found = self._containers.get(cid) if cid else None
        return found

    def _get_locked(self, ident: str) -> _Container:
        found = self._find_locked(ident)
        if found is None:
            raise RuntimeNotFound(ident)
        return found

    @staticmethod
    def _view(c: _Container) -> RuntimeContainer:
        s = c.spec
        return RuntimeContainer(
            id=c.id, name=s.name, uuid=s.uuid, image=s.image, state=c.state,
            hostname=s.hostname or c.id[:12], runtime=s.runtime or "runc",
            command=s.command, entrypoint=s.entrypoint, labels=dict(s.labels),
            memory_mib=s.memory_mib, cpu_shares=s.cpu_shares)

    def _publish(self, cid: str, uuid: str, action: str, exit_code: int | None = None
                 ) -> None:
        at_nano = time.time_ns()
        self._hub.publish(RuntimeEvent(
            container_id=cid, uuid=uuid, kind=_KINDS.get(action, EventKind.CHANGED),
            action=action, at=dt.datetime.fromtimestamp(at_nano / 1e9, dt.UTC),
            at_nano=at_nano, exit_code=exit_code))
