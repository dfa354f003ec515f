"""LastInspected: an event observed (or, with a shared clock, stamped by the engine)
before the last recorded inspect began is covered; a later one is not."""

from __future__ import annotations

from berth.compute.last_inspected import LastInspected, Mark


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_events_observed_before_the_inspect_are_covered_and_later_ones_are_not() -> None:
    seen = LastInspected(clock=Clock())
    assert not seen.covers("u1", 99.0)          # nothing recorded yet
    seen.record("u1", Mark(100.0, 5_000))
    assert seen.covers("u1", 99.5)              # "create" observed before the inspect
    assert not seen.covers("u1", 100.0)         # observed as the inspect began
    assert not seen.covers("u1", 100.2)         # a "die" after it: must be synced
    assert not seen.covers("u2", 99.0)          # another container
    assert seen.covered == 1


def test_the_engine_stamp_counts_only_when_the_engine_shares_the_clock() -> None:
    remote = LastInspected(clock=Clock())
    local = LastInspected(clock=Clock(), engine_clock_shared=True)
    for seen in (remote, local):
        seen.record("u1", Mark(100.0, 5_000))
    # "start" delivered after the inspect began, but stamped by the engine before it
    assert not remote.covers("u1", 100.1, engine_at_ns=4_999)
    assert local.covers("u1", 100.1, engine_at_ns=4_999)
    # stamped after the inspect began: synced
    assert not local.covers("u1", 100.1, engine_at_ns=5_000)
    assert not local.covers("u1", 100.1, engine_at_ns=None)     # a relist's event


def test_an_older_inspect_does_not_move_the_mark_back() -> None:
    seen = LastInspected(clock=Clock())
    seen.record("u1", Mark(105.0, 0))
    seen.record("u1", Mark(101.0, 0))           # a slower sync finishing later
    assert seen.covers("u1", 104.0)


def test_forget_makes_every_event_count_again() -> None:
    seen = LastInspected(clock=Clock())
    seen.record("u1", Mark(100.0, 0))
    seen.forget("u1")
    assert not seen.covers("u1", 50.0)


def test_old_entries_are_pruned() -> None:
    clock = Clock()
    seen = LastInspected(horizon=10.0, clock=clock)
    seen.record("old", Mark(100.0, 0))
    clock.t = 200.0
    for i in range(600):
        seen.record(f"u{i}", Mark(200.0, 0))
    assert not seen.covers("old", 50.0)
    assert seen.covers("u599", 150.0)


def test_a_listing_in_the_state_the_inspect_saw_is_covered() -> None:
    from berth.runtime.base import ContainerState, RunState

    seen = LastInspected(clock=Clock())
    seen.record("u1", Mark(100.0, 0), ContainerState(status=RunState.RUNNING, exit_code=0))
    seen.record("u2", Mark(100.0, 0), ContainerState(status=RunState.EXITED, exit_code=3))
    assert seen.covers("u1", 110.0, listed=("running", None))
    assert not seen.covers("u1", 110.0, listed=("exited", 0))       # it died since
    assert seen.covers("u2", 110.0, listed=("exited", 3))
    assert not seen.covers("u2", 110.0, listed=("exited", 137))     # ran and exited again
    assert not seen.covers("u2", 110.0)                              # a re-inspection


def test_the_engines_that_share_the_agents_clock() -> None:
    from berth.compute.agent import _engine_is_local
    from berth.runtime.docker.driver import DockerRuntime
    from berth.runtime.simulated.engine import SimulatedRuntime

    assert _engine_is_local(DockerRuntime("unix:///var/run/docker.sock"))
    assert _engine_is_local(SimulatedRuntime())          # in the agent's own process
    assert not _engine_is_local(DockerRuntime("tcp://10.0.0.5:2375"))
