"""Apply Alembic migrations programmatically (``berth db upgrade``, and ``berth serve``
at start-up).

Alembic (with Mako) costs a long-running process about 11 MiB that it never gives
back, so it is imported only to migrate. Checking whether a database is current
needs no Alembic: ``HEAD`` names the newest revision (a unit test keeps it equal to
the scripts' head) and the current one is read with plain SQL.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

if TYPE_CHECKING:
    from alembic.config import Config

LOG = logging.getLogger(__name__)
_SCRIPTS = os.path.join(os.path.dirname(__file__), "migrations")

#: The newest migration revision of this code (kept equal to the scripts' head by
#: tests/unit/db/test_migration_head.py).
HEAD = "0011"


def _config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPTS)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def current_revision(url: str) -> str | None:
    """The database's revision (None for an empty database), read with plain SQL."""
    path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else ""
    if path and path != ":memory:" and not os.path.exists(path):
        return None                  # a SQLite file not made yet: nothing migrated
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            try:
                return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
            except DBAPIError:
                return None          # no alembic_version table: never migrated
    finally:
        engine.dispose()


def head_revision() -> str | None:
    """The scripts' head, asked of Alembic (for tests and tools; processes use HEAD)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory(_SCRIPTS).get_current_head()


def is_current(url: str) -> bool:
    return current_revision(url) == HEAD


def upgrade(url: str, revision: str = "head") -> None:
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    from alembic import command

    before = current_revision(url)
    command.upgrade(_config(url), revision)
    after = current_revision(url)
    if before != after:
        LOG.info("database migrated from %s to %s", before or "empty", after)


def schema_problem(url: str) -> str | None:
    """Why a process that does not migrate (``berth-api``, ``berth-compute``) must not
    run on the database at ``url``, or None when its schema is at this code's head."""
    try:
        current = current_revision(url)
    except Exception as err:  # noqa: BLE001 - any failure to connect is the answer
        return f"cannot read the database's migration revision: {err}"
    head = HEAD
    if current == head:
        return None
    return (f"the database is at migration revision {current or 'none (empty)'} but this "
            f"berth needs {head}: run `berth db upgrade --config-file <this file>` first "
            f"(berth-api and berth-compute never migrate the database themselves)")
