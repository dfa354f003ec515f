"""The allocation audit (berth/compute/periodic/allocations.py) against a real SQLite
database and the embedded Placement, with the agent's real per-container workers:
allocations a failed undo left behind are released or corrected, and nothing a flow
owns is touched."""

from __future__ import annotations

import threading
import uuid as uuidlib
from collections.abc import Iterator
from dataclasses import replace

import pytest
from support.metrics import sample

from berth.compute.deps import AgentDeps
from berth.compute.periodic.allocations import audit_allocations, wanted_allocation
from berth.compute.workers import ContainerWorkers
from berth.db import containers, nodes
from berth.db.engine import Database
from berth.db.models import Container
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.embedded import EmbeddedPlacement

SYNC_HOST = "node1"                   # the conftest's node


@pytest.fixture
def placement(sync_db: Database) -> EmbeddedPlacement:
    p = EmbeddedPlacement(sync_db)
    rp = nodes.provider_uuid_of(sync_db, SYNC_HOST)
    p.ensure_provider(rp, SYNC_HOST)
    p.set_inventory(rp, {VCPU: Inventory(total=8, reserved=0, max_unit=8, allocation_ratio=1.0),
                         MEMORY_MB: Inventory(total=1024, reserved=0, max_unit=1024,
                                              allocation_ratio=1.0)})
    return p


@pytest.fixture
def deps(sync_deps: AgentDeps, placement: EmbeddedPlacement) -> AgentDeps:
    return replace(sync_deps, placement=placement)


@pytest.fixture
def workers() -> Iterator[ContainerWorkers]:
    w = ContainerWorkers(4)
    yield w
    w.stop()


def _audit(deps: AgentDeps, workers: ContainerWorkers) -> int:
    report = audit_allocations(deps, workers.submit)
    assert workers.wait_idle(10)
    return report.suspects


def _row(deps: AgentDeps, status: str, **columns: object) -> Container:
    values: dict[str, object] = {"project_id": "p1", "host": SYNC_HOST, "cpu": 0.5,
                                 "memory": "64"}
    values.update(columns, status=status)
    return containers.create(deps.db, values)


def _rp(deps: AgentDeps) -> str:
    return nodes.provider_uuid_of(deps.db, SYNC_HOST)


def test_leftovers_of_failed_undos_are_released_or_corrected(
        deps: AgentDeps, placement: EmbeddedPlacement, workers: ContainerWorkers) -> None:
    rp = _rp(deps)
    # A container deleted while Placement could not be reached: no row any more.
    gone = str(uuidlib.uuid4())
    placement.allocate(gone, rp, {VCPU: 1, MEMORY_MB: 64}, "p1", None)
    # A failed create whose release failed (the failure gave the host back).
    failed = _row(deps, "Error", host=None)
    placement.allocate(failed.uuid, rp, {VCPU: 1, MEMORY_MB: 64}, "p1", None)
    # A resize undone in the row (64 MiB) but not in Placement (128 MiB).
    resized = _row(deps, "Running", container_id="c1")
    placement.allocate(resized.uuid, rp, {VCPU: 1, MEMORY_MB: 128}, "p1", None)
    # A running container with no allocation at all.
    bare = _row(deps, "Stopped", container_id="c2", memory="32", cpu=1.5)
    # And one that is right.
    right = _row(deps, "Running", container_id="c3")
    placement.allocate(right.uuid, rp, {VCPU: 1, MEMORY_MB: 64}, "p1", None)
    generation = placement.get_provider(rp).generation
    released = sample("berth_allocation_audit_corrections_total", correction="released")
    allocated = sample("berth_allocation_audit_corrections_total", correction="allocated")

    assert _audit(deps, workers) == 4
    assert sample("berth_allocation_audit_corrections_total", correction="released") \
        == released + 2                                  # gone, failed
    assert sample("berth_allocation_audit_corrections_total", correction="allocated") \
        == allocated + 2                                 # resized, bare
    assert placement.provider_allocations(rp) == {
        resized.uuid: {VCPU: 1, MEMORY_MB: 64},
        bare.uuid: {VCPU: 2, MEMORY_MB: 32},
        right.uuid: {VCPU: 1, MEMORY_MB: 64}}
    assert placement.usages(rp) == {VCPU: 4, MEMORY_MB: 160}
    # Once true, a run finds nothing to check and writes nothing.
    generation = placement.get_provider(rp).generation
    assert _audit(deps, workers) == 0
    assert placement.get_provider(rp).generation == generation


