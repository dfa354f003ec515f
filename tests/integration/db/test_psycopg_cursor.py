"""berth.db.psycopg_cursor on a real PostgreSQL: a statement's result is described
once, also once psycopg runs it prepared, and each statement, and each result of one,
keeps its own columns."""

from __future__ import annotations

import psycopg

from berth.db import containers, migrate
from berth.db.engine import Database
from berth.db.psycopg_cursor import DescribedOnceCursor


def test_a_statement_is_described_once_also_when_prepared(libpq_url: str) -> None:
    with psycopg.connect(libpq_url, cursor_factory=DescribedOnceCursor) as conn:
        cur = conn.cursor()
        seen = []
        for i in range(8):      # psycopg prepares it from its fifth execution
            cur.execute("SELECT %s::int AS n, 'x'::text AS word", (i,))
            seen.append(cur.description)
            assert cur.fetchone() == (i, "x")
        assert all(d is not None and [c.name for c in d] == ["n", "word"] for d in seen)
        first = seen[0]
        assert first is not None
        for later in seen[1:]:          # the same columns, in a list of its own
            assert later is not None and later is not first
            assert all(a is b for a, b in zip(first, later, strict=True))


def test_each_statement_and_each_result_keeps_its_own_columns(libpq_url: str) -> None:
    with psycopg.connect(libpq_url, cursor_factory=DescribedOnceCursor) as conn:
        cur = conn.cursor()
        for _ in range(2):
            cur.execute("SELECT 1 AS a")
            assert [c.name for c in cur.description or ()] == ["a"]
            cur.execute("SELECT 1 AS b, 2 AS c")
            assert [c.name for c in cur.description or ()] == ["b", "c"]
            cur.execute("SELECT 1 AS first_result; SELECT 2 AS second, 3 AS third")
            assert [c.name for c in cur.description or ()] == ["first_result"]
            assert cur.nextset()
            assert [c.name for c in cur.description or ()] == ["second", "third"]
            cur.execute("CREATE TEMP TABLE IF NOT EXISTS t (x int)")
            assert cur.description is None


def test_berths_engine_uses_it_and_reads_rows_as_before(pg_url: str) -> None:
    migrate.upgrade(pg_url)
    db = Database(pg_url, pool_size=2)
    try:
        with db.connection() as conn:
            assert isinstance(conn.connection.dbapi_connection.cursor(), DescribedOnceCursor)
        uuid = containers.create(db, {"project_id": "p1", "status": "Running"}).uuid
        for i in range(7):
            row = containers.update_(db, uuid, {"status_reason": f"pass {i}"})
            assert (row.uuid, row.status, row.status_reason) == (uuid, "Running", f"pass {i}")
    finally:
        db.dispose()
