"""The filter scheduler, its filters, and host states built from a real database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import replace

import pytest

from berth.common import exceptions as exc
from berth.db import containers, nodes
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import ZunService
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.requests import NodeReservations
from berth.scheduler import filters, weighers
from berth.scheduler.base import HostState, RequestSpec
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.filters.availability_zone_filter import AvailabilityZoneFilter
from berth.scheduler.filters.compute_filter import ComputeFilter
from berth.scheduler.filters.label_filter import LabelFilter
from berth.scheduler.filters.resource_filter import ResourceFilter
from berth.scheduler.filters.runtime_filter import RuntimeFilter
from berth.scheduler.host_state import load_host_states

ALL_FILTERS = filters.by_name(["ComputeFilter", "AvailabilityZoneFilter", "RuntimeFilter",
                               "ResourceFilter"])


def host(name: str, *, cpus: float = 16.0, memory: int = 4096, cpu_used: float = 0.0,
         mem_used: int = 0, zone: str = "nova", up: bool = True, disabled: bool = False,
         runtimes: tuple[str, ...] = ("runc",), reason: str | None = None, cores: int = 0,
         vcpus_used: int = 0) -> HostState:
    return HostState(hostname=name, cpus=cpus, memory_mib=memory, cpu_used=cpu_used,
                     memory_used_mib=mem_used, runtimes=runtimes, availability_zone=zone,
                     service_up=up, service_disabled=disabled, disabled_reason=reason,
                     cores=cores, vcpus_used=vcpus_used)


def spec(cpu: float = 1.0, memory: int = 512, **kw: object) -> RequestSpec:
    return RequestSpec(cpu=cpu, memory_mib=memory, **kw)  # type: ignore[arg-type]


SPREAD = weighers.by_name(["RAMWeigher", "CPUWeigher"], {})


def scheduler(hosts: Sequence[HostState]) -> FilterScheduler:
    return FilterScheduler(lambda: hosts, ALL_FILTERS, SPREAD)


# -- the scheduler ---------------------------------------------------------------------------

def test_single_node_with_room_is_chosen() -> None:
    assert scheduler([host("n1")]).select_destination(spec()).host == "n1"


def test_by_default_the_node_with_most_free_memory_and_cpu_wins_then_the_name() -> None:
    hosts = [host("a", mem_used=3000), host("b", mem_used=1000), host("c", mem_used=2000)]
    assert scheduler(hosts).select_destination(spec()).host == "b"
    tied = [host("a", cpu_used=2.0), host("b", cpu_used=1.0)]
    assert scheduler(tied).select_destination(spec()).host == "b"
    same = [host("b"), host("a")]
    assert scheduler(same).select_destination(spec()).host == "a"


def test_excluded_nodes_are_passed_over_and_named_in_the_refusal() -> None:
    hosts = [host("a"), host("b", mem_used=1000)]
    assert scheduler(hosts).select_destination(spec(), exclude={"a": "full"}).host == "b"
    with pytest.raises(exc.NoValidHost) as info:
        scheduler(hosts).select_destination(spec(), exclude={"a": "filled by other requests meanwhile", "b": "x"})
    assert "a (filled by other requests meanwhile)" in info.value.msg


def test_the_selection_carries_the_node_as_the_scheduler_saw_it() -> None:
    chosen = host("a", mem_used=10)
    assert scheduler([chosen]).select_destination(spec()).state == chosen


def test_no_registered_node_says_to_start_an_agent() -> None:
    with pytest.raises(exc.NoValidHost) as info:
        scheduler([]).select_destination(spec())
    assert "no compute node has registered" in info.value.msg
    assert "berth serve" in info.value.msg


def test_when_no_node_fits_each_refusal_is_explained() -> None:
    hosts = [host("full", mem_used=4000), host("off", disabled=True, reason="maintenance"),
             host("dead", up=False)]
    with pytest.raises(exc.NoValidHost) as info:
        scheduler(hosts).select_destination(spec(memory=512))
    msg = info.value.msg
    assert "full (ResourceFilter: memory 512 MiB > free 96 MiB)" in msg
    assert "off (ComputeFilter: service disabled (maintenance))" in msg
    assert "dead (ComputeFilter: compute agent is down" in msg


def test_requested_host_restricts_the_choice() -> None:
    hosts = [host("a"), host("b", mem_used=3000)]
    assert scheduler(hosts).select_destination(spec(requested_host="b")).host == "b"
    with pytest.raises(exc.RequestedHostNotFound):
        scheduler(hosts).select_destination(spec(requested_host="zz"))
    with pytest.raises(exc.NoValidHost):
        scheduler(hosts).select_destination(spec(memory=2048, requested_host="b"))


def test_hosts_are_read_at_every_selection() -> None:
    current: list[HostState] = []
    sched = FilterScheduler(lambda: current, ALL_FILTERS)
    with pytest.raises(exc.NoValidHost):
        sched.select_destination(spec())
    current.append(host("late"))
    assert sched.select_destination(spec()).host == "late"


# -- filters ---------------------------------------------------------------------------------

def test_resource_filter() -> None:
    f = ResourceFilter()
    assert f.passes(host("n", cpus=2.0, memory=1024), spec(cpu=2.0, memory=1024)) is None
    assert f.passes(host("n", cpus=2.0, cpu_used=1.5), spec(cpu=1.0)) == "cpu 1 > free 0.5"
    assert f.passes(host("n", memory=1024, mem_used=2048), spec(cpu=0.1, memory=4)) \
        == "memory 4 MiB > free 0 MiB"


def test_resource_filter_counts_whole_vcpus_as_placement_does() -> None:
    """2 cores at ratio 1: two containers of 0.1 cpu fill Placement's 2 VCPUs while
    the cores are only a tenth used."""
    f = ResourceFilter()
    full = host("n", cpus=2.0, cores=2, cpu_used=0.2, vcpus_used=2)
    assert f.passes(full, spec(cpu=0.1)) == \
        "cpu 0.1 takes 1 whole VCPU in Placement, free 0 of 2"
    assert f.passes(host("n", cpus=2.0, cores=2, cpu_used=0.1, vcpus_used=1),
                    spec(cpu=0.1)) is None
    assert f.passes(host("n", cpus=4.0, cores=2, cpu_used=0.5, vcpus_used=2),
                    spec(cpu=1.5)) is None
    assert f.passes(host("n", cpus=4.0, cores=2, cpu_used=0.5, vcpus_used=3),
                    spec(cpu=1.5)) == "cpu 1.5 takes 2 whole VCPU in Placement, free 1 of 4"
    # No allocation is larger than the node's cores (Placement's max_unit).
    assert f.passes(host("n", cpus=32.0, cores=2), spec(cpu=2.5)) == \
        "cpu 2.5 takes 3 VCPU, more than the node's 2 cores"
    assert f.passes(host("n", cpus=32.0, cores=2), spec(cpu=2.0)) is None
    # The request's VCPUs are worked out once, and again for a changed copy.
    assert [spec(cpu=c).vcpus for c in (0.0, 0.1, 1.0, 2.5)] == [1, 1, 1, 3]
    assert replace(spec(cpu=0.5), cpu=3.5).vcpus == 4


def test_resource_filter_refuses_memory_larger_than_placements_largest_allocation() -> None:
    """At ram ratio 1.5 a 4096 MiB node offers 6144 MiB, but Placement allocates at
    most 4096 MiB to one consumer (max_unit = total)."""
    roomy = replace(host("n", memory=6144), memory_max_unit=4096)
    assert ResourceFilter().passes(roomy, spec(cpu=0.1, memory=4096)) is None
    assert ResourceFilter().passes(roomy, spec(cpu=0.1, memory=5000)) == \
        "memory 5000 MiB is more than the node's 4096 MiB (Placement's largest allocation)"


def test_resource_filter_checks_disk_only_when_asked_and_as_placement_does() -> None:
    f = ResourceFilter()
    unable = replace(host("n"), disk_gb=20.0)
    assert f.passes(unable, spec()) is None
    assert f.passes(unable, spec(disk_gb=1)) == \
        "disk 1 GiB asked, the node's engine cannot limit a root filesystem"
    no_disk = replace(host("n"), disk_quota_supported=True)
    assert f.passes(no_disk, spec()) is None
    assert f.passes(no_disk, spec(disk_gb=1)) == \
        "disk 1 GiB asked, the node offers no disk to Placement"
    disk = replace(host("n"), disk_gb=20.0, disk_used_gb=15, disk_max_unit=20,
                   disk_quota_supported=True)
    assert f.passes(disk, spec(disk_gb=5)) is None
    assert f.passes(disk, spec(disk_gb=6)) == "disk 6 GiB > free 5 GiB"


def test_label_filter_matches_every_label_hint_with_the_daemons_labels() -> None:
    f = LabelFilter()
    ssd = replace(host("n"), labels={"disk": "ssd", "zone": "a"})
    assert f.passes(ssd, spec()) is None
    assert f.passes(ssd, spec(hints={"label:disk": "ssd", "other": "x"})) is None
    assert f.passes(ssd, spec(hints={"label:disk": "hdd", "label:gpu": "yes"})) == \
        "has no daemon label disk=hdd, gpu=yes"


def test_a_node_full_in_placement_is_passed_over_for_one_with_whole_vcpus_free() -> None:
    hosts = [host("roomy-but-full", cpus=2.0, cores=2, memory=8192, cpu_used=0.2,
                  vcpus_used=2),
             host("small", cpus=2.0, cores=2, memory=2048)]
    assert scheduler(hosts).select_destination(spec(cpu=0.1)).host == "small"


def test_compute_filter() -> None:
    f = ComputeFilter()
    assert f.passes(host("n"), spec()) is None
    assert f.passes(host("n", disabled=True), spec()) == \
        "service disabled (no reason given)"
    assert "down" in (f.passes(host("n", up=False), spec()) or "")


def test_runtime_filter() -> None:
    f = RuntimeFilter()
    assert f.passes(host("n"), spec()) is None
    assert f.passes(host("n", runtimes=("runc", "kata")), spec(runtime="kata")) is None
    assert f.passes(host("n"), spec(runtime="kata")) == "has no runtime kata (has runc)"


def test_availability_zone_filter_uses_the_default_schedule_zone() -> None:
    assert AvailabilityZoneFilter().passes(host("n", zone="z1"), spec()) is None
    assert AvailabilityZoneFilter().passes(host("n", zone="z1"),
                                           spec(availability_zone="z2")) == \
        "in zone z1, not z2"
    with_default = AvailabilityZoneFilter("z2")
    assert with_default.passes(host("n", zone="z1"), spec()) is not None
    assert with_default.passes(host("n", zone="z1"), spec(availability_zone="z1")) is None


def test_filters_by_name() -> None:
    made = filters.by_name(["ResourceFilter", "AvailabilityZoneFilter"], "z9")
    assert [f.name for f in made] == ["ResourceFilter", "AvailabilityZoneFilter"]
    assert made[1].passes(host("n", zone="z1"), spec()) is not None
    with pytest.raises(ValueError, match="unknown scheduler filter 'RamFilter'"):
        filters.by_name(["RamFilter"])


# -- host states from the database -------------------------------------------------------------

def test_host_states_apply_ratios_and_count_live_usage(db: Database) -> None:
    nodes.upsert_compute_node(db, "n1", {"cpus": 4, "mem_total": 2560, "runtimes": ["runc"]})
    nodes.report_service_up(db, "n1", nodes.COMPUTE_BINARY, "z1")
    for status, cpu, memory in [("Running", 1.0, "512"), ("Creating", 0.5, "256"),
                                ("Error", 8.0, "9999"), ("Deleted", 8.0, "9999")]:
        containers.create(db, {"host": "n1", "status": status, "cpu": cpu, "memory": memory})
    containers.create(db, {"host": None, "status": "Creating", "cpu": 9.0, "memory": "9"})
    [state] = load_host_states(db, NodeReservations(
        reserved_cpus=1, reserved_memory_mb=512, cpu_allocation_ratio=2.0,
        ram_allocation_ratio=1.0), 60, "nova")
    assert state.hostname == "n1"
    assert state.cpus == 6.0 and state.memory_mib == 2048
    assert state.cpu_used == 1.5 and state.memory_used_mib == 768
    assert state.cores == 4 and state.vcpus_used == 2       # 1.0 -> 1, 0.5 -> 1
    assert state.availability_zone == "z1"
    assert state.service_up and not state.service_disabled
    assert state.runtimes == ("runc",)
    assert state.memory_max_unit == 2560 and state.disk_gb == 0.0


def test_host_states_read_disk_labels_and_the_disk_containers_hold(db: Database) -> None:
    nodes.upsert_compute_node(db, "n1", {"cpus": 2, "mem_total": 2048, "disk_total": 50,
                                         "labels": {"disk": "ssd"}})
    nodes.report_service_up(db, "n1", nodes.COMPUTE_BINARY, None)
    containers.create(db, {"host": "n1", "status": "Running", "cpu": 1.0, "memory": "64",
                           "disk": 10})
    [state] = load_host_states(db, NodeReservations(), 60, "nova")
    assert (state.disk_gb, state.disk_used_gb, state.disk_max_unit) == (50.0, 10, 50)
    assert state.labels == {"disk": "ssd"}


def test_host_states_take_each_nodes_reported_inventory_over_the_apis_ratios(
        db: Database, report_inventory: Callable[[str, dict[str, Inventory]], None]) -> None:
    """An agent reports its capacity with its own [compute] ratios and reservations;
    the API's options stand in only for a node that reported none (OpenStack
    Placement). At ratio 64 two cores hold 128 VCPUs, not the API's 32."""
    for host_name in ("reported", "silent"):
        nodes.upsert_compute_node(db, host_name, {"cpus": 2, "mem_total": 4096})
        nodes.report_service_up(db, host_name, nodes.COMPUTE_BINARY, None)
    report_inventory("reported", {
        VCPU: Inventory(total=2, reserved=0, max_unit=2, allocation_ratio=64.0),
        MEMORY_MB: Inventory(total=4096, reserved=1024, max_unit=4096, allocation_ratio=1.0)})
    states = {h.hostname: h for h in load_host_states(db, NodeReservations(), 60, "nova")}
    assert (states["reported"].cpus, states["reported"].cores,
            states["reported"].memory_mib) == (128.0, 2, 3072)
    assert (states["silent"].cpus, states["silent"].cores,
            states["silent"].memory_mib) == (32.0, 2, int((4096 - 512) * 1.5))