def test_what_a_flow_owns_is_left_alone(deps: AgentDeps, placement: EmbeddedPlacement,
                                        workers: ContainerWorkers) -> None:
    rp = _rp(deps)
    creating = _row(deps, "Creating", task_state="container_creating")   # not yet allocated
    stopping = _row(deps, "Running", container_id="c1", task_state="container_stopping")
    placement.allocate(stopping.uuid, rp, {VCPU: 1, MEMORY_MB: 256}, "p1", None)
    deleting = _row(deps, "Deleting", container_id="c2")
    placement.allocate(deleting.uuid, rp, {VCPU: 1, MEMORY_MB: 64}, "p1", None)
    broken = _row(deps, "Error", container_id="c3")      # start failed: Docker has it
    placement.allocate(broken.uuid, rp, {VCPU: 1, MEMORY_MB: 64}, "p1", None)
    before = placement.provider_allocations(rp)

    assert _audit(deps, workers) == 0                  # not even checked
    assert placement.provider_allocations(rp) == before
    assert creating.uuid not in before


def test_the_check_waits_for_the_containers_queued_work_and_reads_again(
        deps: AgentDeps, placement: EmbeddedPlacement, workers: ContainerWorkers) -> None:
    """The audit saw a mismatch while a resize was running on the container's worker;
    the resize then set row and allocation to 128 MiB. The check runs after it and
    must not put the 64 MiB it saw back."""
    rp = _rp(deps)
    row = _row(deps, "Running", container_id="c1")
    placement.allocate(row.uuid, rp, {VCPU: 1, MEMORY_MB: 128}, "p1", None)  # mid-resize
    gate = threading.Event()

    def resize_finishing() -> None:
        gate.wait(10)
        containers.update_(deps.db, row.uuid, {"memory": "128"})

    workers.submit(row.uuid, resize_finishing)
    report = audit_allocations(deps, workers.submit)
    assert report.suspects == 1
    gate.set()
    assert workers.wait_idle(10)
    assert placement.get_allocation(row.uuid) == {rp: {VCPU: 1, MEMORY_MB: 128}}


def test_a_refused_correction_is_logged_and_tried_again(
        deps: AgentDeps, placement: EmbeddedPlacement, workers: ContainerWorkers,
        caplog: pytest.LogCaptureFixture) -> None:
    big = _row(deps, "Running", container_id="c1", memory="2048")      # more than exists
    failures = sample("berth_allocation_audit_failures_total")
    _audit(deps, workers)
    assert sample("berth_allocation_audit_failures_total") == failures + 1
    assert placement.get_allocation(big.uuid) == {}
    assert "the next audit tries again" in caplog.text
    assert _audit(deps, workers) == 1                                  # still a suspect


def test_wanted_allocation() -> None:
    def row(**kw: object) -> Container:
        values: dict[str, object] = {"host": SYNC_HOST, "status": "Running", "cpu": 0.5,
                                     "memory": "64", "task_state": None, "container_id": "c"}
        values.update(kw)
        return Container(**values)

    assert wanted_allocation(None, SYNC_HOST) == {}
    assert wanted_allocation(row(), SYNC_HOST) == {VCPU: 1, MEMORY_MB: 64}
    assert wanted_allocation(row(disk=3), SYNC_HOST) == {VCPU: 1, MEMORY_MB: 64, "DISK_GB": 3}
    assert wanted_allocation(row(status="Error", container_id=None, host=None),
                             SYNC_HOST) == {}
    assert wanted_allocation(row(status="Error"), SYNC_HOST) is None
    assert wanted_allocation(row(status="Deleted"), SYNC_HOST) == {}
    assert wanted_allocation(row(host="other"), SYNC_HOST) is None
    for status in ("Creating", "Deleting", "Rebuilding"):
        assert wanted_allocation(row(status=status), SYNC_HOST) is None
    assert wanted_allocation(row(task_state="container_rebooting"), SYNC_HOST) is None


def test_on_a_provider_shared_with_nova_only_this_hosts_containers_are_checked(
        deps: AgentDeps, placement: EmbeddedPlacement, workers: ContainerWorkers) -> None:
    """[compute]host_shared_with_nova: a consumer without a row here may be one of
    Nova's instances; its allocation stays, while a container's own is still fixed."""
    rp = _rp(deps)
    instance = str(uuidlib.uuid4())
    placement.allocate(instance, rp, {VCPU: 2, MEMORY_MB: 256}, "p1", None)
    resized = _row(deps, "Running", container_id="c1")
    placement.allocate(resized.uuid, rp, {VCPU: 1, MEMORY_MB: 128}, "p1", None)

    report = audit_allocations(deps, workers.submit, shared=True)
    assert workers.wait_idle(10)
    assert report.suspects == 1
    assert placement.provider_allocations(rp) == {
        instance: {VCPU: 2, MEMORY_MB: 256},
        resized.uuid: {VCPU: 1, MEMORY_MB: 64}}
    # Not shared, the same consumer is a leftover and released.
    assert _audit(deps, workers) == 1
    assert placement.provider_allocations(rp) == {resized.uuid: {VCPU: 1, MEMORY_MB: 64}}
