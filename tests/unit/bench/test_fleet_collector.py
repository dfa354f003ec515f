"""bench.fleet.collector: the garbage collector's CPU, counted in the statement tally."""

from __future__ import annotations

import gc

from bench.fleet import statements
from bench.fleet.collector import CollectorClock


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_collections_add_their_cpu_time() -> None:
    clock = CollectorClock.install()
    try:
        assert clock.microseconds() == 0
        garbage = [_Cycle() for _ in range(50_000)]
        del garbage
        gc.collect()
        first = clock.microseconds()
        assert first > 0
        gc.collect()
        assert clock.microseconds() > first
    finally:
        gc.callbacks.remove(clock._on_collection)


def test_the_tally_carries_the_collectors_figure_apart() -> None:
    clock = CollectorClock()
    tally = statements.StatementTally(clock)
    tally.count("berth.compute.flows.common:hand_over")
    clock._on_collection("start", {})
    clock._on_collection("stop", {})
    rest, us = statements.split_collector(tally.snapshot())
    assert rest == {"berth.compute.flows.common:hand_over": 1}
    assert us == clock.microseconds() >= 0
    assert statements.split_collector({"x": 2}) == ({"x": 2}, 0)
