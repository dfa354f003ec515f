"""What every table module builds on: the declarative ``Base`` (one metadata for all
tables), the timestamp column type and mixin, and ``utcnow``. ``models`` (Zun's
records) and ``placement_models`` (the embedded Placement's) both import it, so
neither imports the other for it."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import DateTime
from sqlalchemy.dialects import mysql
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> dt.datetime:
    """Naive UTC, as Zun stores every timestamp."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


#: Timestamps keep microseconds everywhere: MariaDB's plain DATETIME drops them, which
#: start-up recovery's "created after the agent started" comparison cannot afford.
Timestamp = DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")


class Base(DeclarativeBase):
    pass


class TimestampMixin:
    created_at: Mapped[dt.datetime] = mapped_column(Timestamp, default=utcnow)
    updated_at: Mapped[dt.datetime | None] = mapped_column(Timestamp, onupdate=utcnow)
