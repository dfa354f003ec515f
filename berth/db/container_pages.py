"""One page of the container table (api-v1.md §5's list semantics), from statements
built once per shape.

A list's SELECT has a handful of shapes: the columns read, the sort key and direction,
which filters are given, whether it is scoped to a project and whether a marker (with
or without a value in the sort column) continues a page. Each shape's statement is
built once with its values as bound parameters, so that a list pays neither for
building it (a ``case``, a dozen ``where`` clauses, the ordering) nor for its cache
key, which SQLAlchemy keeps on the statement object: a fifth of a list of 50 rows'
CPU went there when it was built at every request (``GET /v1/containers``, polled by
clients and dashboards; bench P2 polls it ten times a second).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from sqlalchemy import JSON, Connection, Dialect, Integer, bindparam, case, select, type_coerce
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select
from sqlalchemy.types import UserDefinedType

from berth.common import exceptions as exc
from berth.db.engine import read_json
from berth.db.models import Container
from berth.db.paging import after_marker

#: The sortable columns: every column of the table.
SORTABLE = frozenset(c.name for c in Container.__table__.columns)

#: A marker's shape: none, one whose row holds NULL in the sort column, one with a value.
NO_MARKER, NULL_MARKER, VALUE_MARKER = "none", "null", "value"


class _JsonRead(UserDefinedType[Any]):
    """A JSON column as a read selects it: where the driver hands over text (SQLite,
    MariaDB), each value is read by one call of ``engine.read_json``, where
    SQLAlchemy's JSON type wraps the same reader in two calls of its own (SQLite's,
    then JSON's): without them a list of 1,000 rows takes 0.79 of the time. Where the
    driver reads JSON itself (psycopg, with berth's reader), the value is left as it
    comes, as SQLAlchemy's JSON type leaves it there."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSON"

    def result_processor(self, dialect: Dialect, coltype: object) -> Any:
        if JSON().dialect_impl(dialect).result_processor(dialect, coltype) is None:
            return None
        return read_json


JSON_READ = _JsonRead()


def column(name: str) -> Any:
    """The column (or ``registry_uuid``, the registry's uuid) a read of columns
    selects, under its name; a JSON column read through ``JSON_READ``."""
    if name == "registry_uuid":
        return Container.registry_uuid.expression.label("registry_uuid")  # type: ignore[attr-defined]
    col = Container.__table__.c[name]
    if isinstance(col.type, JSON):
        return type_coerce(col, JSON_READ).label(name)
    return col


def page_query(reader: Session | Connection, columns: tuple[str, ...] | None, *,
               project_id: str | None, filters: Mapping[str, Any], limit: int,
               marker: str | None, sort_key: str, sort_dir: str, container_type: int
               ) -> tuple[Select, dict[str, Any]]:
    """The statement of one page and its parameters: rows of ``columns`` (None: whole
    ``Container`` rows) of ``container_type``, in ``project_id`` (None: every
    project), matching ``filters`` (column name -> value), ordered by ``sort_key``
    with NULLs first ascending and the id as tie-breaker, after the row whose uuid is
    ``marker`` (read on ``reader``: ContainerNotFound when unknown)."""
    if sort_key not in SORTABLE:
        raise exc.InvalidParameterValue(
            err=f"Invalid sort_key {sort_key!r}: use one of the container's fields "
                f"(e.g. id, name, created_at, status).")
    params: dict[str, Any] = {"ctype": container_type, "limit": limit}
    if project_id is not None:
        params["project_id"] = project_id
    for key, value in filters.items():
        params[f"filter_{key}"] = value
    shape = NO_MARKER
    if marker is not None:
        found = reader.execute(_marker_statement(sort_key), {"uuid": marker}).first()
        if found is None:
            raise exc.ContainerNotFound(container=marker)
        value, params["marker_id"] = found
        shape = NULL_MARKER if value is None else VALUE_MARKER
        if value is not None:
            params["marker_value"] = value
    stmt = _page_statement(columns, sort_key, sort_dir == "desc", tuple(sorted(filters)),
                           project_id is not None, shape)
    return stmt, params


@functools.lru_cache(maxsize=64)
def _marker_statement(sort_key: str) -> Select:
    return select(getattr(Container, sort_key), Container.id).where(
        Container.uuid == bindparam("uuid"))


@functools.lru_cache(maxsize=256)
def _page_statement(columns: tuple[str, ...] | None, sort_key: str, desc: bool,
                    filter_keys: tuple[str, ...], scoped: bool, marker: str) -> Select:
    """The statement of one shape of page (see ``page_query`` for its parameters)."""
    stmt = select(Container) if columns is None else select(*(column(n) for n in columns))
    stmt = stmt.where(Container.container_type == bindparam("ctype"))
    if scoped:
        stmt = stmt.where(Container.project_id == bindparam("project_id"))
    for key in filter_keys:
        stmt = stmt.where(getattr(Container, key) == bindparam(f"filter_{key}"))
    col = getattr(Container, sort_key)
    # NULLs sort first ascending on every backend (PostgreSQL alone would put them
    # last), so the page order and the marker arithmetic agree everywhere.
    has_value = case((col.is_(None), 0), else_=1)
    if marker != NO_MARKER:
        value: Any = bindparam("marker_value") if marker == VALUE_MARKER else None
        stmt = stmt.where(after_marker(col, has_value, Container.id, value,
                                       bindparam("marker_id"), desc))
    keys = (has_value, col, Container.id)
    return stmt.order_by(*(k.desc() if desc else k.asc() for k in keys)).limit(
        bindparam("limit", type_=Integer))
