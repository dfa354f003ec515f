"""What every table module builds on: the declarative ``Base`` (one metadata for all
tables), the timestamp column type and mixin, and ``utcnow``. ``models`` (Zun's
records) and ``placement_models`` (the embedded Placement's) both import it, so
neither imports the other for it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import DateTime
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator, TypeEngine


def utcnow() -> dt.datetime:
    """Naive UTC, as Zun stores every timestamp."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class _Timestamp(TypeDecorator[dt.datetime]):
    """A DateTime that keeps microseconds everywhere: MariaDB's plain DATETIME drops
    them, which start-up recovery's "created after the agent started" comparison
    cannot afford. MySQL's type is imported only on MySQL and MariaDB: its dialect
    package costs a process on SQLite or PostgreSQL about 1 MiB of memory (bench P6a)."""

    impl = DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            from sqlalchemy.dialects.mysql import DATETIME
            return dialect.type_descriptor(DATETIME(fsp=6))
        return dialect.type_descriptor(DateTime())


Timestamp = _Timestamp()


class Base(DeclarativeBase):
    pass


class TimestampMixin:
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp, onupdate=utcnow)
