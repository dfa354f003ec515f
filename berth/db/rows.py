"""Row operations shared by the tables keyed by a ``uuid`` column."""

from __future__ import annotations

import functools
from typing import Any

from sqlalchemy import Connection, Insert, Table, insert, select

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


def insert_new(conn: Connection, obj: Any) -> None:
    """INSERT a new mapped object ``obj`` (never saved, never in a session) on
    ``conn``: the values it was given, each other column's default filled in and set
    on ``obj`` too (as a flush would), then its generated primary key. A create
    through the ORM's unit of work cost twice this (bench P1)."""
    table = obj.__table__
    given = obj.__dict__
    record: dict[str, Any] = {}
    for column in table.columns:
        key, default = column.key, column.default
        if key in given:
            record[key] = given[key]
        elif default is not None and (default.is_scalar or default.is_callable):
            record[key] = default.arg(None) if default.is_callable else default.arg
            setattr(obj, key, record[key])
    result = conn.execute(_insert_of(table), record)
    (pk_column,) = table.primary_key.columns
    if pk_column.key not in record:
        setattr(obj, pk_column.key, result.inserted_primary_key[0])  # type: ignore[index]


@functools.lru_cache(maxsize=16)
def _insert_of(table: Table) -> Insert:
    return insert(table)
