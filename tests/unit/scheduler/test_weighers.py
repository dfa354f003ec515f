"""The weighers and the weighing: spread by default, pack with negative multipliers."""

from __future__ import annotations

import pytest

from berth.scheduler import filters, weighers
from berth.scheduler.base import HostState, RequestSpec
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.weighers.cpu_weigher import CPUWeigher
from berth.scheduler.weighers.ram_weigher import RAMWeigher

FILTERS = filters.by_name(["ComputeFilter", "ResourceFilter"])


def host(name: str, *, mem_used: int = 0, cpu_used: float = 0.0, memory: int = 4096,
         cpus: float = 8.0) -> HostState:
    return HostState(hostname=name, cpus=cpus, memory_mib=memory, cpu_used=cpu_used,
                     memory_used_mib=mem_used, runtimes=("runc",), availability_zone="nova",
                     service_up=True, service_disabled=False)


SPEC = RequestSpec(cpu=1.0, memory_mib=512)


def ranked(hosts: list[HostState], ram: float = 1.0, cpu: float = 1.0) -> list[str]:
    made = weighers.by_name(["RAMWeigher", "CPUWeigher"],
                            {"RAMWeigher": ram, "CPUWeigher": cpu})
    return [h.hostname for _, h in weighers.weigh(hosts, SPEC, made)]


def test_each_weigher_scores_what_the_node_has_free() -> None:
    n, m = host("n", mem_used=1000, cpu_used=2.5), host("m", memory=8192, cpus=2.0)
    assert RAMWeigher().scores([n, m], SPEC) == [3096.0, 8192.0]
    assert CPUWeigher().scores([n, m], SPEC) == [5.5, 2.0]


def test_spread_puts_the_emptiest_node_first() -> None:
    hosts = [host("full", mem_used=3000, cpu_used=6), host("half", mem_used=2000,
                                                          cpu_used=4), host("empty")]
    assert ranked(hosts) == ["empty", "half", "full"]


def test_pack_puts_the_fullest_node_that_passed_the_filters_first() -> None:
    hosts = [host("full", mem_used=3000, cpu_used=6), host("half", mem_used=2000,
                                                          cpu_used=4), host("empty")]
    assert ranked(hosts, ram=-1.0, cpu=-1.0) == ["full", "half", "empty"]


def test_scores_are_scaled_so_that_memory_in_mib_does_not_drown_cpu_in_cores() -> None:
    """a has a little more memory free, b much more cpu: with equal multipliers the
    larger relative difference wins; a multiplier tips the balance back."""
    hosts = [host("a", mem_used=1000, cpu_used=7.0), host("b", mem_used=1010)]
    assert ranked(hosts)[0] == "b"
    assert ranked(hosts, ram=1.0, cpu=0.0)[0] == "a"
    assert ranked(hosts, ram=1.0, cpu=0.0005)[0] == "a"


def test_equal_weights_fall_back_to_the_host_name() -> None:
    assert ranked([host("c"), host("a"), host("b")]) == ["a", "b", "c"]
    assert ranked([host("b", mem_used=9), host("a")], ram=0.0, cpu=0.0) == ["a", "b"]


def test_a_burst_from_one_scheduler_spreads_over_every_node() -> None:
    """Each create counts the ones before it (the rows placed already): six
    containers on three equal nodes land two on each."""
    placed: dict[str, int] = {"n1": 0, "n2": 0, "n3": 0}

    def hosts() -> list[HostState]:
        return [host(name, mem_used=512 * count, cpu_used=float(count))
                for name, count in placed.items()]

    sched = FilterScheduler(hosts, FILTERS, weighers.by_name(["RAMWeigher", "CPUWeigher"], {}))
    for _ in range(6):
        placed[sched.select_destination(SPEC).host] += 1
    assert placed == {"n1": 2, "n2": 2, "n3": 2}


def test_a_burst_packs_one_node_until_it_is_full_with_negative_multipliers() -> None:
    placed: dict[str, int] = {"n1": 0, "n2": 0}

    def hosts() -> list[HostState]:
        return [host(name, mem_used=1024 * count, cpu_used=float(count))
                for name, count in placed.items()]

    sched = FilterScheduler(hosts, FILTERS, weighers.by_name(
        ["RAMWeigher", "CPUWeigher"], {"RAMWeigher": -1.0, "CPUWeigher": -1.0}))
    order = []
    for _ in range(6):
        chosen = sched.select_destination(RequestSpec(cpu=1.0, memory_mib=1024)).host
        order.append(chosen)
        placed[chosen] += 1
    # n1 first (by name), then kept until its 4096 MiB are taken, then n2.
    assert order == ["n1", "n1", "n1", "n1", "n2", "n2"]


def test_unknown_weigher_names_are_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown scheduler weigher 'IoOpsWeigher'.*"
                                         r"CPUWeigher"):
        weighers.by_name(["IoOpsWeigher"], {})
