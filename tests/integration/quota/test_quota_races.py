"""The quota races of tests/unit/quota on the real PostgreSQL and MariaDB: two
Database objects (two processes' engines) and 50 threads writing at once. Without the
project's quota lock, READ COMMITTED lets every check read the same usage."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.quota_race import PROJECT, race_creates, race_growth

from berth.db import containers, migrate
from berth.db import quotas as db_quotas
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
    db_quotas.set_project_limits(dbs[0], PROJECT, {"containers": 10})
    done, refused, errors = race_creates(dbs, QuotaEnforcer(CONFIG), 50)
    assert errors == []
    assert (done, refused) == (10, 40)
    assert db_quotas.project_usage(dbs[1], PROJECT)["containers"] == 10


def test_concurrent_growth_never_exceeds_the_cpu_quota(dbs: list[Database]) -> None:
    uuids = []
    for i in range(12):
        row = containers.create(dbs[0], {"project_id": PROJECT, "cpu": 1.0, "memory": "16",
                                         "status": "Running", "name": f"g{i}"})
        uuids.append(row.uuid)
    db_quotas.set_project_limits(dbs[0], PROJECT, {"cpu": 16})
    done, refused, errors = race_growth(dbs, QuotaEnforcer(CONFIG), uuids, 2.0)
    assert errors == [] and (done, refused) == (4, 8)
    assert db_quotas.project_usage(dbs[1], PROJECT)["cpu"] == 16