def test_a_node_without_a_recent_heartbeat_is_down(db: Database) -> None:
    nodes.upsert_compute_node(db, "n1", {"cpus": 1, "mem_total": 1024})
    nodes.report_service_up(db, "n1", nodes.COMPUTE_BINARY, None)
    nodes.upsert_compute_node(db, "ghost", {"cpus": 1, "mem_total": 1024})
    with db.writer() as s:
        svc = s.query(ZunService).filter_by(host="n1").one()
        svc.last_seen_up = utcnow() - dt.timedelta(seconds=600)
    states = {h.hostname: h for h in load_host_states(db, NodeReservations(), 60, "nova")}
    assert not states["n1"].service_up
    assert not states["ghost"].service_up            # never reported at all
    assert states["ghost"].availability_zone == "nova"
    with pytest.raises(exc.NoValidHost) as info:
        FilterScheduler(lambda: list(states.values()), ALL_FILTERS).select_destination(spec())
    assert "compute agent is down" in info.value.msg


def test_with_a_random_source_the_best_of_equal_weight_is_chosen_at_random() -> None:
    import random

    tied = [host("a", mem_used=1000), host("b", mem_used=1000), host("c", mem_used=1000),
            host("d", mem_used=2000)]
    sched = FilterScheduler(lambda: tied, ALL_FILTERS, SPREAD, rng=random.Random(7))
    chosen = [sched.select_destination(spec()) for _ in range(60)]
    assert {c.host for c in chosen} == {"a", "b", "c"}          # never the fuller d
    for c in chosen:       # the others stay ranked behind it, d last
        assert sorted(h.hostname for h in c.alternatives) == sorted({"a", "b", "c", "d"}
                                                                    - {c.host})
        assert c.alternatives[-1].hostname == "d"
    # without one: by name, as before
    assert scheduler(tied).select_destination(spec()).host == "a"


