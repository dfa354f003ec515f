"""The engine and its sessions.

On SQLite (the embedded default) the file runs in WAL mode so that readers never wait
for the writer; every transaction that writes starts with ``BEGIN IMMEDIATE`` so that
two writers queue on the lock (``busy_timeout``) instead of failing with "database is
locked" when a read transaction tries to upgrade. PostgreSQL and MariaDB need none of
this: one engine serves both kinds of session there, at READ COMMITTED on both.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import SingletonThreadPool

LOG = logging.getLogger(__name__)


def default_url(state_path: str) -> str:
    return f"sqlite:///{os.path.join(state_path, 'berth.sqlite')}"


#: The JSON texts most of a row's JSON columns hold (no labels, no ports ...).
_EMPTY_JSON: dict[str, Callable[[], Any]] = {"{}": dict, "[]": list, "null": lambda: None}


#: A number orjson would read differently from the stdlib (an integer beyond 64 bits
#: becomes a float there): such texts go to ``json.loads``.
_LONG_NUMBER = re.compile(r"\d{19}")


def _json_loads(text: str) -> Any:
    """The JSON columns' reader. A container row has fourteen, most of them empty:
    those are built directly, which skips ``json.loads``'s regular expressions
    (a list of 53 rows spent a third of its time there); the others are read by
    orjson (~6x faster), unless they hold what only the stdlib reads as it was
    written (a 19-digit number; NaN or Infinity)."""
    make = _EMPTY_JSON.get(text)
    if make is not None:
        return make()
    if _LONG_NUMBER.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def _sqlite_engine(url: str, immediate: bool, echo: bool, per_thread: bool = False
                   ) -> Engine:
    """The writers' engine holds one connection: SQLite runs one write transaction at a
    time anyway, and a writer waiting for the pool's connection is woken the moment it
    is returned, where a writer waiting on SQLite's lock polls it with growing sleeps
    (1, 2, 5 ... 100 ms: the busy handler). Writers of other processes still queue on
    the lock (``busy_timeout``). Readers (WAL: they never wait for the writer) keep 4
    connections and open up to 16 more under load, closed when given back: each kept
    connection holds its page cache and prepared statements (~0.3 MiB).
    ``per_thread``: one connection for each thread that reads (``Database.loop_reader``)."""
    path = make_url(url).database
    if path and path != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    pooling: dict[str, Any] = (
        {"poolclass": SingletonThreadPool, "pool_size": 2} if per_thread else
        {"pool_size": 1 if immediate else 4, "max_overflow": 0 if immediate else 16,
         "pool_timeout": 60})
    engine = create_engine(
        url, echo=echo, connect_args={"check_same_thread": False, "timeout": 30},
        json_deserializer=_json_loads, **pooling,
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):  # type: ignore[no-untyped-def]
        # Let SQLAlchemy, not the driver, issue BEGIN (pysqlite's own handling is lazy).
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # type: ignore[no-untyped-def]
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class Database:
    """Owns the engine(s); hands out sessions. Thread-safe."""

    def __init__(self, url: str, *, pool_size: int = 10, echo: bool = False) -> None:
        self.url = url
        self.is_sqlite = make_url(url).get_backend_name() == "sqlite"
        if self.is_sqlite:
            self.engine = _sqlite_engine(url, immediate=False, echo=echo)
            self._write_engine = _sqlite_engine(url, immediate=True, echo=echo)
        else:
            # READ COMMITTED everywhere: PostgreSQL's default, and on MariaDB/MySQL it
            # replaces REPEATABLE READ, whose snapshots and gap locks berth's short
            # compare-and-swap transactions do not want (same semantics on both).
            self.engine = create_engine(
                url, echo=echo, pool_size=pool_size, max_overflow=2 * pool_size,
                pool_pre_ping=True, pool_recycle=3600, isolation_level="READ COMMITTED",
            )
            self._write_engine = self.engine
        self._reader = sessionmaker(self.engine, expire_on_commit=False)
        self._writer = sessionmaker(self._write_engine, expire_on_commit=False)
        # SQLite only: reads on the API's event loop, on a connection of that thread's
        # own (made on first use), so that they never wait for a pooled one.
        self._loop_engine = _sqlite_engine(url, immediate=False, echo=echo,
                                           per_thread=True) if self.is_sqlite else None
        self._loop_reader = sessionmaker(self._loop_engine, expire_on_commit=False) \
            if self._loop_engine is not None else None

    @contextmanager
    def reader(self) -> Iterator[Session]:
        """A session for reads only; objects stay usable after it closes."""
        with self._reader() as session:
            yield session

    @property
    def reads_on_loop(self) -> bool:
        """Whether ``loop_reader`` is there: a read of a local SQLite file takes a
        fraction of a millisecond and never waits for the network or a writer (WAL),
        so the API may read on its event loop, without a thread hop per request."""
        return self._loop_reader is not None

    @contextmanager
    def loop_reader(self) -> Iterator[Session]:
        """``reader`` for the event loop's thread (SQLite only: ``reads_on_loop``)."""
        if self._loop_reader is None:
            raise RuntimeError("reads on the event loop are for SQLite only")
        with self._loop_reader() as session:
            yield session

    @contextmanager
    def writer(self) -> Iterator[Session]:
        """A session whose transaction commits when the block ends (rolls back on error)."""
        with self._writer() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
        if self._loop_engine is not None:
            self._loop_engine.dispose()
        if self._write_engine is not self.engine:
            self._write_engine.dispose()
