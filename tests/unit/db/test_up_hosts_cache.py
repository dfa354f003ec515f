"""``nodes.UpHosts``: the services are read again at most once per ``ttl``, by one
thread at a time; the others answer from the read being replaced meanwhile, and
wait only when there is none to answer from."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from berth.db import nodes


def test_one_thread_reads_again_and_the_others_answer_from_the_last_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    reading, release = threading.Event(), threading.Event()

    def read(db: Any, down_time: int) -> set[str]:
        reads.append(down_time)
        if len(reads) == 1:
            return {"n1"}
        if len(reads) == 2:             # the second read hangs until released
            reading.set()
            assert release.wait(5)
        return {"n2"}

    monkeypatch.setattr(nodes, "up_compute_hosts", read)
    up = nodes.UpHosts(db=None, down_time=60, ttl=0.0)   # type: ignore[arg-type]
    assert up("n1")                                      # the first read
    slow = threading.Thread(target=up, args=("n2",))
    slow.start()                                         # the second read, hanging
    assert reading.wait(5)
    assert [up("n1") for _ in range(3)] == [True] * 3    # answered from the first
    assert len(reads) == 2
    release.set()
    slow.join(5)
    assert up("n2") and not up("n1")                     # ttl 0: each call reads again


def test_after_forget_a_caller_waits_for_the_read(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = iter([{"n1"}, set()])
    monkeypatch.setattr(nodes, "up_compute_hosts", lambda db, down_time: next(answers))
    up = nodes.UpHosts(db=None, down_time=60, ttl=3600.0)   # type: ignore[arg-type]
    assert up("n1")
    up.forget()                      # the API forced the service down
    assert not up("n1")


def test_a_read_begun_before_a_forget_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    reading, release = threading.Event(), threading.Event()
    answers = iter([{"n1"}, set()])

    def read(db: Any, down_time: int) -> set[str]:
        answer = next(answers)
        if answer:                      # the first read hangs until released
            reading.set()
            assert release.wait(5)
        return answer

    monkeypatch.setattr(nodes, "up_compute_hosts", read)
    up = nodes.UpHosts(db=None, down_time=60, ttl=3600.0)   # type: ignore[arg-type]
    slow = threading.Thread(target=up, args=("n1",))
    slow.start()
    assert reading.wait(5)
    up.forget()                         # n1 forced down while the read was on its way
    release.set()
    slow.join(5)
    assert not up("n1")                 # read again: the first read was not kept



def counted(monkeypatch: pytest.MonkeyPatch, answer: set[str], ttl: float
            ) -> tuple[nodes.UpHosts, list[int]]:
    """UpHosts whose own reads of the services answer ``answer``, and the list that
    counts them."""
    reads: list[int] = []
    monkeypatch.setattr(nodes, "up_compute_hosts",
                        lambda db, down_time: reads.append(1) or answer)
    return nodes.UpHosts(db=None, down_time=60, ttl=ttl), reads   # type: ignore[arg-type]


def test_what_another_read_of_the_services_found_spares_a_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    up, reads = counted(monkeypatch, {"n9"}, 3600.0)
    up.learn(frozenset({"n1"}), time.monotonic())
    assert up("n1") and not up("n2") and reads == []
    up.learn(frozenset({"n2"}), time.monotonic() - 10)     # older than what it knows
    assert up("n1") and not up("n2")
    up.learn(frozenset({"n2"}), time.monotonic())          # newer
    assert up("n2") and not up("n1") and reads == []


def test_another_read_begun_before_a_forget_is_not_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    up, reads = counted(monkeypatch, set(), 3600.0)
    began = time.monotonic()
    up.forget()                          # n1 forced down while that read was on its way
    up.learn(frozenset({"n1"}), began)
    assert not up("n1") and reads == [1]     # read again, not the learned set


def test_another_read_serves_twice_the_ttl_an_own_read_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    up, reads = counted(monkeypatch, {"own"}, 1.0)
    up.learn(frozenset({"learned"}), time.monotonic() - 1.5)
    assert up("learned") and reads == []          # 1.5 s old: still serves
    up.forget()
    up.learn(frozenset({"learned"}), time.monotonic())       # after the forget
    up.learn(frozenset({"old"}), time.monotonic() - 2.5)     # older: not kept
    assert up("learned") and reads == []
    up = nodes.UpHosts(db=None, down_time=60, ttl=1.0)   # type: ignore[arg-type]
    up.learn(frozenset({"learned"}), time.monotonic() - 2.5)
    assert up("own") and reads == [1]             # 2.5 s old: read again
    assert up("own") and reads == [1]             # an own read serves its ttl