def test_a_selection_carries_the_best_runners_up_best_first_not_the_whole_fleet() -> None:
    from berth.scheduler.filter_scheduler import RUNNERS_UP_CHECKED

    hosts = [host(f"n{i:02d}", mem_used=100 * (i // 2)) for i in range(30)]  # pairs tie
    chosen = scheduler(hosts).select_destination(spec())
    assert chosen.host == "n00"
    assert [h.hostname for h in chosen.alternatives] == [
        f"n{i:02d}" for i in range(1, RUNNERS_UP_CHECKED + 1)]
    full = [host(f"f{i}", mem_used=4096) for i in range(3)]
    with pytest.raises(exc.NoValidHost, match=r"f0 \(ResourceFilter: memory 512 MiB > free "
                                              r"0 MiB\); f1 \(ResourceFilter"):
        scheduler(full).select_destination(spec())


# -- a large fleet: a share of the nodes weighed -------------------------------------------

def test_the_share_of_nodes_weighed_adapts_to_the_fleet_as_kube_schedulers() -> None:
    from berth.scheduler.filter_scheduler import nodes_to_weigh

    assert nodes_to_weigh(3) == 3 and nodes_to_weigh(100) == 100      # every node
    assert nodes_to_weigh(101) == 100                       # never fewer than 100
    assert nodes_to_weigh(1_000) == 420                     # 50 - 8 = 42 %
    assert nodes_to_weigh(10_000) == 500                    # at least 5 %
    assert nodes_to_weigh(1_000, 10) == 100
    assert nodes_to_weigh(1_000, 60) == 600
    assert nodes_to_weigh(1_000, 100) == 1_000


class Counting(ResourceFilter):
    """ResourceFilter that counts the nodes it is asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def passes(self, host: HostState, spec: RequestSpec) -> str | None:
        self.asked.append(host.hostname)
        return super().passes(host, spec)


def test_a_large_fleet_is_weighed_in_turns_of_its_share_and_every_node_in_turn() -> None:
    fleet = [host(f"n{i:04d}") for i in range(1_000)]
    counting = Counting()
    sched = FilterScheduler(lambda: fleet, [counting], SPREAD)
    first = sched.select_destination(spec())
    assert len(counting.asked) == 420 and counting.asked[0] == "n0000"
    assert first.host == "n0000"                     # all equal: the first by name
    counting.asked.clear()
    second = sched.select_destination(spec())
    assert counting.asked[0] == "n0420" and second.host == "n0420"   # the next turn
    weighed: set[str] = set()
    for _ in range(3):
        counting.asked.clear()
        sched.select_destination(spec())
        weighed.update(counting.asked)
    assert len(weighed) == 1_000                     # every node came round


def test_of_the_share_weighed_the_best_wins_and_a_full_fleet_is_refused_whole() -> None:
    import random

    fleet = [host(f"n{i:04d}", mem_used=2048) for i in range(1_000)]
    fleet[7] = host("n0007", mem_used=0)                   # the emptiest node
    counting = Counting()
    sched = FilterScheduler(lambda: fleet, [counting], SPREAD, rng=random.Random(3),
                            weighed_percentage=100)
    assert sched.select_destination(spec()).host == "n0007"   # 100: every node weighed
    assert len(counting.asked) == 1_000
    full = [host(f"f{i:04d}", mem_used=4096) for i in range(500)]
    with pytest.raises(exc.NoValidHost) as refused:
        FilterScheduler(lambda: full, ALL_FILTERS, SPREAD,
                        rng=random.Random(3)).select_destination(spec())
    assert refused.value.msg.count("ResourceFilter") == 500   # each node's reason


def test_with_a_random_source_each_share_begins_at_random() -> None:
    import random

    fleet = [host(f"n{i:04d}") for i in range(1_000)]
    counting = Counting()
    sched = FilterScheduler(lambda: fleet, [counting], SPREAD, rng=random.Random(11))
    starts = set()
    for _ in range(5):
        counting.asked.clear()
        chosen = sched.select_destination(spec())
        assert len(counting.asked) == 420 and chosen.host in counting.asked
        starts.add(counting.asked[0])
    assert len(starts) == 5


# -- filters with nothing to check for a request --------------------------------------------

@pytest.mark.parametrize("made,skipped,checked", [
    (lambda: AvailabilityZoneFilter(), spec(), spec(availability_zone="az2")),
    (lambda: RuntimeFilter(), spec(), spec(runtime="kata")),
    (lambda: LabelFilter(), spec(hints={"other": "x"}), spec(hints={"label:ssd": "1"})),
])
def test_a_filter_with_nothing_to_check_for_the_request_is_asked_about_no_node(
        made: Callable[[], object], skipped: RequestSpec, checked: RequestSpec) -> None:
    asked: list[str] = []
    inner = made()

    class Asking:
        name = "Asking"

        def skips(self, s: RequestSpec) -> bool:
            return inner.skips(s)  # type: ignore[attr-defined, no-any-return]

        def passes(self, h: HostState, s: RequestSpec) -> str | None:
            asked.append(h.hostname)
            return None

    sched = FilterScheduler(lambda: [host("a"), host("b")], [Asking()], SPREAD)
    sched.select_destination(skipped)
    assert asked == []
    sched.select_destination(checked)
    assert sorted(asked) == ["a", "b"]


def test_a_default_zone_is_checked_when_the_request_names_none() -> None:
    zoned = FilterScheduler(lambda: [host("a", zone="az1"), host("b", zone="az2")],
                            [AvailabilityZoneFilter("az2")], SPREAD)
    assert not AvailabilityZoneFilter("az2").skips(spec())
    assert zoned.select_destination(spec()).host == "b"


def test_compute_and_resource_filters_check_every_request() -> None:
    assert not ComputeFilter().skips(spec()) and not ResourceFilter().skips(spec())
    sched = FilterScheduler(lambda: [host("a", up=False), host("b", mem_used=4000)],
                            [ComputeFilter(), ResourceFilter()], SPREAD)
    with pytest.raises(exc.NoValidHost, match="agent is down.*memory 512 MiB > free 96"):
        sched.select_destination(spec())


def test_with_a_random_source_runners_up_are_best_first_their_ties_from_a_random_point(
        ) -> None:
    import random

    from berth.scheduler.filter_scheduler import RUNNERS_UP_CHECKED

    hosts = [host(f"n{i:02d}", mem_used=100 * (i // 10)) for i in range(30)]  # 3 tiers
    sched = FilterScheduler(lambda: hosts, ALL_FILTERS, SPREAD, rng=random.Random(5))
    firsts = set()
    for _ in range(40):
        chosen = sched.select_destination(spec())
        names = [h.hostname for h in chosen.alternatives]
        assert chosen.host < "n10" and len(names) == RUNNERS_UP_CHECKED
        assert chosen.host not in names and len(set(names)) == len(names)
        assert all(n < "n10" for n in names)         # the best tier before any other
        firsts.add(names[0])
    assert len(firsts) > 3                           # not the same runner-up every time
