"""Readiness (berth/metrics/health.py): which check failed, bounded in time, cached."""

from __future__ import annotations

import threading

from berth.common import exceptions as exc
from berth.metrics.health import Readiness


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ok() -> None:
    return None


def test_all_checks_answering_is_ready_with_200() -> None:
    report = Readiness({"database": ok, "docker": ok}).report()
    assert report.ready and report.status_code == 200
    assert report.body() == {"status": "ready", "checks": {"database": "ok", "docker": "ok"},
                             "failed": []}


def test_the_body_names_the_check_that_failed_and_why() -> None:
    def docker() -> None:
        raise ConnectionError("no socket")

    def rpc() -> None:
        raise exc.RPCError("No message broker of transport_url answers.")

    report = Readiness({"database": ok, "rpc": rpc, "docker": docker}).report()
    assert report.status_code == 503 and not report.ready
    body = report.body()
    assert body["status"] == "not ready"
    assert body["failed"] == ["rpc", "docker"]
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["rpc"] == "No message broker of transport_url answers."
    assert body["checks"]["docker"] == "ConnectionError: no socket"


def test_a_hung_check_reads_no_answer_after_the_timeout_and_is_not_started_twice() -> None:
    release = threading.Event()
    entered = threading.Event()
    calls = []

    def hung() -> None:
        calls.append(1)
        entered.set()
        release.wait(10)

    readiness = Readiness({"docker": hung, "database": ok}, timeout=0.05, max_age=0)
    try:
        first = readiness.report()
        assert first.failed == ["docker"]
        assert first.checks["docker"].startswith("no answer for")
        second = readiness.report()
        assert second.failed == ["docker"]
        # The check's thread may not have run yet on a loaded machine (CI): wait for
        # it, and give a second run, if one was started, the time to show.
        assert entered.wait(10)
        release.wait(0.3)
        assert len(calls) == 1           # the earlier run is still the one in flight
    finally:
        release.set()
        readiness.close()


def test_a_report_is_reused_for_max_age_seconds() -> None:
    clock = Clock()
    calls = []
    readiness = Readiness({"database": lambda: calls.append(1)}, max_age=1.0, clock=clock)
    readiness.report()
    clock.now += 0.5
    readiness.report()
    assert len(calls) == 1
    clock.now += 0.6
    readiness.report()
    assert len(calls) == 2


def test_a_check_added_later_counts_from_the_next_report() -> None:
    readiness = Readiness({"database": ok}, max_age=60)
    assert readiness.report().ready

    def docker() -> None:
        raise ConnectionError("gone")

    readiness.add("docker", docker)
    assert readiness.report().failed == ["docker"]
    assert readiness.names == ["database", "docker"]
