"""Claims: the arithmetic of fitting a container on a node, and ResourceTracker on a
real SQLite database (usage is derived from the container rows)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from berth.common import exceptions as exc
from berth.compute.claims import Capacity, ResourceTracker, Usage, request_of, shortfall
from berth.db import containers, migrate, nodes
from berth.db.engine import Database

HOST = "node1"


# -- pure arithmetic ----------------------------------------------------------------------------

def test_capacity_applies_reservations_then_ratios() -> None:
    cap = Capacity.of(cpus=4, mem_total_mib=4096, reserved_cpus=1, reserved_mem_mib=512,
                      cpu_ratio=16.0, ram_ratio=1.5)
    assert cap == Capacity(cpus=48.0, memory_mib=5376)


def test_capacity_never_goes_negative() -> None:
    cap = Capacity.of(cpus=1, mem_total_mib=256, reserved_cpus=2, reserved_mem_mib=512,
                      cpu_ratio=16.0, ram_ratio=1.5)
    assert cap == Capacity(cpus=0.0, memory_mib=0)


def test_shortfall_is_none_when_it_fits_exactly() -> None:
    cap = Capacity(cpus=2.0, memory_mib=1024)
    assert shortfall(cap, Usage(1.5, 512), Usage(0.5, 512)) is None


def test_shortfall_names_cpu() -> None:
    why = shortfall(Capacity(cpus=2.0, memory_mib=1024), Usage(1.5, 0), Usage(1.0, 10))
    assert why is not None
    assert "cpu: requested 1, free 0.5 of 2" in why
    assert "memory" not in why


def test_shortfall_names_memory_and_both() -> None:
    cap = Capacity(cpus=2.0, memory_mib=1024)
    why = shortfall(cap, Usage(0, 1000), Usage(0.1, 512))
    assert why == "memory: requested 512 MiB, free 24 MiB of 1024 MiB"
    both = shortfall(cap, Usage(3.0, 2048), Usage(1.0, 1))
    assert both is not None and "cpu" in both and "memory" in both
    # Over-committed already: "free" is reported as 0, never negative.
    assert "free 0 of 2" in both and "free 0 MiB" in both


def test_shortfall_tolerates_float_rounding_on_cpu() -> None:
    cap = Capacity(cpus=0.3, memory_mib=100)
    used = Usage(0.1 + 0.1, 0)          # 0.20000000000000004
    assert shortfall(cap, used, Usage(0.1, 0)) is None


@pytest.mark.parametrize("cpu, memory, expected", [
    (1.0, "512", Usage(1.0, 512)),
    (None, None, Usage(0.0, 0)),
    (0.5, 256, Usage(0.5, 256)),
    (2, "2g", Usage(2.0, 0)),
])
def test_request_of(cpu: float | None, memory: str | int | None, expected: Usage) -> None:
    assert request_of(cpu, memory) == expected


# -- ResourceTracker ----------------------------------------------------------------------------

@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    url = f"sqlite:///{tmp_path / 'berth.sqlite'}"
    migrate.upgrade(url)
    database = Database(url)
    nodes.upsert_compute_node(database, HOST, {"cpus": 2, "mem_total": 2048})
    yield database
    database.dispose()


@pytest.fixture
def tracker(db: Database) -> ResourceTracker:
    t = ResourceTracker(db, HOST)
    t.set_capacity(Capacity(cpus=2.0, memory_mib=1024))
    return t


def new_row(db: Database, cpu: float = 1.0, memory: str = "512", **values: object) -> str:
    values.setdefault("status", "Creating")
    return containers.create(db, dict(values, cpu=cpu, memory=memory)).uuid


def test_claim_places_the_row_on_the_node_and_publishes_usage(
        db: Database, tracker: ResourceTracker) -> None:
    uuid = new_row(db, cpu=1.0, memory="512")
    tracker.claim(uuid, 1.0, "512")
    assert containers.get_by_uuid(db, uuid).host == HOST
    node = nodes.get_compute_node(db, HOST)
    assert (node.cpu_used, node.mem_used, node.running_containers) == (1.0, 512, 1)


def test_claim_refuses_what_does_not_fit_and_leaves_the_row_unplaced(
        db: Database, tracker: ResourceTracker) -> None:
    first = new_row(db, memory="768")
    tracker.claim(first, 1.0, "768")
    second = new_row(db, memory="512")
    with pytest.raises(exc.ResourcesUnavailable) as info:
        tracker.claim(second, 1.0, "512")
    assert "memory: requested 512 MiB, free 256 MiB" in info.value.msg
    assert containers.get_by_uuid(db, second).host is None


def test_a_row_that_already_names_the_host_is_not_counted_twice(
        db: Database, tracker: ResourceTracker) -> None:
    # The API writes the scheduler's choice into ``host`` before the agent claims:
    # the claim must not see the container's own row as someone else's usage.
    uuid = new_row(db, cpu=2.0, memory="1024", host=HOST)
    tracker.claim(uuid, 2.0, "1024")
    assert containers.get_by_uuid(db, uuid).host == HOST


def test_error_and_deleted_rows_hold_nothing(db: Database, tracker: ResourceTracker) -> None:
    new_row(db, cpu=2.0, memory="1024", host=HOST, status="Error")
    new_row(db, cpu=2.0, memory="1024", host=HOST, status="Deleted")
    uuid = new_row(db, cpu=2.0, memory="1024")
    tracker.claim(uuid, 2.0, "1024")


def test_setting_error_releases_the_claim(db: Database, tracker: ResourceTracker) -> None:
    failed = new_row(db, cpu=2.0, memory="1024")
    tracker.claim(failed, 2.0, "1024")
    nxt = new_row(db, cpu=2.0, memory="1024")
    with pytest.raises(exc.ResourcesUnavailable):
        tracker.claim(nxt, 2.0, "1024")
    containers.update_(db, failed, {"status": "Error", "status_reason": "pull failed"})
    tracker.claim(nxt, 2.0, "1024")
    tracker.publish_usage()
    assert nodes.get_compute_node(db, HOST).mem_used == 1024


def test_no_capacity_yet_is_a_clear_refusal(db: Database) -> None:
    tracker = ResourceTracker(db, HOST)
    assert tracker.capacity is None
    uuid = new_row(db)
    with pytest.raises(exc.ResourcesUnavailable) as info:
        tracker.claim(uuid, 1.0, "512")
    assert "not reported its resources" in info.value.msg


def test_concurrent_claims_never_overcommit(db: Database) -> None:
    tracker = ResourceTracker(db, HOST)
    tracker.set_capacity(Capacity(cpus=100.0, memory_mib=1000))
    uuids = [new_row(db, cpu=0.1, memory="100") for _ in range(20)]
    won: list[str] = []
    refused: list[str] = []
    start = threading.Barrier(len(uuids), timeout=30)

    def claim(uuid: str) -> None:
        start.wait()
        try:
            tracker.claim(uuid, 0.1, "100")
            won.append(uuid)
        except exc.ResourcesUnavailable:
            refused.append(uuid)

    threads = [threading.Thread(target=claim, args=(u,)) for u in uuids]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(won) == 10 and len(refused) == 10
    assert containers.usage_on_host(db, HOST)[1] == 1000


def test_with_a_delay_claims_share_one_publish_made_after_them(db: Database) -> None:
    tracker = ResourceTracker(db, HOST, publish_delay=0.5)
    tracker.set_capacity(Capacity(cpus=4.0, memory_mib=4096))
    calls = []
    real = tracker.publish_usage

    def counted() -> None:
        real()
        calls.append(1)                      # once the row is written

    tracker.publish_usage = counted  # type: ignore[method-assign]
    for _ in range(3):
        tracker.claim(new_row(db, cpu=1.0, memory="512"), 1.0, "512")
    assert calls == []                       # not in the claims' path
    deadline = time.monotonic() + 5
    while not calls and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.6)
    assert calls == [1]                      # one publish for the three claims
    node = nodes.get_compute_node(db, HOST)
    assert (node.cpu_used, node.mem_used, node.running_containers) == (3.0, 1536, 3)
    tracker.claim(new_row(db, cpu=1.0, memory="512"), 1.0, "512")
    deadline = time.monotonic() + 5
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert nodes.get_compute_node(db, HOST).mem_used == 2048


def test_bursts_share_one_publishing_thread_that_stop_ends(db: Database) -> None:
    tracker = ResourceTracker(db, HOST, publish_delay=0.05)
    tracker.set_capacity(Capacity(cpus=8.0, memory_mib=8192))
    before = set(threading.enumerate())     # other tests' trackers may still publish
    for burst in range(1, 4):
        tracker.claim(new_row(db, cpu=1.0, memory="512"), 1.0, "512")
        deadline = time.monotonic() + 5
        while nodes.get_compute_node(db, HOST).mem_used != 512 * burst and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        assert nodes.get_compute_node(db, HOST).mem_used == 512 * burst
    publishers = [t for t in set(threading.enumerate()) - before
                  if t.name == "publish-usage"]
    assert len(publishers) == 1              # the same thread served the three bursts
    tracker.stop()
    assert not publishers[0].is_alive()
    tracker.claim(new_row(db, cpu=1.0, memory="512"), 1.0, "512")   # no publish, no error
    time.sleep(0.15)
    assert nodes.get_compute_node(db, HOST).mem_used == 1536
