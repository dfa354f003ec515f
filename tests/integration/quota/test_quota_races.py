"""The quota races of tests/unit/quota on the real PostgreSQL and MariaDB: two
Database objects (two processes' engines) and 50 threads writing at once. Without the
project's quota lock, READ COMMITTED lets every check read the same usage."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.quota_race import creates_never_exceed, growth_never_exceeds

from berth.db import migrate
from berth.db.engine import Database
from berth.quota import QuotaEnforcer

CONFIG = {"containers": 40, "memory": 51200, "cpu": 20, "disk": 100}


@pytest.fixture(params=("postgresql", "mariadb"))
def dbs(request: pytest.FixtureRequest, rabbit_services: None,
        database_maker: Callable[[str], Any]) -> Iterator[list[Database]]:
    with database_maker(request.param) as url:
        migrate.upgrade(url)
        both = [Database(url, pool_size=30), Database(url, pool_size=30)]
        try:
            yield both
        finally:
            for db in both:
                db.dispose()


def test_concurrent_creates_never_exceed_the_container_quota(dbs: list[Database]) -> None:
    creates_never_exceed(dbs, QuotaEnforcer(CONFIG))


def test_concurrent_growth_never_exceeds_the_cpu_quota(dbs: list[Database]) -> None:
    growth_never_exceeds(dbs, QuotaEnforcer(CONFIG))
