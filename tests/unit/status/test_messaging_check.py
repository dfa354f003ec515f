"""The RabbitMQ check: how it reads transport URLs, and that a broker that does not
answer, or does not speak AMQP, is a failure. (A broker that accepts the login needs
RabbitMQ: not a unit test.)"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest
from oslo_upgradecheck.upgradecheck import Code
from support.ports import free_port

from berth.status import options
from berth.status.messaging import Broker, brokers, check_messaging


def test_brokers_reads_every_host_with_its_credentials_and_the_vhost() -> None:
    assert brokers("rabbit://u:p%40ss@h1:5673,v:q@[::1]/berth%2Fprod") == [
        Broker("h1", 5673, "u", "p@ss", "berth/prod"),
        Broker("::1", 5672, "v", "q", "berth/prod"),
    ]
    assert brokers("rabbit://rabbit") == [Broker("rabbit", 5672, None, None, "/")]


def test_a_url_without_a_host_is_a_failure() -> None:
    result = check_messaging("rabbit://user:pass@/")
    assert result.code == Code.FAILURE and "without a host" in (result.details or "")


def test_no_transport_url_passes() -> None:
    assert check_messaging(None).code == Code.SUCCESS


def test_a_port_nobody_listens_on_is_a_failure() -> None:
    port = free_port()
    result = check_messaging(f"rabbit://guest:guest@127.0.0.1:{port}/", timeout=2)
    assert result.code == Code.FAILURE
    assert f"127.0.0.1:{port}" in (result.details or "")


@pytest.fixture
def not_amqp() -> Iterator[int]:
    """A TCP server that answers every connection with an HTTP error and closes it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    thread = threading.Thread(target=serve, name="not-amqp", daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(5)
    server.close()


def test_a_server_that_does_not_speak_amqp_is_a_failure(not_amqp: int) -> None:
    result = check_messaging(f"rabbit://guest:guest@127.0.0.1:{not_amqp}/", timeout=2)
    assert result.code == Code.FAILURE


def test_one_broker_that_answers_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    tried = []

    def login(broker: Broker, timeout: float) -> None:
        tried.append(broker.host)
        if broker.host == "down":
            raise ConnectionRefusedError("refused")

    monkeypatch.setattr("berth.status.messaging.login", login)
    result = check_messaging("rabbit://u:p@down:5672,u:p@up:5672/")
    assert result.code == Code.SUCCESS and tried == ["down", "up"]
    assert "down:5672" in (result.details or "")


def test_the_shared_key_matters_only_on_several_machines() -> None:
    assert options.shared_key_missing(None, None) is None
    assert options.shared_key_missing("rabbit://h", "secret") is None
    found = options.shared_key_missing("rabbit://h", None)
    assert found is not None and found.code == Code.WARNING
