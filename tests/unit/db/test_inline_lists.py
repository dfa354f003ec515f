"""``berth.db.inline_lists``: constant IN lists written into the compiled SQL (no
expanding parameter spliced in at each execution), quoted, on every dialect."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, String, Table, create_engine, insert, select
from sqlalchemy.dialects import mysql, postgresql, sqlite

from berth.db.inline_lists import inline_in, inline_not_in

T = Table("t", MetaData(), Column("id", Integer, primary_key=True), Column("s", String(20)),
          Column("n", Integer))


@pytest.mark.parametrize("dialect", [postgresql.dialect(), mysql.dialect(), sqlite.dialect()])
def test_the_values_are_in_the_sql_and_nothing_is_left_to_expand(dialect: object) -> None:
    stmt = select(T.c.id).where(inline_not_in(T.c.s, ("Error", "it's")),
                                inline_in(T.c.n, (0, 1)))
    compiled = stmt.compile(dialect=dialect)  # type: ignore[arg-type]
    sql = str(compiled)
    assert "NOT IN ('Error', 'it''s')" in sql and "IN (0, 1)" in sql
    assert "POSTCOMPILE" not in sql and not compiled.params


def test_the_lists_select_what_in_and_not_in_would() -> None:
    engine = create_engine("sqlite://")
    T.metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(insert(T), [{"s": s, "n": n} for s, n in
                                 [("Running", 0), ("Error", 1), ("it's", 0), ("Running", 2)]])
        inline = conn.execute(select(T.c.id).where(
            inline_not_in(T.c.s, ("Error", "it's")), inline_in(T.c.n, (0, 1)))).scalars().all()
        plain = conn.execute(select(T.c.id).where(
            T.c.s.not_in(("Error", "it's")), T.c.n.in_((0, 1)))).scalars().all()
    assert inline == plain == [1]


@pytest.mark.parametrize("value", [1.5, True, None, b"x"])
def test_only_strings_and_integers_are_written_in(value: object) -> None:
    with pytest.raises(TypeError, match="str and int constants"):
        inline_in(T.c.n, [value])  # type: ignore[list-item]
