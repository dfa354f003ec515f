"""berth.common.memory: start-up's objects out of the collector's walks, its garbage
collected first (freeze_started); what glibc's heaps hold free given back once enough
is (FreedMemory)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from berth.common.memory import FreedMemory, freed_in_heaps, freeze_started


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


needs_mallinfo2 = pytest.mark.skipif(freed_in_heaps() is None,
                                     reason="needs glibc 2.33 or newer (mallinfo2)")


def _free_a_burst(blocks: int = 2000, size: int = 8192) -> None:
    """Allocate ``blocks`` malloc-sized buffers (under the mmap threshold, so in the
    heap) and free all of them but the last, which keeps the free run off the heap's
    top: glibc does not give that back by itself."""
    burst = [bytearray(size) for _ in range(blocks)]
    last = burst[-1]
    del burst
    _free_a_burst.kept = last   # type: ignore[attr-defined]


@needs_mallinfo2
def test_a_burst_freed_is_given_back_once() -> None:
    freed = FreedMemory(at_least=1 << 20, spacing=0)
    freed.return_freed()                    # what the test process held before
    _free_a_burst()
    assert (freed_in_heaps() or 0) >= 8 << 20
    assert freed.return_freed() is True
    # Nothing grew since: the heaps are not looked through again.
    assert freed.return_freed() is False


@needs_mallinfo2
def test_less_than_the_threshold_free_is_left_alone() -> None:
    freed = FreedMemory(at_least=1 << 40, spacing=0)
    _free_a_burst()
    assert freed.return_freed() is False


@needs_mallinfo2
def test_the_heaps_are_looked_at_once_a_spacing() -> None:
    now = [0.0]
    freed = FreedMemory(at_least=1 << 20, spacing=30, clock=lambda: now[0])
    freed.return_freed()
    _free_a_burst()
    now[0] = 29.0
    assert freed.return_freed() is False     # not looked at: too soon
    now[0] = 30.0
    assert freed.return_freed() is True
