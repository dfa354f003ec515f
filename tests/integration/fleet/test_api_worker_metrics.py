"""``/metrics`` of a ``berth-api`` with two ``[api]workers`` counts both workers'
requests (prometheus-client's multiprocess mode): the requests spread over the
workers by the kernel add up to what was sent, whichever worker answers the scrape;
the run's metrics directory holds both workers' files and goes when the API stops."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.integration

SENT = 60
_HEALTHZ = re.compile(r'^berth_api_requests_total\{method="GET",route="/healthz",'
                      r'status="200"\} (\S+)$', re.MULTILINE)


@pytest.fixture(scope="module")
def api(deployment_factory: Any, database_maker: Any) -> Iterator[tuple[Any, Any, str]]:
    with database_maker("postgresql") as url:
        d = deployment_factory(url)
        try:
            done = d.berth("db", "upgrade")
            assert done.returncode == 0, done.stderr
            proc, base = d.start_another_api("metrics", workers=2)
            yield d, proc, base
        finally:
            d.close()


def healthz_count(base: str) -> float:
    with httpx.Client(base_url=base, timeout=30) as http:
        found = _HEALTHZ.findall(http.get("/metrics").text)
    return sum(float(v) for v in found)


def test_two_workers_counts_add_up_in_every_scrape(api: tuple[Any, Any, str]) -> None:
    d, _proc, base = api
    before = healthz_count(base)
    for _ in range(SENT):
        # A new connection each: the kernel hands each to one worker or the other.
        with httpx.Client(base_url=base, timeout=30) as http:
            assert http.get("/healthz").status_code == 200
    # Each scrape is answered by one worker; each must show the sum of both.
    for _ in range(6):
        assert healthz_count(base) == before + SENT
    files = list((d.root / "metrics" / f"api-metrics-{port_of(base)}").glob("counter_*.db"))
    assert len(files) >= 2, files          # both workers wrote their counters


def test_the_run_directory_goes_with_the_api(api: tuple[Any, Any, str]) -> None:
    d, proc, base = api
    directory: Path = d.root / "metrics" / f"api-metrics-{port_of(base)}"
    assert directory.is_dir()
    assert proc.stop() == 0
    assert not directory.exists()


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])
