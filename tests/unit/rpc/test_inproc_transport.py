"""The in-process transport: dispatch, the JSON round trip, timeouts and unknown
targets behave as the RabbitMQ transport would."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from berth.common import exceptions as exc
from berth.rpc.inproc import InProcessTransport


class Recorder:
    """An endpoint that records what it was given."""

    RPC_METHODS = frozenset({"container_stop", "container_show", "slow_call", "boom",
                             "give_tuple"})

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, dict[str, Any]]] = []
        self.release = threading.Event()

    def container_stop(self, context: Any, **kwargs: Any) -> None:
        self.calls.append(("container_stop", context, kwargs))

    def container_show(self, context: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("container_show", context, kwargs))
        return {"uuid": kwargs["container"]["uuid"], "status": "Running"}

    def slow_call(self, context: Any) -> str:
        self.release.wait(10)
        return "late"

    def boom(self, context: Any) -> None:
        raise exc.ContainerNotFound(container="c1")

    def give_tuple(self, context: Any) -> tuple[int, int]:
        return (1, 2)

    def not_exposed(self, context: Any) -> None:  # not in RPC_METHODS
        raise AssertionError("must not be reachable over RPC")


@pytest.fixture
def transport() -> Iterator[InProcessTransport]:
    t = InProcessTransport(call_workers=4)
    yield t
    t.cleanup()


@pytest.fixture
def endpoint(transport: InProcessTransport) -> Iterator[Recorder]:
    ep = Recorder()
    server = transport.serve("node1", ep)
    server.start()
    yield ep
    ep.release.set()
    server.stop()


def test_cast_dispatches_with_context_separate_from_the_arguments(
        transport: InProcessTransport, endpoint: Recorder) -> None:
    ctx = {"request_id": "req-1", "is_admin": True}
    assert transport.cast("node1", "container_stop", context=ctx,
                          container={"uuid": "u1"}, timeout=5) is None
    assert endpoint.calls == [("container_stop", ctx, {"container": {"uuid": "u1"},
                                                       "timeout": 5})]


def test_cast_arguments_are_copies_after_a_json_round_trip(
        transport: InProcessTransport, endpoint: Recorder) -> None:
    payload = {"uuid": "u1", "labels": {"a": "1"}, "ports": (80, 443)}
    transport.cast("node1", "container_stop", context={}, container=payload)
    _, _, kwargs = endpoint.calls[0]
    got = kwargs["container"]
    assert got == {"uuid": "u1", "labels": {"a": "1"}, "ports": [80, 443]}
    assert got is not payload and got["labels"] is not payload["labels"]


@pytest.mark.parametrize("bad", [dt.datetime(2024, 1, 1), {1, 2}, object(), b"bytes"])
def test_a_payload_that_is_not_json_is_refused_before_dispatch(
        transport: InProcessTransport, endpoint: Recorder, bad: object) -> None:
    with pytest.raises(TypeError):
        transport.cast("node1", "container_stop", context={}, container={"x": bad})
    with pytest.raises(TypeError):
        transport.call("node1", "container_show", 5, context={}, container={"uuid": bad})
    assert endpoint.calls == []


def test_call_returns_the_answer(transport: InProcessTransport, endpoint: Recorder) -> None:
    answer = transport.call("node1", "container_show", 5, context={"request_id": "r"},
                            container={"uuid": "u9"})
    assert answer == {"uuid": "u9", "status": "Running"}
    assert endpoint.calls[0][1] == {"request_id": "r"}


def test_call_answer_goes_through_json_too(transport: InProcessTransport,
                                           endpoint: Recorder) -> None:
    assert transport.call("node1", "give_tuple", 5, context={}) == [1, 2]


def test_call_reraises_the_agents_berth_error(transport: InProcessTransport,
                                              endpoint: Recorder) -> None:
    with pytest.raises(exc.ContainerNotFound):
        transport.call("node1", "boom", 5, context={})


def test_call_that_does_not_answer_in_time_is_rpc_timeout(
        transport: InProcessTransport, endpoint: Recorder) -> None:
    with pytest.raises(exc.RPCTimeout) as info:
        transport.call("node1", "slow_call", 0.2, context={})
    assert "slow_call" in info.value.msg and "node1" in info.value.msg
    assert isinstance(info.value, exc.RPCError)


def test_unknown_host_is_rpc_error_for_cast_and_call(transport: InProcessTransport,
                                                     endpoint: Recorder) -> None:
    with pytest.raises(exc.RPCError) as info:
        transport.cast("elsewhere", "container_stop", context={})
    assert "elsewhere" in info.value.msg
    with pytest.raises(exc.RPCError):
        transport.call("elsewhere", "container_show", 5, context={}, container={"uuid": "u"})
    assert endpoint.calls == []


@pytest.mark.parametrize("method", ["no_such_method", "not_exposed", "__init__"])
def test_unknown_or_unexposed_method_is_rpc_error(transport: InProcessTransport,
                                                  endpoint: Recorder, method: str) -> None:
    with pytest.raises(exc.RPCError) as info:
        transport.cast("node1", method, context={})
    assert method in info.value.msg
    with pytest.raises(exc.RPCError):
        transport.call("node1", method, 5, context={})


def test_stopped_server_no_longer_receives(transport: InProcessTransport) -> None:
    ep = Recorder()
    server = transport.serve("node2", ep)
    server.start()
    transport.cast("node2", "container_stop", context={})
    server.stop()
    with pytest.raises(exc.RPCError):
        transport.cast("node2", "container_stop", context={})
    assert len(ep.calls) == 1


def test_stopping_an_old_server_keeps_its_replacement(transport: InProcessTransport) -> None:
    old, new = Recorder(), Recorder()
    old_server = transport.serve("node3", old)
    old_server.start()
    new_server = transport.serve("node3", new)
    new_server.start()
    old_server.stop()
    transport.cast("node3", "container_stop", context={})
    assert len(new.calls) == 1 and old.calls == []
    new_server.stop()


def test_check_fails_until_an_agent_serves_and_after_it_stops() -> None:
    """/readyz's rpc check in berth serve: ready only while the agent's server is up."""
    transport = InProcessTransport(call_workers=1)
    try:
        with pytest.raises(exc.RPCError, match="No compute agent serves"):
            transport.check()
        server = transport.serve("node1", Recorder())
        server.start()
        transport.check()
        server.stop()
        with pytest.raises(exc.RPCError):
            transport.check()
    finally:
        transport.cleanup()
