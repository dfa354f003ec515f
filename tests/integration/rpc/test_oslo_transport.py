"""The oslo.messaging transport over the real RabbitMQ (berth.rpc.oslo): requests run
on an ElasticThreadPool, an idle listener wakes seldom yet acknowledges a request at
once, and no berth process loads eventlet."""

from __future__ import annotations

import concurrent.futures as cf
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from integration.conftest import RABBIT_URL

from berth.common.threads import ElasticThreadPool
from berth.rpc import oslo
from berth.rpc.oslo import OsloTransport


class _Endpoint:
    RPC_METHODS = frozenset({"hold"})

    def __init__(self, expected: int) -> None:
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._inside = 0
        self.most_inside = 0
        self._everyone = threading.Barrier(expected)

    def hold(self, context: dict[str, Any], n: int) -> int:
        with self._lock:
            self._inside += 1
            self.most_inside = max(self.most_inside, self._inside)
        try:
            self._everyone.wait(30)
            return n * 2
        finally:
            with self._lock:
                self._inside -= 1


@pytest.fixture
def transport(rabbit_services: None) -> Iterator[OsloTransport]:
    t = OsloTransport(RABBIT_URL, f"berth-it-rpc-{uuid.uuid4().hex[:8]}")
    yield t
    t.cleanup()


def test_requests_run_in_parallel_on_an_elastic_pool(transport: OsloTransport) -> None:
    endpoint = _Endpoint(expected=12)
    server = transport.serve("node-a", endpoint)
    server.start()
    try:
        pool = server._server._work_executor          # what oslo.messaging runs requests on
        assert isinstance(pool, ElasticThreadPool)
        assert pool.max_workers == 64                  # executor_thread_pool_size's default
        with cf.ThreadPoolExecutor(12) as callers:
            answers = list(callers.map(
                lambda n: transport.call("node-a", "hold", timeout=60, n=n), range(12)))
        assert answers == [n * 2 for n in range(12)]
        # all twelve were inside at once: the barrier would have timed out otherwise
        assert endpoint.most_inside == 12 and 12 <= pool.num_threads <= 64
    finally:
        server.stop()
    assert pool.num_threads == 0


class _Notes:
    RPC_METHODS = frozenset({"note", "echo"})

    def __init__(self) -> None:
        self.heard = threading.Event()
        self.times: list[float] = []

    def note(self, context: dict[str, Any]) -> None:
        self.times.append(time.monotonic())
        self.heard.set()

    def echo(self, context: dict[str, Any], n: int) -> int:
        return n


def _unacknowledged(queue: str) -> int | None:
    """The messages RabbitMQ delivered from ``queue`` (vhost berth) and awaits the ack of."""
    done = subprocess.run(["rabbitmqctl", "-q", "list_queues", "-p", "berth", "name",
                           "messages_unacknowledged"], check=True, capture_output=True,
                          text=True, timeout=120)
    for line in done.stdout.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == queue:
            return int(words[1])
    return None


def test_a_listener_wakes_seldom_and_still_acks_and_answers_at_once(
        transport: OsloTransport) -> None:
    """The listeners' waits are berth's, not the library's (1 ms after a message
    doubling to 5 s): a server's listener waits 30 s after a message too, the reply
    waiter 0.5 s doubling to 30 s. A cast sent after the listener has waited past the
    library's longest is handled and acknowledged long before the next wake; so is one
    sent right after it, calls are answered one after the other, and a server stopped
    long after its last message stops at once (its stop casts the wake)."""
    if shutil.which("rabbitmqctl") is None:
        pytest.skip("rabbitmqctl is not installed: the queue's acks cannot be read")
    from oslo_messaging._drivers import amqpdriver

    notes = _Notes()
    server = transport.serve("node-b", notes)
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MAX == oslo.LISTENER_IDLE_WAKE == 30.0
    assert amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN == oslo.LISTENER_FIRST_WAKE == 0.5
    server.start()
    stopped = False
    try:
        time.sleep(8)     # the listener's wait has grown past the library's 5 s
        transport.cast("node-b", "note")
        assert notes.heard.wait(20)
        sent = time.monotonic()
        transport.cast("node-b", "note")        # inside the wait that follows a message
        deadline = sent + 10
        while len(notes.times) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(notes.times) == 2 and notes.times[1] - sent < 3
        listener = server._server.listener._poll_style_listener
        assert type(listener).__name__ == "SteadyRpcAMQPListener"
        assert listener._current_timeout == oslo.LISTENER_IDLE_WAKE    # no ramp after them
        # the reply waiter waits as long: each call's answer still comes at once
        began = time.monotonic()
        assert [transport.call("node-b", "echo", timeout=20, n=n) for n in range(3)] == [0, 1, 2]
        assert time.monotonic() - began < 5
        queue = f"{transport._topic}.node-b"
        waited = time.monotonic() + 15       # half the idle wake: the ack did not wait for it
        while (left := _unacknowledged(queue)) != 0 and time.monotonic() < waited:
            time.sleep(0.5)
        assert left == 0, f"{queue} still has {left} unacknowledged message(s)"
        time.sleep(12)     # past the heartbeat check's wait, which bounds the listener's
        began = time.monotonic()
        server.stop()
        stopped = True
        assert time.monotonic() - began < 3, "stop waited for the listener's wait to end"
    finally:
        if not stopped:
            server.stop()


def test_a_process_using_the_transport_has_no_eventlet(rabbit_services: None) -> None:
    code = (
        "import sys\n"
        "from berth.rpc.oslo import OsloTransport\n"
        f"t = OsloTransport({RABBIT_URL!r}, 'berth-it-noeventlet')\n"
        "import oslo_messaging._drivers.impl_rabbit\n"
        "from oslo_service import backend\n"
        "t.cleanup()\n"
        "assert sys.modules.get('eventlet') is None, 'eventlet was imported'\n"
        "assert backend.get_backend_type() == backend.BackendType.THREADING\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning:eventlet", "-c",
                           code], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_kombu_loads_no_yaml_nor_msgpack_and_refuses_both(rabbit_services: None) -> None:
    """They are never used (the messages are JSON) and cost an agent 1.1 MiB; hidden
    from kombu only while it registers its serializers: the process can import them."""
    code = (
        "import sys\n"
        "from berth.rpc.oslo import OsloTransport\n"
        f"t = OsloTransport({RABBIT_URL!r}, 'berth-it-serializers')\n"
        "import oslo_messaging._drivers.impl_rabbit\n"
        "from kombu import serialization\n"
        "from kombu.exceptions import SerializerNotInstalled\n"
        "t.cleanup()\n"
        "assert 'yaml' not in sys.modules and 'msgpack' not in sys.modules, 'loaded'\n"
        "for body, kind in ((b'a: 1', 'application/x-yaml'),\n"
        "                   (b'\\x81\\xa1a\\x01', 'application/x-msgpack')):\n"
        "    try:\n"
        "        serialization.loads(body, kind, 'utf-8', accept=[kind])\n"
        "    except SerializerNotInstalled:\n"
        "        pass\n"
        "    else:\n"
        "        raise AssertionError(kind + ' was decoded')\n"
        "assert serialization.loads(b'{\"a\": 1}', 'application/json', 'utf-8') == {'a': 1}\n"
        "import yaml, msgpack\n"
        "assert yaml.safe_load('a: 1') == {'a': 1}\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
