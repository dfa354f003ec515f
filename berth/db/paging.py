"""One page of any table, with the list semantics of api-v1.md §5: sort on any column
(NULLs first ascending, on every backend), a tie-breaker column, and a marker = the
uuid of the last row of the previous page."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqlalchemy import case, false, select
from sqlalchemy.sql.elements import ColumnElement

from berth.common import exceptions as exc
from berth.db.engine import Database


def sortable(model: Any) -> frozenset[str]:
    return frozenset(c.name for c in model.__table__.columns)


def page(db: Database, model: Any, *, where: Iterable[ColumnElement[bool]] = (),
         limit: int, marker: str | None, sort_key: str, sort_dir: str,
         not_found: Callable[[str], exc.BerthError], what: str,
         computed: Mapping[str, Any] | None = None) -> list[Any]:
    """Rows of ``model`` matching ``where``, ordered by ``sort_key`` then the primary
    key, after the row whose uuid is ``marker`` (``not_found(marker)`` is raised when
    there is none). ``what`` names the record in the error for an unknown sort key.
    ``computed``: sort keys whose value the API shows computed, not as the column
    holds it, each with the expression (of the row) that computes it."""
    computed = computed or {}
    columns = sortable(model)
    if sort_key not in columns:
        raise exc.InvalidParameterValue(
            err=f"Invalid sort_key {sort_key!r}: use one of the {what}'s fields "
                f"({', '.join(sorted(columns))}).")
    if sort_dir not in ("asc", "desc"):
        raise exc.InvalidParameterValue(err=f"Invalid sort_dir {sort_dir!r}: use asc or desc.")
    col = computed[sort_key] if sort_key in computed else getattr(model, sort_key)
    tie = getattr(model, model.__mapper__.primary_key[0].name)
    has_value = case((col.is_(None), 0), else_=1)
    desc = sort_dir == "desc"
    with db.reader() as s:
        stmt = select(model)
        for cond in where:
            stmt = stmt.where(cond)
        if marker is not None:
            mrow = s.scalars(select(model).where(model.uuid == marker)).first()
            if mrow is None:
                raise not_found(marker)
            mtie = getattr(mrow, tie.key)
            mval = s.scalar(select(col).where(tie == mtie)) if sort_key in computed \
                else getattr(mrow, sort_key)
            stmt = stmt.where(after_marker(col, has_value, tie, mval, mtie, desc))
        keys = (has_value, col, tie)
        stmt = stmt.order_by(*(k.desc() if desc else k.asc() for k in keys)).limit(limit)
        return list(s.scalars(stmt).all())


def after_marker(col, has_value, tie, mval: Any, mtie: Any, desc: bool):  # type: ignore[no-untyped-def]
    """Rows strictly after the marker in (has_value, col, tie) order. ``mval`` is the
    marker's value in ``col`` (None: NULL), ``mtie`` its tie-breaker's; either may be
    a bound parameter (``berth.db.container_pages``), ``mval`` only when not NULL."""
    mhas = 0 if mval is None else 1
    same = (col == mval) if mval is not None else col.is_(None)
    if desc:
        inner = (col < mval) if mval is not None else false()
        return (has_value < mhas) | ((has_value == mhas) & (inner | (same & (tie < mtie))))
    inner = (col > mval) if mval is not None else false()
    return (has_value > mhas) | ((has_value == mhas) & (inner | (same & (tie > mtie))))
