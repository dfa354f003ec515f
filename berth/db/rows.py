"""Row operations shared by the tables keyed by a ``uuid`` column."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from berth.db.engine import Database


def destroy_by_uuid(db: Database, model: Any, uuid: str) -> bool:
    """Delete the ``model`` row with this uuid (ORM delete, so relationships and
    database cascades apply). False when it was already gone."""
    with db.writer() as s:
        row = s.scalars(select(model).where(model.uuid == uuid)).first()
        if row is None:
            return False
        s.delete(row)
        return True
