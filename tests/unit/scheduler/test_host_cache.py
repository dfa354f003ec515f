"""The scheduler's view of the nodes is read at most every max_age seconds, counts at
once what this process placed, and learns a node's usage as the room check read it
under the node's lock (an injected clock; real HostStates)."""

from __future__ import annotations

from berth.scheduler.base import HostState, RequestSpec
from berth.scheduler.host_cache import HostStateCache


def node(name: str, memory_used: int = 0) -> HostState:
    return HostState(hostname=name, cpus=8.0, memory_mib=4096, cpu_used=0.0,
                     memory_used_mib=memory_used, runtimes=("runc",),
                     availability_zone="nova", service_up=True, service_disabled=False)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_nodes_are_read_again_only_when_the_view_is_older_than_max_age() -> None:
    reads: list[int] = []
    clock = Clock()
    cache = HostStateCache(lambda: reads.append(1) or [node("n1")], 1.0, clock)
    cache()
    clock.now += 0.5
    cache()
    assert len(reads) == 1
    clock.now += 0.6
    cache()
    assert len(reads) == 2


def test_max_age_zero_reads_every_time() -> None:
    reads: list[int] = []
    cache = HostStateCache(lambda: reads.append(1) or [node("n1")], 0.0, Clock())
    cache()
    cache()
    assert len(reads) == 2


def test_a_placement_counts_at_once_and_a_fresh_read_under_lock_replaces_the_usage() -> None:
    cache = HostStateCache(lambda: [node("n1"), node("n2")], 1.0, Clock())
    cache()
    cache.placed("n1", RequestSpec(cpu=0.5, memory_mib=256), cache.generation)
    by_name = {h.hostname: h for h in cache()}
    assert (by_name["n1"].memory_used_mib, by_name["n1"].cpu_used, by_name["n1"].vcpus_used) \
        == (256, 0.5, 1)
    assert by_name["n2"].memory_used_mib == 0
    cache.learn(node("n2", memory_used=1024))       # another API process filled it
    assert {h.hostname: h.memory_used_mib for h in cache()} == {"n1": 256, "n2": 1024}
    cache.learn(node("n3", memory_used=1))          # not in the view: ignored
    assert len(cache()) == 2


def test_a_placement_chosen_on_an_older_read_is_not_counted_twice() -> None:
    clock = Clock()
    cache = HostStateCache(lambda: [node("n1")], 1.0, clock)
    cache()
    chosen_on = cache.generation
    clock.now += 2                      # read again before the insert's placed()
    cache()
    cache.placed("n1", RequestSpec(cpu=0.5, memory_mib=256), chosen_on)
    assert cache()[0].memory_used_mib == 0


def test_a_refusal_is_made_on_a_fresh_read_not_on_the_cached_view() -> None:
    from dataclasses import replace

    from berth.scheduler import filters
    from berth.scheduler.filter_scheduler import FilterScheduler

    current = [replace(node("n1"), service_disabled=True)]
    reads: list[int] = []
    cache = HostStateCache(lambda: reads.append(1) or list(current), 60.0, Clock())
    sched = FilterScheduler(cache, filters.by_name(["ComputeFilter"]))
    cache()                                           # the view: n1 disabled
    current[0] = node("n1")                           # enabled since, by an operator
    assert sched.select_destination(RequestSpec(cpu=0.1, memory_mib=64)).host == "n1"
    assert len(reads) == 2                            # read again before refusing


def test_a_placement_in_flight_counts_until_released_and_then_only_if_placed() -> None:
    cache = HostStateCache(lambda: [node("n1"), node("n2")], 1.0, Clock())
    cache()
    one = RequestSpec(cpu=0.5, memory_mib=256)
    cache.hold("n1", one)
    cache.hold("n1", one)
    by_name = {h.hostname: h for h in cache()}
    assert (by_name["n1"].memory_used_mib, by_name["n1"].cpu_used, by_name["n1"].vcpus_used) \
        == (512, 1.0, 2)
    cache.learn(node("n1", memory_used=1024))       # read under the lock: not yet in it
    assert {h.hostname: h.memory_used_mib for h in cache()} == {"n1": 1536, "n2": 0}
    cache.release("n1", one)                        # refused: counted no more
    assert {h.hostname: h.memory_used_mib for h in cache()} == {"n1": 1280, "n2": 0}
    cache.placed("n1", one, cache.generation)       # committed, then released
    cache.release("n1", one)
    assert {h.hostname: h.memory_used_mib for h in cache()} == {"n1": 1280, "n2": 0}
    cache.release("n1", one)                        # a release too many is ignored
    assert cache()[0].memory_used_mib == 1280


def test_concurrent_requests_of_one_process_choose_different_nodes() -> None:
    from berth.scheduler import filters, weighers
    from berth.scheduler.filter_scheduler import FilterScheduler

    cache = HostStateCache(lambda: [node("n1"), node("n2"), node("n3")], 60.0, Clock())
    sched = FilterScheduler(cache, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))
    one = RequestSpec(cpu=0.5, memory_mib=256)
    first = sched.select_destination(one)
    with sched.holding(first, one):
        second = sched.select_destination(one)
        with sched.holding(second, one):
            third = sched.select_destination(one)
    assert sorted([first.host, second.host, third.host]) == ["n1", "n2", "n3"]
    assert all(h.memory_used_mib == 0 for h in cache())
