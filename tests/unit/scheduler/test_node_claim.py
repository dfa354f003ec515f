"""The API's placement check on a real (SQLite) database: a row is written onto the
chosen node only if the container still fits there, counting the rows written since
the scheduler read the nodes; otherwise the scheduler chooses again without it. The
same race between two processes on PostgreSQL and MariaDB is in
tests/integration/fleet/test_api_workers.py."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

from berth.api.operations import placing
from berth.common import exceptions as exc
from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.requests import NodeReservations
from berth.scheduler import filters, weighers
from berth.scheduler.base import RequestSpec
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.host_state import load_host_states

NO_RESERVATION = NodeReservations(reserved_memory_mb=0, ram_allocation_ratio=1.0)
SPEC = RequestSpec(cpu=0.5, memory_mib=1536)


def no_quota(conn: Any) -> None:
    return None


@pytest.fixture
def stale(db: Database) -> Any:
    """A scheduler that reads the nodes once (as every API process did before the
    others wrote): n1 offers 2048 MiB, n2 1600 MiB."""
    for name, memory in (("n1", 2048), ("n2", 1600)):
        nodes.upsert_compute_node(db, name, {"cpus": 4, "mem_total": memory})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, None)
    snapshot = load_host_states(db, NO_RESERVATION, 60, "nova")
    sched = FilterScheduler(lambda: snapshot, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))
    return SimpleNamespace(scheduler=sched, placement=None)


def place(db: Database, state: Any) -> str:
    def insert(host: str, guard: placing.Guard) -> Any:
        return containers.create(db, {"host": host, "status": "Creating", "cpu": 0.5,
                                      "memory": "1536"}, guard=guard)

    selection, row = placing.insert_placed(state, SPEC, state.scheduler.select_destination(SPEC),
                                           no_quota, insert)
    assert row.host == selection.host
    return selection.host


def test_a_node_filled_since_the_scheduler_read_it_is_passed_over(db: Database,
                                                                  stale: Any) -> None:
    assert place(db, stale) == "n1"
    # The snapshot still shows n1 empty and chooses it again; the insert sees it full.
    assert stale.scheduler.select_destination(SPEC).host == "n1"
    assert place(db, stale) == "n2"
    with pytest.raises(exc.NoValidHost, match="filled by other requests"):
        place(db, stale)
    assert [c.memory for c in containers.list_by_host(db, "n1")] == ["1536"]
    assert [c.memory for c in containers.list_by_host(db, "n2")] == ["1536"]


def test_a_refused_insert_writes_nothing(db: Database, stale: Any) -> None:
    place(db, stale)
    place(db, stale)
    before = containers.usage_on_host(db, "n1"), containers.usage_on_host(db, "n2")
    with pytest.raises(exc.NoValidHost):
        place(db, stale)
    assert (containers.usage_on_host(db, "n1"), containers.usage_on_host(db, "n2")) == before


def test_without_resource_filter_there_is_no_room_check(db: Database, stale: Any) -> None:
    """The operator turned ResourceFilter off: the API counts no room, and the agent's
    claim and Placement are what refuse (the check would otherwise call a node that
    never had room "filled meanwhile")."""
    snapshot = stale.scheduler.select_destination(SPEC).state
    blind = FilterScheduler(lambda: [snapshot], filters.by_name(["ComputeFilter"]), [])
    state = SimpleNamespace(scheduler=blind, placement=None)
    assert [place(db, state) for _ in range(3)] == ["n1", "n1", "n1"]


def fresh_scheduler(db: Database, multiplier: float = 1.0) -> Any:
    sched = FilterScheduler(lambda: load_host_states(db, NO_RESERVATION, 60, "nova"),
                            filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {"RAMWeigher": multiplier}))
    return SimpleNamespace(scheduler=sched, placement=None)


def place_on(db: Database, state: Any, selection: Any, spec: RequestSpec) -> str:
    def insert(host: str, guard: placing.Guard) -> Any:
        return containers.create(db, {"host": host, "status": "Creating", "cpu": spec.cpu,
                                      "memory": str(spec.memory_mib)}, guard=guard)

    return placing.insert_placed(state, spec, selection, no_quota, insert)[0].host


def nodes_up(db: Database, *names: str, cpus: int = 4, memory: int = 4096) -> None:
    for name in names:
        nodes.upsert_compute_node(db, name, {"cpus": cpus, "mem_total": memory})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, None)


def counting_passes(scheduler: FilterScheduler) -> list[Any]:
    """The passes over every node ``scheduler`` makes from now on."""
    passes: list[Any] = []
    select = scheduler.select_destination

    def counted(*args: Any, **kwargs: Any) -> Any:
        passes.append(args)
        return select(*args, **kwargs)

    scheduler.select_destination = counted  # type: ignore[method-assign]
    return passes


def test_a_choice_that_others_made_worse_goes_to_the_better_node_without_another_pass(
        db: Database) -> None:
    """Two requests read three empty nodes and both choose n1 (a concurrent burst);
    the second, under n1's lock, sees n1 hold the first and goes to n2 instead of
    piling onto n1, tried as read there: no second pass over every node (at 1,000
    nodes, the API's dearest part of a create)."""
    nodes_up(db, "n1", "n2", "n3")
    state = fresh_scheduler(db)
    small = RequestSpec(cpu=0.1, memory_mib=256)
    first, second = (state.scheduler.select_destination(small) for _ in range(2))
    assert first.host == second.host == "n1"
    assert place_on(db, state, first, small) == "n1"
    passes = counting_passes(state.scheduler)
    assert place_on(db, state, second, small) == "n2"
    assert passes == []
    assert [c.host for c in containers.list_by_host(db, "n2")] == ["n2"]


def test_packing_keeps_its_choice_when_others_filled_the_node(db: Database) -> None:
    nodes_up(db, "n1", "n2")
    state = fresh_scheduler(db, multiplier=-1.0)
    small = RequestSpec(cpu=0.1, memory_mib=256)
    first, second = (state.scheduler.select_destination(small) for _ in range(2))
    assert place_on(db, state, first, small) == place_on(db, state, second, small) == "n1"


def test_a_better_node_without_room_does_not_take_the_choice_over(db: Database) -> None:
    """A runner-up that outweighs the chosen node (more free cpu) but has no room left
    for the container (others filled its memory since the read) does not make the
    chosen node "no longer the best": the container stays where it fits, without a
    refused try on the full node and another pass over every node."""
    nodes_up(db, "n1")
    nodes_up(db, "n2", cpus=16)
    sched = FilterScheduler(lambda: load_host_states(db, NO_RESERVATION, 60, "nova"),
                            filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["CPUWeigher"], {}))
    state = SimpleNamespace(scheduler=sched, placement=None)
    spec = RequestSpec(cpu=0.1, memory_mib=1024)
    read_empty = sched.select_destination(spec)
    assert read_empty.host == "n2" and read_empty.state is not None
    containers.create(db, {"host": "n2", "status": "Running", "cpu": 0.1, "memory": "3584"})
    on_n1 = sched.select_destination(spec)
    assert on_n1.host == "n1"
    # As a request that read n2 empty weighs n1 against it under n1's lock.
    weighed_against_n2 = replace(on_n1, alternatives=(read_empty.state,))
    passes = counting_passes(sched)
    assert place_on(db, state, weighed_against_n2, spec) == "n1"
    assert passes == []
