"""berth.db.psycopg_connection on a real PostgreSQL: a rollback of a transaction keeps
the statements psycopg prepared on the connection, on the server too, where psycopg's
own connection drops them all; a transaction in error still rolls back and the
connection goes on; berth's engine makes its connections so."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from sqlalchemy import text

from berth.db import containers, migrate
from berth.db.engine import Database
from berth.db.psycopg_connection import KeepsPreparedConnection

#: psycopg prepares a statement from its fifth execution on a connection.
PREPARED_AFTER = 5


def prepared_on_server(conn: psycopg.Connection[Any]) -> list[str]:
    with conn.cursor() as cur:
        cur.execute("SELECT statement FROM pg_prepared_statements", prepare=False)
        return [row[0] for row in cur.fetchall()]


def prepare_and_roll_back(conn: psycopg.Connection[Any]) -> None:
    for i in range(PREPARED_AFTER + 1):
        conn.execute("SELECT %s::int + 1 AS n", (i,))
    conn.commit()
    assert any("+ 1 AS n" in s for s in prepared_on_server(conn))
    conn.execute("SELECT 2")       # a transaction that ends rolled back
    conn.rollback()


def test_a_rollback_keeps_the_prepared_statements(libpq_url: str) -> None:
    with KeepsPreparedConnection.connect(libpq_url) as conn:
        prepare_and_roll_back(conn)
        assert any("+ 1 AS n" in s for s in prepared_on_server(conn))
        # and the next execution runs the prepared statement, no new one
        assert conn.execute("SELECT %s::int + 1 AS n", (41,)).fetchone() == (42,)
        assert sum("+ 1 AS n" in s for s in prepared_on_server(conn)) == 1


def test_psycopgs_own_connection_drops_them_which_is_what_it_mends(libpq_url: str) -> None:
    with psycopg.connect(libpq_url) as conn:
        prepare_and_roll_back(conn)
        assert not any("+ 1 AS n" in s for s in prepared_on_server(conn))


def test_a_transaction_in_error_rolls_back_and_the_connection_goes_on(libpq_url: str) -> None:
    with KeepsPreparedConnection.connect(libpq_url) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            conn.execute("SELECT 1 / 0")
        conn.rollback()
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert conn.execute("SELECT 3").fetchone() == (3,)


def test_berths_engine_keeps_them_through_a_refused_write(pg_url: str) -> None:
    migrate.upgrade(pg_url)
    db = Database(pg_url, pool_size=1)
    try:
        uuid = containers.create(db, {"project_id": "p1", "status": "Running"}).uuid
        for i in range(PREPARED_AFTER + 1):
            containers.update_(db, uuid, {"status_reason": f"pass {i}"})
        with pytest.raises(RuntimeError), db.write_connection() as conn:
            assert isinstance(conn.connection.dbapi_connection, KeepsPreparedConnection)
            conn.execute(text("SELECT 1"))
            raise RuntimeError("refused: the transaction rolls back")
        with db.connection() as conn:
            raw = conn.connection.dbapi_connection
            assert isinstance(raw, KeepsPreparedConnection)
            assert any("UPDATE container" in s for s in prepared_on_server(raw))
    finally:
        db.dispose()
