"""Fixtures of the tests on the databases berth runs on: a database of the test's own
on PostgreSQL and on MariaDB (``db``), and on SQLite too (``any_db``), migrated with
Alembic (what its engine sends: ``support.statements``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.migrated_sqlite import migrated_url

from berth.db import migrate
from berth.db.engine import Database


def _on_server(request: pytest.FixtureRequest, kind: str) -> Iterator[Database]:
    """A migrated database of the test's own on the server ``kind``, disposed of after."""
    request.getfixturevalue("rabbit_services")
    with request.getfixturevalue("database_maker")(kind) as url:
        migrate.upgrade(url)
        database = Database(url, pool_size=2)
        try:
            yield database
        finally:
            database.dispose()


@pytest.fixture(params=("postgresql", "mariadb"))
def db(request: pytest.FixtureRequest) -> Iterator[Database]:
    yield from _on_server(request, request.param)


@pytest.fixture(params=("sqlite", "postgresql", "mariadb"))
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    if request.param != "sqlite":
        yield from _on_server(request, request.param)
        return
    database = Database(migrated_url(tmp_path))
    yield database
    database.dispose()


@pytest.fixture
def pg_url(rabbit_services: None, database_maker: Callable[[str], Any]) -> Iterator[str]:
    """A PostgreSQL database of the test's own, not migrated: SQLAlchemy's URL."""
    with database_maker("postgresql") as made:
        yield made


@pytest.fixture
def libpq_url(pg_url: str) -> str:
    """``pg_url`` as psycopg's own ``connect`` takes it."""
    return pg_url.replace("postgresql+psycopg://", "postgresql://")
