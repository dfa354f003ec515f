"""The per-node check of a placement (the create's image check) runs on every node the
placement tries, not only on the scheduler's first choice: a create scheduled again
onto another node (its first choice was filled meanwhile) is checked there too, on a
real (SQLite) database."""

from __future__ import annotations

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
    """A scheduler reading the nodes once: n1 (2048 MiB) is always its first choice."""
    for name, memory in (("n1", 2048), ("n2", 1600)):
        nodes.upsert_compute_node(db, name, {"cpus": 4, "mem_total": memory})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, None)
    snapshot = load_host_states(db, NO_RESERVATION, 60, "nova")
    sched = FilterScheduler(lambda: snapshot, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))
    return SimpleNamespace(scheduler=sched, placement=None)


def place(db: Database, state: Any, check_host: Any) -> str:
    def insert(host: str, guard: placing.Guard) -> Any:
        return containers.create(db, {"host": host, "status": "Creating", "cpu": 0.5,
                                      "memory": "1536"}, guard=guard)

    selection, _ = placing.insert_placed(state, SPEC, state.scheduler.select_destination(SPEC),
                                         no_quota, insert, check_host=check_host)
    return selection.host


def test_a_create_scheduled_again_is_checked_on_the_node_it_lands_on(
        db: Database, stale: Any) -> None:
    checked: list[str] = []
    assert place(db, stale, checked.append) == "n1"
    assert checked == ["n1"]
    checked.clear()
    # n1 is full now, but the stale read chooses it first: the placement moves to n2,
    # and n2 is asked too.
    assert place(db, stale, checked.append) == "n2"
    assert checked == ["n1", "n2"]


def test_a_node_refused_by_the_check_after_a_reschedule_gets_no_row(
        db: Database, stale: Any) -> None:
    place(db, stale, lambda host: None)

    def only_n1_has_it(host: str) -> None:
        if host != "n1":
            raise exc.ImageNotFound(f"host {host} does not have it")

    with pytest.raises(exc.ImageNotFound, match="host n2"):
        place(db, stale, only_n1_has_it)
    assert containers.list_by_host(db, "n2") == []


def test_a_placement_is_counted_by_the_scheduler_while_it_is_written(
        db: Database) -> None:
    from berth.scheduler.host_cache import HostStateCache

    for name in ("n1", "n2"):
        nodes.upsert_compute_node(db, name, {"cpus": 4, "mem_total": 4096})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, None)
    cache = HostStateCache(lambda: load_host_states(db, NO_RESERVATION, 60, "nova"), 60.0)
    sched = FilterScheduler(cache, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))
    state = SimpleNamespace(scheduler=sched, placement=None)
    cache()                                # the view read before the first choice
    seen_meanwhile: list[str] = []

    def insert(host: str, guard: placing.Guard) -> Any:
        # another request of this process choosing now does not take the same node
        seen_meanwhile.append(sched.select_destination(SPEC).host)
        return containers.create(db, {"host": host, "status": "Creating", "cpu": 0.5,
                                      "memory": "1536"}, guard=guard)

    selection, _ = placing.insert_placed(state, SPEC, sched.select_destination(SPEC),
                                         no_quota, insert)
    assert seen_meanwhile == ["n2"] and selection.host == "n1"
    # committed: counted once (placed), the hold released
    assert {h.hostname: h.memory_used_mib for h in cache()} == {"n1": 1536, "n2": 0}


def test_a_refused_placement_is_counted_no_more(db: Database, stale: Any) -> None:
    from berth.scheduler.host_cache import HostStateCache

    cache = HostStateCache(lambda: load_host_states(db, NO_RESERVATION, 60, "nova"), 60.0)
    sched = FilterScheduler(cache, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))

    def insert(host: str, guard: placing.Guard) -> Any:
        raise exc.ImageNotFound("no")

    with pytest.raises(exc.ImageNotFound):
        placing.insert_placed(SimpleNamespace(scheduler=sched, placement=None), SPEC,
                              sched.select_destination(SPEC), no_quota, insert)
    assert all(h.memory_used_mib == 0 for h in cache())
