"""The fleet bench's CPU meter (bench/fleet/cpu.py) against a real PostgreSQL: the
backend that serves the client's count of Running rows is the client's CPU, not the
control plane's."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from bench.fleet import load
from bench.fleet.cpu import CpuMeter, per_unit
from bench.fleet.services import scratch_database

pytestmark = pytest.mark.integration

BURN = "SELECT count(*) FROM generate_series(1, 3000000)"


@pytest.fixture
def scratch(rabbit_services: None) -> Iterator[tuple[str, str]]:
    """A database of the test's own: (its name, its libpq URL)."""
    with scratch_database("berth_cpumeter_") as url:
        yield url.rsplit("/", 1)[1], url.replace("postgresql+psycopg://", "postgresql://")


def test_the_counters_backend_is_the_clients_cpu_not_postgresqls(
        scratch: tuple[str, str]) -> None:
    database, libpq = scratch
    with psycopg.connect(libpq, autocommit=True) as conn, \
            psycopg.connect(libpq, autocommit=True) as other:
        other.execute("SELECT 1")
        meter = CpuMeter(api_pid=0, node_pids=[], database=database)
        client_pid = conn.info.backend_pid
        meter.count_as_client(client_pid)
        before = meter.sample()
        assert client_pid in before["client"] and client_pid not in before["postgres"]
        assert other.info.backend_pid in before["postgres"]
        conn.execute(BURN).fetchone()           # the client's backend works
        spent = per_unit(before, meter.sample(), 1)
        assert spent["client"] >= 50 and spent["postgres"] < spent["client"] / 2


def test_the_count_reports_the_backend_of_each_connection_it_makes(
        scratch: tuple[str, str]) -> None:
    _, libpq = scratch
    with psycopg.connect(libpq, autocommit=True) as conn:
        conn.execute("CREATE TABLE container (status text)")
        conn.execute("INSERT INTO container VALUES ('Running'), ('Error')")
    seen: list[int] = []
    counter = load._Counter(libpq, seen.append)
    try:
        assert counter() == (1, 1)
        assert counter() == (1, 1)
        assert len(seen) == 1 and seen[0] > 0
    finally:
        counter.close()
