"""Fixtures of the tests on the servers berth runs on: a database of the test's own on
PostgreSQL and on MariaDB, migrated with Alembic (what its engine sends: ``support.
statements``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from berth.db import migrate
from berth.db.engine import Database


@pytest.fixture(params=("postgresql", "mariadb"))
def db(request: pytest.FixtureRequest, rabbit_services: None,
       database_maker: Callable[[str], Any]) -> Iterator[Database]:
    with database_maker(request.param) as url:
        migrate.upgrade(url)
        database = Database(url, pool_size=2)
        try:
            yield database
        finally:
            database.dispose()
