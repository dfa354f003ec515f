"""berth.common.memory.freeze_started: start-up's objects out of the collector's walks,
its garbage collected first."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from berth.common.memory import freeze_started


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()     # the test process's objects back in the collector's care


def _in_generations(obj: object) -> bool:
    return any(o is obj for o in gc.get_objects())


def test_kept_objects_leave_the_collectors_walks(unfrozen: None) -> None:
    kept = _Node()
    assert _in_generations(kept)
    frozen = freeze_started()
    assert frozen == gc.get_freeze_count() > 0
    assert not _in_generations(kept)
    made_after = _Node()
    assert _in_generations(made_after)


def test_start_up_garbage_is_collected_not_frozen(unfrozen: None) -> None:
    gc.disable()      # nothing collects the cycle before freeze_started does
    try:
        first, second = _Node(), _Node()
        first.other, second.other = second, first
        gone = weakref.ref(first)
        del first, second
        freeze_started()
        assert gone() is None
    finally:
        gc.enable()
