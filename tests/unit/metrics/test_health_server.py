"""HealthServer (berth/metrics/http.py): berth-compute's /metrics, /healthz, /readyz."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from berth.metrics import catalog
from berth.metrics.health import Readiness
from berth.metrics.http import HealthServer


class Switch:
    def __init__(self) -> None:
        self.up = True

    def __call__(self) -> None:
        if not self.up:
            raise ConnectionError("Docker engine at unix:///nowhere does not answer")


@pytest.fixture
def docker() -> Switch:
    return Switch()


@pytest.fixture
def server(docker: Switch) -> Iterator[str]:
    readiness = Readiness({"database": lambda: None, "docker": docker}, max_age=0)
    health = HealthServer("127.0.0.1", 0, readiness)
    health.start()
    yield f"http://127.0.0.1:{health.port}"
    health.stop()
    health.stop()        # safe twice
    readiness.close()


def test_metrics_are_prometheus_text_with_berths_metrics(server: str) -> None:
    catalog.PLEG_RELIST_FAILURES.inc()
    resp = httpx.get(f"{server}/metrics")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/plain")
    assert "berth_pleg_relist_failures_total" in resp.text
    assert 'berth_compute_queue_depth{queue="actions"}' in resp.text


def test_healthz_answers_while_a_dependency_is_down(server: str, docker: Switch) -> None:
    docker.up = False
    resp = httpx.get(f"{server}/healthz")
    assert resp.status_code == 200 and resp.json() == {"status": "alive"}


def test_readyz_is_200_then_503_naming_docker(server: str, docker: Switch) -> None:
    resp = httpx.get(f"{server}/readyz")
    assert resp.status_code == 200 and resp.json()["status"] == "ready"
    docker.up = False
    resp = httpx.get(f"{server}/readyz")
    assert resp.status_code == 503
    assert resp.json()["failed"] == ["docker"]
    assert "does not answer" in resp.json()["checks"]["docker"]


def test_another_path_is_404(server: str) -> None:
    assert httpx.get(f"{server}/v1/containers").status_code == 404


def test_a_port_in_use_fails_start(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    with pytest.raises(OSError):
        HealthServer("127.0.0.1", port, Readiness()).start()


def test_a_client_that_sends_nothing_is_dropped() -> None:
    health = HealthServer("127.0.0.1", 0, Readiness(), client_timeout=0.3)
    health.start()
    try:
        with socket.create_connection(("127.0.0.1", health.port), timeout=5) as s:
            s.sendall(b"GET /metrics HTTP/1.1\r\n")          # and then nothing more
            began = time.monotonic()
            assert s.recv(1024) == b""                        # closed by the server
            assert time.monotonic() - began < 4
    finally:
        health.stop()
