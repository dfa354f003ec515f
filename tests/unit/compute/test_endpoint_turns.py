"""EndpointBase._in_turn: a call that runs on the container's worker (container_update,
container_commit) answers within the API's RPC timeout, whatever the worker does
(issue 24 item 6: the commit endpoint waited with no bound, so an RPC thread stayed
held after the API had given up)."""

from __future__ import annotations

import threading
import time

import pytest

from berth.common import exceptions as exc
from berth.compute import endpoints
from berth.compute.endpoints import EndpointBase
from berth.compute.workers import ContainerWorkers


class Endpoint(EndpointBase):
    def __init__(self, workers: ContainerWorkers) -> None:
        self._workers = workers


@pytest.fixture
def workers() -> ContainerWorkers:
    w = ContainerWorkers(4)
    yield w
    w.stop(wait=False)


@pytest.fixture(autouse=True)
def short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoints, "TURN_WAIT_SECONDS", 0.3)
    monkeypatch.setattr(endpoints, "ANSWER_WAIT_SECONDS", 0.6)


def test_the_answer_and_the_error_come_back(workers: ContainerWorkers) -> None:
    ep = Endpoint(workers)
    assert ep._in_turn("c1", "commit", lambda x: x * 2, 21) == 42
    with pytest.raises(exc.Conflict, match="boom"):
        ep._in_turn("c1", "commit", _raise, exc.Conflict("boom"))


def test_a_call_that_never_gets_its_turn_never_runs(workers: ContainerWorkers) -> None:
    ep = Endpoint(workers)
    release = threading.Event()
    workers.submit("c1", release.wait, 5)
    ran: list[int] = []
    with pytest.raises(exc.Conflict, match="could not begin"):
        ep._in_turn("c1", "commit", ran.append, 1)
    release.set()
    assert workers.wait_idle(5)
    assert ran == []


def test_a_call_that_runs_too_long_frees_the_caller_and_goes_on(
        workers: ContainerWorkers) -> None:
    ep = Endpoint(workers)
    done = threading.Event()

    def slow_commit() -> str:
        time.sleep(1.0)
        done.set()
        return "image"

    began = time.monotonic()
    with pytest.raises(exc.ServiceUnavailable, match="still running"):
        ep._in_turn("c1", "commit", slow_commit)
    assert time.monotonic() - began < 0.9          # answered before the work ended
    assert done.wait(5)                             # and the work went on


def _raise(err: BaseException) -> None:
    raise err
