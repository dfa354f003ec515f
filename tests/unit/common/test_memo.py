"""berth.common.memo.built_once: one build per key, however the call is written and
however many threads ask at once."""

from __future__ import annotations

import threading

from berth.api.schemas.container import CreateLimits, create_schema
from berth.common.memo import built_once


def test_a_key_is_the_arguments_bound_to_the_signature() -> None:
    builds: list[tuple[int, bool]] = []

    @built_once()
    def build(size: int, legacy: bool = False) -> object:
        builds.append((size, legacy))
        return object()

    first = build(1)
    assert build(1, False) is first
    assert build(1, legacy=False) is first
    assert build(size=1) is first
    assert build(1, True) is not first
    assert builds == [(1, False), (1, True)]


def test_calls_a_signature_of_plain_parameters_cannot_answer_are_bound_in_full() -> None:
    @built_once()
    def plain(size: int, legacy: bool = False) -> tuple[int, bool]:
        return size, legacy

    @built_once()
    def keyword_only(size: int, *, legacy: bool = False) -> tuple[int, bool]:
        return size, legacy

    assert keyword_only(2) is keyword_only(2, legacy=False)
    assert keyword_only(2, legacy=True) == (2, True)
    for wrong in ((), (1, False, 3)):
        try:
            plain(*wrong)
        except TypeError:
            continue
        raise AssertionError(f"plain{wrong} was answered")


def test_callers_that_come_during_a_build_wait_for_it_instead_of_building_again() -> None:
    started, release = threading.Event(), threading.Event()
    builds = 0

    @built_once()
    def build(key: str) -> object:
        nonlocal builds
        builds += 1
        started.set()
        release.wait(10)
        return object()

    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(build("k"))) for _ in range(8)]
    threads[0].start()
    assert started.wait(10)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join(10)
    assert builds == 1
    assert len(results) == 8 and all(r is results[0] for r in results)


def test_the_least_recently_used_key_goes_past_maxsize() -> None:
    builds: list[int] = []

    @built_once(maxsize=2)
    def build(n: int) -> int:
        builds.append(n)
        return n

    build(1), build(2), build(1), build(3)     # 2 is the least recently used
    build(1), build(2)
    assert builds == [1, 2, 3, 2]


def test_the_container_create_schema_is_built_once_however_it_is_asked_for() -> None:
    limits = CreateLimits(max_memory=4096)
    assert create_schema(limits, legacy_command=False) is create_schema(limits)
    assert create_schema(CreateLimits(max_memory=4096)) is create_schema(limits)
    assert create_schema(limits, True) is not create_schema(limits)
