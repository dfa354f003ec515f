"""The volume step (``berth.compute.steps.volumes``) over a real SQLite database and
the agent's real ``ContainerVolumes``, with an in-memory volume driver standing in for
the mounts: the binds it gives, and what its release does with the volumes, by the
flow that took them: a create's (the volume made for it removed, an existing one
detached and kept) or a rebuild's (every one kept, detached). Release is idempotent
and does nothing without acquire."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest
from support.agent_deps import HOST, agent_deps, node_database
from support.fake_runtime import FakeRuntime

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.steps import take
from berth.compute.steps.volumes import Volumes
from berth.compute.volumes.attachments import ContainerVolumes
from berth.db import containers
from berth.db import volumes as db_volumes
from berth.db.engine import Database
from berth.volume.base import LOCAL, Attached, VolumeDriver, VolumeRef


class MemoryVolumes(VolumeDriver):
    """Volumes that are attached when a set says so; ``refuse``: uuids that never
    become available."""

    provider = LOCAL

    def __init__(self) -> None:
        self.attached: set[str] = set()
        self.deleted: list[str] = []
        self.refuse: set[str] = set()

    def wait_available(self, ctx: RequestContext | None, ref: VolumeRef,
                       timeout: float) -> None:
        if ref.uuid in self.refuse:
            raise exc.VolumeUnavailable(reason="in error")

    def attach(self, ctx: RequestContext | None, ref: VolumeRef) -> Attached:
        self.attached.add(ref.uuid)
        return Attached(path=f"/volumes/{ref.uuid}")

    def detach(self, ctx: RequestContext | None, ref: VolumeRef) -> None:
        self.attached.discard(ref.uuid)

    def is_attached(self, ref: VolumeRef) -> bool:
        return ref.uuid in self.attached

    def delete(self, ctx: RequestContext | None, ref: VolumeRef, timeout: float) -> None:
        self.deleted.append(ref.uuid)


@pytest.fixture
def driver() -> MemoryVolumes:
    return MemoryVolumes()


@pytest.fixture
def deps(tmp_path: Path, driver: MemoryVolumes) -> Iterator[AgentDeps]:
    for db in node_database(tmp_path):
        d = agent_deps(db, FakeRuntime())
        d = replace(d, volumes=ContainerVolumes(db, HOST, {LOCAL: driver}))
        yield d
        d.overlap.shutdown(wait=True)


def with_volume(db: Database, auto_remove: bool) -> tuple[str, str]:
    """A Creating row mounting one new local volume at /data: (row uuid, volume uuid)."""
    volume = db_volumes.new_volume(project_id="p1", volume_provider=LOCAL, size=1,
                                   auto_remove=auto_remove)

    def along(uuid: str) -> Iterator[object]:
        yield volume
        yield db_volumes.new_mapping(volume, uuid, "/data")

    row = containers.create(db, {"status": "Creating", "project_id": "p1", "host": HOST},
                            along=along)
    return row.uuid, volume.uuid


@pytest.mark.parametrize("overlapped", [False, True])
def test_acquire_attaches_and_gives_the_binds(deps: AgentDeps, driver: MemoryVolumes,
                                              overlapped: bool) -> None:
    uuid, volume = with_volume(deps.db, auto_remove=True)
    step = Volumes(deps, None, [uuid], overlapped=overlapped)
    step.acquire()
    assert step.binds() == {uuid: (f"/volumes/{volume}:/data",)}
    assert driver.attached == {volume}


def test_a_creates_release_removes_the_volume_made_for_it_once(deps: AgentDeps,
                                                               driver: MemoryVolumes) -> None:
    uuid, volume = with_volume(deps.db, auto_remove=True)
    step = Volumes(deps, None, [uuid], overlapped=True)
    step.acquire()
    step.release()
    step.release()
    assert driver.attached == set() and driver.deleted == [volume]
    assert db_volumes.find_by_uuid(deps.db, volume) is None


def test_a_creates_release_keeps_a_volume_it_did_not_make(deps: AgentDeps,
                                                         driver: MemoryVolumes) -> None:
    uuid, volume = with_volume(deps.db, auto_remove=False)
    step = Volumes(deps, None, [uuid])
    step.acquire()
    step.release()
    assert driver.attached == set() and driver.deleted == []
    assert db_volumes.find_by_uuid(deps.db, volume) is not None


def test_a_rebuilds_release_keeps_every_volume_detached(deps: AgentDeps,
                                                       driver: MemoryVolumes) -> None:
    uuid, volume = with_volume(deps.db, auto_remove=True)
    step = Volumes(deps, None, [uuid], made_here=False)
    step.acquire()
    step.release()
    assert driver.attached == set() and driver.deleted == []
    assert [v.uuid for v in db_volumes.volumes_of(deps.db, uuid)] == [volume]


def test_a_release_without_acquire_touches_nothing(deps: AgentDeps,
                                                   driver: MemoryVolumes) -> None:
    uuid, volume = with_volume(deps.db, auto_remove=True)
    driver.attached.add(volume)                 # attached by someone else
    Volumes(deps, None, [uuid]).release()
    assert driver.attached == {volume}
    assert db_volumes.find_by_uuid(deps.db, volume) is not None


def test_a_volume_that_cannot_be_used_is_named_and_the_step_undone(
        deps: AgentDeps, driver: MemoryVolumes) -> None:
    uuid, volume = with_volume(deps.db, auto_remove=True)
    driver.refuse.add(volume)
    with pytest.raises(exc.VolumeUnavailable, match="/data: in error"), ExitStack() as undo:
        take(undo, Volumes(deps, None, [uuid]))
    assert driver.attached == set() and driver.deleted == [volume]


def test_without_volumes_the_step_gives_no_binds(tmp_path: Path) -> None:
    for db in node_database(tmp_path):
        d = agent_deps(db, FakeRuntime())
        step = Volumes(d, None, ["u1"], overlapped=True)
        step.acquire()
        assert step.binds() == {}
        step.release()
