"""QueueDepths (berth/metrics/queues.py): depths read from their owners at scrape time."""

from __future__ import annotations

import gc

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from berth.metrics.queues import QueueDepths


class Owner:
    def __init__(self, depth: int) -> None:
        self.value = depth

    def depth(self) -> int:
        return self.value


def test_depths_are_read_when_scraped_and_summed_over_live_owners() -> None:
    gauge = QueueDepths("t_depth", "test", ("a", "b"))
    one, two = Owner(2), Owner(5)
    gauge.track("a", one.depth)
    gauge.track("a", two.depth)
    assert gauge.depth("a") == 7
    one.value = 0
    assert gauge.depth("a") == 5
    assert gauge.depth("b") == 0


def test_a_dropped_owner_leaves_the_gauge() -> None:
    gauge = QueueDepths("t_depth", "test", ("a",))
    owner = Owner(3)
    gauge.track("a", owner.depth)
    del owner
    gc.collect()
    assert gauge.depth("a") == 0


def test_an_owner_that_fails_does_not_fail_the_scrape() -> None:
    gauge = QueueDepths("t_depth", "test", ("a",))

    def broken() -> int:
        raise RuntimeError("locked up")

    gauge.track("a", broken)
    gauge.track("a", lambda: 4)
    registry = CollectorRegistry()
    registry.register(gauge)
    assert 't_depth{queue="a"} 4.0' in generate_latest(registry).decode()


def test_every_declared_queue_is_exported_even_without_owner() -> None:
    gauge = QueueDepths("t_depth", "test", ("a", "b"))
    registry = CollectorRegistry()
    registry.register(gauge)
    text = generate_latest(registry).decode()
    assert 't_depth{queue="a"} 0.0' in text and 't_depth{queue="b"} 0.0' in text


def test_an_undeclared_queue_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown queue"):
        QueueDepths("t_depth", "test", ("a",)).track("c", lambda: 1)
