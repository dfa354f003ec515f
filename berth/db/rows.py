"""Row operations shared by the tables keyed by a ``uuid`` column."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from sqlalchemy import Connection, Insert, Table, bindparam, insert, inspect, select
from sqlalchemy.orm import make_transient_to_detached

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
    record = _record_of(obj)
    result = conn.execute(_insert_of(obj.__table__), record)
    _set_generated_key(obj, record, result.inserted_primary_key[0])  # type: ignore[index]


def insert_new_pair(conn: Connection, first: Any, second: Any) -> None:
    """``insert_new`` of ``first`` and then of ``second``, which does not refer to
    ``first``'s generated key: on PostgreSQL as one statement (``second``'s INSERT a
    data-modifying ``WITH`` of ``first``'s), elsewhere as two. A container's create
    writes its row and its create action so (bench P15: one of the API's statements
    per create)."""
    if conn.dialect.name != "postgresql":
        insert_new(conn, first)
        insert_new(conn, second)
        return
    records = _record_of(first), _record_of(second)
    tables = first.__table__, second.__table__
    stmt = _pair_insert_of(tables[0], tuple(records[0]), tables[1], tuple(records[1]))
    params = {**{f"a_{k}": v for k, v in records[0].items()},
              **{f"b_{k}": v for k, v in records[1].items()}}
    keys = conn.execute(stmt, params).one()
    for obj, record, key in zip((first, second), records, keys, strict=True):
        _set_generated_key(obj, record, key)


def insert_new_leading(conn: Connection, obj: Any, records: Iterator[Any]) -> None:
    """``insert_new`` of ``obj``, and of the first of ``records`` with it
    (``insert_new_pair``: one statement on PostgreSQL) when there is one; the rest of
    ``records`` are left for the caller to insert in turn. The first must not refer to
    ``obj``'s generated key (a row's create action, which names it by uuid)."""
    first = next(records, None)
    if first is None:
        insert_new(conn, obj)
    else:
        insert_new_pair(conn, obj, first)


def _set_generated_key(obj: Any, record: dict[str, Any], key: Any) -> None:
    """Set on ``obj`` the primary key its INSERT generated, unless ``record`` gave it."""
    (pk_column,) = obj.__table__.primary_key.columns
    if pk_column.key not in record:
        setattr(obj, pk_column.key, key)


def _record_of(obj: Any) -> dict[str, Any]:
    """The column values ``insert_new`` writes for ``obj``: those it was given, and
    each other column's default (set on ``obj`` too)."""
    given = obj.__dict__
    record: dict[str, Any] = {}
    for column in obj.__table__.columns:
        key, default = column.key, column.default
        if key in given:
            record[key] = given[key]
        elif default is not None and (default.is_scalar or default.is_callable):
            record[key] = default.arg(None) if default.is_callable else default.arg
            setattr(obj, key, record[key])
    return record


@functools.lru_cache(maxsize=16)
def _insert_of(table: Table) -> Insert:
    return insert(table)


@functools.lru_cache(maxsize=64)     # a create's columns vary with what it was given
def _pair_insert_of(first: Table, first_keys: tuple[str, ...], second: Table,
                    second_keys: tuple[str, ...]) -> Insert:
    """``INSERT INTO second ... `` as a ``WITH`` of ``INSERT INTO first ...``, which
    returns both primary keys; the values bound as ``a_<column>`` and ``b_<column>``.
    Built once per pair of tables and columns given."""
    def values(table: Table, keys: tuple[str, ...], prefix: str) -> dict[str, Any]:
        return {k: bindparam(f"{prefix}_{k}", type_=table.c[k].type) for k in keys}

    (first_pk,) = first.primary_key.columns
    (second_pk,) = second.primary_key.columns
    along = (insert(second).values(values(second, second_keys, "b")).returning(second_pk)
             .cte("along"))
    return (insert(first).values(values(first, first_keys, "a"))
            .returning(first_pk, select(along.c[second_pk.key]).scalar_subquery())
            .add_cte(along))


def detached(model: Any, values: Mapping[str, Any]) -> Any:
    """A ``model`` object holding ``values`` (every column's, by attribute name), as a
    query through a session would have left it once the session closed: detached,
    nothing to flush. For a row read or returned by a Core statement: SQLAlchemy's
    ORM loading and session cost as much again as the statement itself (an
    ``UPDATE ... RETURNING`` of a container row: 0.41 ms of CPU through a session,
    0.23 ms without, bench P15's agents writing four per container)."""
    obj = inspect(model).class_manager.new_instance()
    obj.__dict__.update(values)
    make_transient_to_detached(obj)
    return obj
