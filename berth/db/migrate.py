"""Apply Alembic migrations programmatically (``berth db upgrade``, and ``berth serve``
at start-up)."""

from __future__ import annotations

import logging
import os

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

LOG = logging.getLogger(__name__)
_SCRIPTS = os.path.join(os.path.dirname(__file__), "migrations")


def _config(url: str) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPTS)
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def current_revision(url: str) -> str | None:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str | None:
    return ScriptDirectory(_SCRIPTS).get_current_head()


def upgrade(url: str, revision: str = "head") -> None:
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
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
    head = head_revision()
    if current == head:
        return None
    return (f"the database is at migration revision {current or 'none (empty)'} but this "
            f"berth needs {head}: run `berth db upgrade --config-file <this file>` first "
            f"(berth-api and berth-compute never migrate the database themselves)")
