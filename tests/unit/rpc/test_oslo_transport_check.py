"""OsloTransport.check (berth/rpc/oslo.py), /readyz's rpc check over RabbitMQ: a TCP
connection to a broker of transport_url, no AMQP session. Against local sockets only."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from berth.common import exceptions as exc
from berth.rpc.oslo import OsloTransport


@pytest.fixture
def listening() -> Iterator[int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ready_when_one_of_the_brokers_accepts(listening: int) -> None:
    url = f"rabbit://u:p@127.0.0.1:{closed_port()},u:p@127.0.0.1:{listening}/"
    transport = OsloTransport(url, "t-topic")
    try:
        transport.check()
    finally:
        transport.cleanup()


def test_not_ready_names_every_broker_that_did_not_answer() -> None:
    port = closed_port()
    transport = OsloTransport(f"rabbit://u:p@127.0.0.1:{port}/", "t-topic")
    try:
        with pytest.raises(exc.RPCError, match=f"127.0.0.1:{port}"):
            transport.check()
    finally:
        transport.cleanup()
