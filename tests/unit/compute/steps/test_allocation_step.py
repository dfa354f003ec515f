"""The allocation step (``berth.compute.steps.allocation``) against the embedded
Placement over a real SQLite database (the node's provider: 4 VCPU, 8192 MB): what it
writes, what it takes over from the API, the one wording of each failure, and a
release that is idempotent and touches nothing it did not acquire."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.agent_deps import HOST, agent_deps
from support.fake_runtime import FakeRuntime

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.steps.allocation import Allocation
from berth.compute.steps.failures import StepFailed, placement_unanswered, resources_unavailable
from berth.db import containers, nodes
from berth.db.engine import Database
from berth.db.models import Container
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import container_resources


@pytest.fixture
def provider(db: Database) -> str:
    node = nodes.upsert_compute_node(db, HOST, {"cpus": 4, "mem_total": 8192})
    ledger = EmbeddedPlacement(db)
    ledger.ensure_provider(node.uuid, HOST)
    ledger.set_inventory(node.uuid, {VCPU: Inventory(total=4),
                                     MEMORY_MB: Inventory(total=8192)})
    return node.uuid


@pytest.fixture
def deps(db: Database) -> Iterator[AgentDeps]:
    d = agent_deps(db, FakeRuntime(), placement=EmbeddedPlacement(db))
    yield d
    d.overlap.shutdown(wait=True)


def row(deps: AgentDeps, cpu: float = 1.0, host: str | None = HOST) -> Container:
    return containers.create(deps.db, {"status": "Creating", "project_id": "p1",
                                       "cpu": cpu, "memory": "64", "host": host})


def ledger(deps: AgentDeps) -> EmbeddedPlacement:
    assert isinstance(deps.placement, EmbeddedPlacement)
    return deps.placement


def test_acquire_records_the_resources_and_release_removes_them_once(
        deps: AgentDeps, provider: str) -> None:
    r = row(deps)
    step = Allocation(deps, r)
    step.acquire()
    assert ledger(deps).get_allocation(r.uuid) == {provider: container_resources(1.0, "64",
                                                                               None)}
    step.release()
    step.release()
    assert ledger(deps).get_allocation(r.uuid) == {}


def test_a_release_without_acquire_leaves_an_allocation_alone(deps: AgentDeps,
                                                              provider: str) -> None:
    r = row(deps)
    Allocation(deps, r).acquire()
    Allocation(deps, r).release()           # another step that never acquired
    assert ledger(deps).get_allocation(r.uuid) != {}


def test_resources_that_do_not_fit_are_refused_in_the_claims_wording(
        deps: AgentDeps, provider: str) -> None:
    r = row(deps, cpu=6)
    step = Allocation(deps, r)
    with pytest.raises(StepFailed) as failed:
        step.acquire()
    assert isinstance(failed.value.error, exc.ResourcesUnavailable)
    assert failed.value.reason.startswith("ResourcesUnavailable: ")
    assert failed.value.reason == resources_unavailable(HOST, failed.value.error.kwargs["reason"])
    assert failed.value.clear_host
    step.release()
    assert ledger(deps).get_allocation(r.uuid) == {}


def test_placement_failing_is_worded_as_unanswered(db: Database, provider: str) -> None:
    # A node Placement has no provider for: ComputeNodeNotFound from the lookup.
    d = agent_deps(db, FakeRuntime(), "ghost", placement=EmbeddedPlacement(db))
    r = row(d, host="ghost")
    with pytest.raises(StepFailed) as failed:
        Allocation(d, r).acquire()
    assert isinstance(failed.value.error, exc.ComputeNodeNotFound)
    assert failed.value.reason == placement_unanswered("ghost", failed.value.error.msg)


def test_overlapped_the_allocation_is_joined_later(deps: AgentDeps, provider: str) -> None:
    r = row(deps)
    step = Allocation(deps, r, overlapped=True)
    step.acquire()
    step.join()
    assert step.answered() and not step.held
    assert ledger(deps).get_allocation(r.uuid) != {}
    step.release()
    assert ledger(deps).get_allocation(r.uuid) == {}


def test_overlapped_a_refusal_is_raised_by_join(deps: AgentDeps, provider: str) -> None:
    r = row(deps, cpu=6)
    step = Allocation(deps, r, overlapped=True)
    step.acquire()                           # begun only
    with pytest.raises(StepFailed):
        step.join()
    step.release()
    assert ledger(deps).get_allocation(r.uuid) == {}


def test_the_allocation_the_api_made_is_taken_over_and_released_on_failure(
        deps: AgentDeps, provider: str) -> None:
    r = row(deps)
    ledger(deps).allocate(r.uuid, provider, container_resources(1.0, "64", None), "p1", None)
    generation = ledger(deps).get_provider(provider).generation    # type: ignore[union-attr]
    step = Allocation(deps, r, overlapped=True)
    step.acquire()
    assert step.held and step.answered()
    assert ledger(deps).get_provider(provider).generation == generation   # type: ignore[union-attr]
    step.release()
    assert ledger(deps).get_allocation(r.uuid) == {}


def test_without_placement_the_step_does_nothing(db: Database) -> None:
    d = agent_deps(db, FakeRuntime())
    step = Allocation(d, row(d), overlapped=True)
    step.acquire()
    step.join()
    step.release()
    assert step.answered() and not step.held


def _counting_provider_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = nodes.provider_uuid_of

    def counted(db: Database, host: str) -> str:
        reads.append(host)
        return real(db, host)

    monkeypatch.setattr(nodes, "provider_uuid_of", counted)
    return reads


def test_the_node_provider_is_read_once_for_the_allocations_the_api_made(
        deps: AgentDeps, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _counting_provider_reads(monkeypatch)
    for _ in range(3):
        r = row(deps)
        ledger(deps).allocate(r.uuid, provider, container_resources(1.0, "64", None), "p1",
                              None)
        step = Allocation(deps, r, overlapped=True)
        step.acquire()
        assert step.held
    assert reads == [HOST]


def test_a_provider_that_changed_is_read_again_and_allocated_on(
        deps: AgentDeps, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node moved to a shared provider after the memo was made: a create the API
    placed on the new provider is found held there, and one it did not is allocated
    there, never on the remembered one."""
    first = row(deps)
    Allocation(deps, first, overlapped=True).acquire()    # remembers ``provider``
    assert deps.provider.known(deps.db, HOST) == (provider, True)
    shared = "5d0c4a36-7f39-4a9e-9a7e-3c1c8a0b6f11"
    ledger(deps).ensure_provider(shared, "shared")
    ledger(deps).set_inventory(shared, {VCPU: Inventory(total=4),
                                        MEMORY_MB: Inventory(total=8192)})
    nodes.set_provider(deps.db, HOST, shared)
    reads = _counting_provider_reads(monkeypatch)

    placed = row(deps)
    ledger(deps).allocate(placed.uuid, shared, container_resources(1.0, "64", None), "p1",
                          None)
    step = Allocation(deps, placed, overlapped=True)
    step.acquire()
    assert step.held and reads == [HOST]

    unplaced = row(deps)
    step = Allocation(deps, unplaced, overlapped=True)
    step.acquire()
    step.join()
    assert not step.held
    assert ledger(deps).get_allocation(unplaced.uuid) == {
        shared: container_resources(1.0, "64", None)}
    # not held: the provider is read again before the allocation, as before the memo
    assert reads == [HOST, HOST]


def test_what_the_first_write_read_is_taken_for_the_answer_without_asking_placement(
        deps: AgentDeps, provider: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``held_now`` (read with the create's first statement): the allocation it shows
    is taken over, and Placement is not asked; one it does not show is made."""
    asked: list[str] = []
    real = ledger(deps).holds
    monkeypatch.setattr(ledger(deps), "holds",
                        lambda consumer, *a: asked.append(consumer) or real(consumer, *a))
    wants = container_resources(1.0, "64", None)
    placed = row(deps)
    ledger(deps).allocate(placed.uuid, provider, wants, "p1", None)
    step = Allocation(deps, placed, overlapped=True,
                      held_now={(provider, rc): n for rc, n in wants.items()})
    step.acquire()
    assert step.held and asked == []

    unplaced = row(deps)
    step = Allocation(deps, unplaced, overlapped=True, held_now={})
    step.acquire()
    step.join()
    assert not step.held and asked == []
    assert ledger(deps).get_allocation(unplaced.uuid) == {provider: wants}
