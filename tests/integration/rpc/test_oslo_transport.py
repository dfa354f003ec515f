"""The oslo.messaging transport over the real RabbitMQ (berth.rpc.oslo): requests run
on an ElasticThreadPool, and no berth process loads eventlet."""

from __future__ import annotations

import concurrent.futures as cf
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from integration.conftest import RABBIT_URL

from berth.common.threads import ElasticThreadPool
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
