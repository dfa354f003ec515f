"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.migrated_sqlite import migrated_url

from berth.db.engine import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    """An empty berth database: a SQLite file at the migration head (the schema
    ``berth serve`` uses). A test module that needs rows in it from the start
    defines its own ``db``."""
    database = Database(migrated_url(tmp_path))
    yield database
    database.dispose()
