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
