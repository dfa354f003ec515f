"""An in-memory container engine for unit tests of the agent's flows (recovery, task
deadlines): the parts of :class:`berth.runtime.base.Runtime` those flows use, with the
same contracts (delete of a missing container is a no-op, inspect of one raises
RuntimeNotFound, list filters on berth's labels)."""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import replace

from berth.runtime import base as rt

_T0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def state(status: rt.RunState, started: bool = True) -> rt.ContainerState:
    """A plausible engine state for ``status``."""
    running = status == rt.RunState.RUNNING
    return rt.ContainerState(
        status=status, running=running or status == rt.RunState.PAUSED,
        paused=status == rt.RunState.PAUSED, exit_code=0,
        started_at=_T0 if started else None,
        finished_at=_T0 + dt.timedelta(seconds=5)
        if started and status == rt.RunState.EXITED else None)


class FakeRuntime:
    def __init__(self) -> None:
        self.containers: dict[str, rt.RuntimeContainer] = {}
        self.calls: list[tuple[str, str]] = []
        #: container ids whose inspect raises this exception (to test failure paths)
        self.broken: dict[str, Exception] = {}
        self._ids = itertools.count(1)

    # -- test set-up ---------------------------------------------------------------------
    def add(self, uuid: str | None, host: str, status: rt.RunState = rt.RunState.RUNNING,
            started: bool = True, labels: dict[str, str] | None = None) -> str:
        """Put a container in the engine as berth would have created it; return its id."""
        cid = f"c{next(self._ids):063d}"
        all_labels = {rt.LABEL_HOST: host}
        if uuid is not None:
            all_labels[rt.LABEL_UUID] = uuid
        if labels is not None:
            all_labels = labels
        self.containers[cid] = rt.RuntimeContainer(
            id=cid, name=f"{rt.NAME_PREFIX}{uuid or cid[:12]}", uuid=all_labels.get(rt.LABEL_UUID),
            image="berth-test/busybox:latest", state=state(status, started),
            labels=all_labels)
        return cid

    def status_of(self, cid: str) -> rt.RunState | None:
        c = self.containers.get(cid)
        return c.state.status if c is not None and c.state is not None else None

    def _set(self, cid: str, status: rt.RunState) -> None:
        c = self.containers[cid]
        self.containers[cid] = replace(c, state=state(status))

    def _find(self, ident: str) -> rt.RuntimeContainer:
        for c in self.containers.values():
            if ident in (c.id, c.name):
                return c
        raise rt.RuntimeNotFound(reason=ident)

    # -- the Runtime protocol (the parts the flows use) ------------------------------------
    def ping(self) -> None:
        return None

    def create(self, spec: rt.ContainerSpec) -> str:
        cid = self.add(spec.uuid, spec.host, rt.RunState.CREATED, started=False)
        self.containers[cid] = replace(self.containers[cid], memory_mib=spec.memory_mib,
                                       cpu_shares=spec.cpu_shares)
        return cid

    def update(self, container_id: str, memory_mib: int | None = None,
               memory_swap_mib: int | None = None, cpu_shares: int | None = None) -> None:
        self.calls.append(("update", container_id))
        c = self._find(container_id)
        self.containers[c.id] = replace(
            c, memory_mib=c.memory_mib if memory_mib is None else memory_mib,
            cpu_shares=c.cpu_shares if cpu_shares is None else cpu_shares)

    def start(self, container_id: str) -> None:
        self.calls.append(("start", container_id))
        self._set(self._find(container_id).id, rt.RunState.RUNNING)

    def stop(self, container_id: str, timeout: int | None = None) -> None:
        self.calls.append(("stop", container_id))
        self._set(self._find(container_id).id, rt.RunState.EXITED)

    def restart(self, container_id: str, timeout: int | None = None) -> None:
        self.calls.append(("restart", container_id))
        self._set(self._find(container_id).id, rt.RunState.RUNNING)

    def delete(self, container_id: str, force: bool = False) -> None:
        self.calls.append(("delete", container_id))
        try:
            found = self._find(container_id)
        except rt.RuntimeNotFound:
            return
        del self.containers[found.id]

    def inspect(self, container_id: str) -> rt.RuntimeContainer:
        if container_id in self.broken:
            raise self.broken[container_id]
        return self._find(container_id)

    def list(self, host: str | None = None) -> list[rt.RuntimeContainer]:
        return [c for c in self.containers.values()
                if rt.LABEL_UUID in c.labels
                and (host is None or c.labels.get(rt.LABEL_HOST) == host)]


class ImageRuntime(FakeRuntime):
    """FakeRuntime with every image present (a create's pull finds it locally)."""

    def inspect_image(self, ref: str) -> rt.ImageInfo:
        return rt.ImageInfo(id="sha256:1", repo_tags=(ref,), size=1, cmd=("sh",),
                            entrypoint=None)
