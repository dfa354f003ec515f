"""What a Database's engine sends, counted by a test."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from berth.db.engine import Database


class Statements:
    """The statements the engine sends through a cursor, by their first word."""

    def __init__(self, db: Database) -> None:
        self.sent: list[str] = []
        event.listen(db.engine, "before_cursor_execute", self._sql)

    def _sql(self, conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        self.sent.append(statement.split()[0].upper())


