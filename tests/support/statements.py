"""What a Database's engine sends, counted by a test."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from berth.db.engine import Database


class Statements:
    """The statements the engine sends through a cursor, by their first word
    (``sent``), and each whole with whether SQLAlchemy took its compiled form from its
    cache (``compiled``). SQLite's writes have an engine of their own (``BEGIN
    IMMEDIATE``), heard too; elsewhere the writers' engine shares the engine's
    listeners."""

    def __init__(self, db: Database) -> None:
        self.sent: list[str] = []
        self.compiled: list[tuple[str, bool]] = []
        for engine in (db.engine, db._write_engine) if db.is_sqlite else (db.engine,):
            event.listen(engine, "before_cursor_execute", self._sql)

    def _sql(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
             executemany: bool) -> None:
        self.sent.append(statement.split()[0].upper())
        cached = context is not None and context.cache_hit is context.dialect.CACHE_HIT
        self.compiled.append((statement, cached))
