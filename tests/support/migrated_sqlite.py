"""A migrated SQLite database per test, fast: Alembic runs once per test process into a
template file, and each test gets a copy of it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from berth.db import migrate

_template: Path | None = None


def migrated_url(directory: Path) -> str:
    """The URL of a fresh, fully migrated SQLite file in ``directory``."""
    global _template
    if _template is None:
        path = Path(tempfile.mkdtemp(prefix="berth-schema-")) / "template.sqlite"
        migrate.upgrade(f"sqlite:///{path}")
        _template = path
    target = directory / "berth.sqlite"
    shutil.copyfile(_template, target)
    return f"sqlite:///{target}"
