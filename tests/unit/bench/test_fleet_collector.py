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
    rest, us = statements.statements_and_collector(tally.snapshot())
    assert rest == {"berth.compute.flows.common:hand_over": 1}
    assert us == clock.microseconds() >= 0
    assert statements.statements_and_collector({"x": 2}) == ({"x": 2}, 0)


def test_the_tally_carries_the_process_cpu_and_the_workers_shares_come_from_it() -> None:
    tally = statements.StatementTally()
    snapshot = tally.snapshot()
    assert snapshot[statements.PROCESS_CPU] > 0
    assert statements.statements_and_collector(snapshot) == ({}, 0)
    before = {10: {statements.PROCESS_CPU: 1_000}, 11: {statements.PROCESS_CPU: 5_000}}
    after = {10: {statements.PROCESS_CPU: 4_000}, 11: {statements.PROCESS_CPU: 6_000},
             12: {statements.PROCESS_CPU: 1_000}}     # a worker started between them
    assert statements.cpu_shares(before, after) == [0.6, 0.2, 0.2]
    assert statements.cpu_shares(after, after) == []
