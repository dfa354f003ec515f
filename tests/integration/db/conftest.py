"""Fixtures of the tests on the databases berth runs on: a database of the test's own
on PostgreSQL and on MariaDB (``db``), and on SQLite too (``any_db``), migrated with
Alembic (what its engine sends: ``support.statements``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

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
