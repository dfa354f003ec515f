"""ComputeAPI (berth/rpc/client.py) times every cast and call it sends, by method,
kind and result; a host that is down is refused before anything is sent or timed."""

from __future__ import annotations

from typing import Any

import pytest
from support.metrics import sample

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db.models import Container
from berth.rpc.client import ComputeAPI


class Transport:
    """Answers every call with ``answer``, or raises ``error``."""

    def __init__(self) -> None:
        self.error: Exception | None = None
        self.sent: list[str] = []

    def cast(self, host: str, method: str, **kwargs: Any) -> None:
        self.sent.append(method)
        if self.error is not None:
            raise self.error

    def call(self, host: str, method: str, timeout: float, **kwargs: Any) -> Any:
        self.sent.append(method)
        if self.error is not None:
            raise self.error
        return {"uuid": "u1"}


def row(host: str = "node1") -> Container:
    return Container(uuid="u1", host=host, status="Running", project_id="p", user_id="u")


def count(method: str, kind: str, result: str) -> float:
    return sample("berth_rpc_client_duration_seconds_count", method=method, kind=kind,
                  result=result)


@pytest.fixture
def transport() -> Transport:
    return Transport()


@pytest.fixture
def api(transport: Transport) -> ComputeAPI:
    return ComputeAPI(transport, lambda host: host == "node1")  # type: ignore[arg-type]


def test_a_cast_and_a_call_are_timed_with_their_result(api: ComputeAPI,
                                                        transport: Transport) -> None:
    ctx = RequestContext.admin()
    cast_ok = count("container_stop", "cast", "ok")
    call_ok = count("container_show", "call", "ok")
    api.container_stop(ctx, row(), timeout=None)
    api.container_show(ctx, row())
    assert count("container_stop", "cast", "ok") == cast_ok + 1
    assert count("container_show", "call", "ok") == call_ok + 1

    transport.error = exc.RPCTimeout(host="node1", method="container_show", timeout=1)
    timeouts = count("container_show", "call", "timeout")
    with pytest.raises(exc.RPCTimeout):
        api.container_show(ctx, row())
    assert count("container_show", "call", "timeout") == timeouts + 1

    transport.error = exc.Conflict("the agent says no")
    refused = count("container_show", "call", "refused")
    with pytest.raises(exc.Conflict):
        api.container_show(ctx, row())
    assert count("container_show", "call", "refused") == refused + 1


def test_a_host_that_is_down_is_refused_before_anything_is_timed(
        api: ComputeAPI, transport: Transport) -> None:
    before = sum(count("container_stop", "cast", r) for r in ("ok", "error", "refused"))
    with pytest.raises(exc.ContainerHostNotUp):
        api.container_stop(RequestContext.admin(), row("node2"), timeout=None)
    assert transport.sent == []
    assert sum(count("container_stop", "cast", r) for r in ("ok", "error", "refused")) \
        == before
