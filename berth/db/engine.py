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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import SingletonThreadPool

LOG = logging.getLogger(__name__)


def default_url(state_path: str) -> str:
    return f"sqlite:///{os.path.join(state_path, 'berth.sqlite')}"


#: The JSON texts most of a row's JSON columns hold (no labels, no ports ...), as
#: SQLite and MariaDB's drivers hand them over (str) and as psycopg does (bytes).
_EMPTY_JSON: dict[str | bytes, Callable[[], Any]] = {"{}": dict, "[]": list, "null": lambda: None}
_EMPTY_JSON.update({text.encode(): make for text, make in list(_EMPTY_JSON.items())
                    if isinstance(text, str)})


#: A number orjson would read differently from the stdlib (an integer beyond 64 bits
#: becomes a float there): such texts go to ``json.loads``.
_LONG_NUMBER = re.compile(r"\d{19}")
_LONG_NUMBER_BYTES = re.compile(rb"\d{19}")


def _json_loads(text: str | bytes) -> Any:
    """The JSON columns' reader, on every database (psycopg hands it bytes). A
    container row has fourteen, most of them empty: those are built directly, which
    skips the parser (a list of 53 rows spent a third of its time in ``json.loads``'s
    regular expressions); the others are read by orjson (~6x faster), unless they
    hold what only the stdlib reads as it was written (a 19-digit number; NaN or
    Infinity)."""
    make = _EMPTY_JSON.get(text)
    if make is not None:
        return make()
    long_number = _LONG_NUMBER_BYTES if isinstance(text, bytes) else _LONG_NUMBER
    if long_number.search(text) is None:  # type: ignore[arg-type]
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def read_json(value: str | bytes | None) -> Any:
    """A JSON column's value as ``_json_loads`` reads it, None for NULL: the whole of
    a column's reading in one call (``berth.db.container_pages.JSON_READ``)."""
    return None if value is None else _json_loads(value)


def _sqlite_engine(url: str, immediate: bool, echo: bool, per_thread: bool = False
                   ) -> Engine:
    """The writers' engine holds one connection: SQLite runs one write transaction at a
    time anyway, and a writer waiting for the pool's connection is woken the moment it
    is returned, where a writer waiting on SQLite's lock polls it with growing sleeps
    (1, 2, 5 ... 100 ms: the busy handler). Writers of other processes still queue on
    the lock (``busy_timeout``). Readers (WAL: they never wait for the writer) keep 4
    connections and open up to 16 more under load, closed when given back: each kept
    connection holds its page cache and prepared statements (~0.3 MiB).
    ``per_thread``: one connection for each thread that reads (``Database.loop_connection``)."""
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
        # An AUTOCOMMIT connection (``Database.loop_connection``) is never committed
        # nor rolled back: a BEGIN there would hold a read snapshot for ever.
        if conn.get_execution_options().get("isolation_level") != "AUTOCOMMIT":
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


#: Seconds a pooled connection may have been idle and still be handed out unchecked.
PING_AFTER_IDLE = 1.0


def ping_when_idle(engine: Engine, idle: float,
                   clock: Callable[[], float] = time.monotonic) -> None:
    """Make ``engine``'s pool check a connection (a round trip) before it hands it
    out, only when the connection has been idle in the pool for ``idle`` seconds or
    more; one found dead is replaced (SQLAlchemy's DisconnectionError: the pool
    reconnects, up to 3 times, and invalidates the connections as old as it).

    SQLAlchemy's ``pool_pre_ping`` checks every checkout: at 50 nodes that was
    about 12 round trips per container created (3 in the API, 9 on the agent), a
    third more than its statements (bench P15). A connection given back less than
    ``idle`` seconds ago was working then; a server restarted within that second
    fails the one statement that meets it, as it fails the statements running
    when it went away, and the pool drops every connection older than that
    failure."""

    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_conn: Any, record: Any) -> None:
        record.info["berth_idle_since"] = clock()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        since = record.info.pop("berth_idle_since", None)
        if since is None or clock() - since < idle:
            return          # new (just connected), or back in the pool a moment ago
        try:
            cursor = dbapi_conn.cursor()
            try:
                cursor.execute("SELECT 1")
            finally:
                cursor.close()
            # Out of the transaction the driver began for it (MariaDB's; PostgreSQL's
            # pooled connections are in autocommit, where this sends nothing): a
            # connection handed out for a transaction must not be in one already.
            dbapi_conn.rollback()
        except Exception as err:
            raise DisconnectionError(f"pooled connection is dead: {err}") from err


def _pooled_level(url: str) -> str:
    """The isolation level of ``Database.engine``'s pooled connections as they wait
    in the pool and serve reads: on PostgreSQL, autocommit. psycopg sends a
    transaction's BEGIN, and the pool's ROLLBACK when the connection comes back, as
    round trips of their own: a read of one statement took three, and the agents of
    the fleet bench (P15) spent more of their CPU in the database client than in
    berth. At READ COMMITTED, the level berth runs at, each statement of a transaction
    sees its own snapshot anyway, so reads lose no consistency outside one; the locks
    (``SELECT ... FOR UPDATE``) are taken in writers only, whose transactions switch
    their connection to READ COMMITTED as they take it from the pool and back as they
    return it (``_transactions_engine``), without a round trip on psycopg. The reads
    and one-statement writes, most of berth's statements, take their connection as it
    is: switching it for each of them cost 37 us of client CPU, a fifth of a read's
    (bench P15R's ``checkout``: 0.127 against 0.164 ms).
    MariaDB's drivers switch autocommit with a ``SET autocommit`` round trip each way,
    so MariaDB stays at READ COMMITTED, where it replaces REPEATABLE READ, whose
    snapshots and gap locks berth's short compare-and-swap transactions do not want."""
    return "AUTOCOMMIT" if make_url(url).get_backend_name() == "postgresql" else "READ COMMITTED"


def _transactions_engine(engine: Engine) -> Engine:
    """The engine writers' transactions run on: ``engine`` itself at READ COMMITTED;
    on PostgreSQL, whose pooled connections are in autocommit (``_pooled_level``),
    ``engine`` switching them to READ COMMITTED (the same pool)."""
    if engine.dialect.name != "postgresql":
        return engine
    return engine.execution_options(isolation_level="READ COMMITTED")


def _driver_args(url: str) -> dict[str, Any]:
    """psycopg's connections get the cursor that describes a statement's result once
    (``berth.db.psycopg_cursor``); other drivers nothing."""
    if make_url(url).get_driver_name() != "psycopg":
        return {}
    from berth.db.psycopg_cursor import DescribedOnceCursor
    return {"cursor_factory": DescribedOnceCursor}


def _connect_keeping_prepared(engine: Engine) -> None:
    """psycopg's connections of ``engine`` are ``berth.db.psycopg_connection``'s,
    which keep their prepared statements through a ROLLBACK; other drivers' are
    left alone."""
    if engine.dialect.driver != "psycopg":
        return
    from berth.db.psycopg_connection import KeepsPreparedConnection

    @event.listens_for(engine, "do_connect")
    def _connect(dialect: Any, record: Any, cargs: Any, cparams: Any) -> Any:
        return KeepsPreparedConnection.connect(*cargs, **cparams)


class Database:
    """Owns the engine(s); hands out sessions. Thread-safe."""

    def __init__(self, url: str, *, pool_size: int = 10, echo: bool = False) -> None:
        self.url = url
        self.is_sqlite = make_url(url).get_backend_name() == "sqlite"
        if self.is_sqlite:
            self.engine = _sqlite_engine(url, immediate=False, echo=echo)
            self._write_engine = _sqlite_engine(url, immediate=True, echo=echo)
        else:
            self.engine = create_engine(
                url, echo=echo, pool_size=pool_size, max_overflow=2 * pool_size,
                pool_recycle=3600, isolation_level=_pooled_level(url),
                json_deserializer=_json_loads, connect_args=_driver_args(url),
            )
            _connect_keeping_prepared(self.engine)
            ping_when_idle(self.engine, PING_AFTER_IDLE)
            self._write_engine = _transactions_engine(self.engine)
        self._read_engine = self.engine
        self._reader = sessionmaker(self._read_engine, expire_on_commit=False)
        self._writer = sessionmaker(self._write_engine, expire_on_commit=False)
        # SQLite only: reads on the API's event loop, on a connection of that thread's
        # own (made on first use), so that they never wait for a pooled one.
        self._loop_engine = _sqlite_engine(url, immediate=False, echo=echo,
                                           per_thread=True) if self.is_sqlite else None
        self._loop_connections = threading.local()

    @contextmanager
    def reader(self) -> Iterator[Session]:
        """A session for reads only; objects stay usable after it closes."""
        with self._reader() as session:
            yield session

    @property
    def reads_on_loop(self) -> bool:
        """Whether ``loop_connection`` is there: a read of a local SQLite file takes a
        fraction of a millisecond and never waits for the network or a writer (WAL),
        so the API may read on its event loop, without a thread hop per request."""
        return self._loop_engine is not None

    @contextmanager
    def loop_connection(self) -> Iterator[Connection]:
        """The calling thread's own connection for reads of ONE statement each
        (SQLite only: ``reads_on_loop``), kept open between them and in autocommit:
        no BEGIN nor ROLLBACK around the read, no checkout from a pool, no ORM session.
        SQLite runs each statement in a snapshot of its own, so a single SELECT is
        consistent; a read of several statements must use ``reader``. A status poll
        then spends a third of the time in the database it spent through a session
        (bench P1, P5)."""
        if self._loop_engine is None:
            raise RuntimeError("reads on the event loop are for SQLite only")
        conn: Connection | None = getattr(self._loop_connections, "conn", None)
        if conn is None:
            conn = self._loop_engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            self._loop_connections.conn = conn
        try:
            yield conn
        except BaseException:
            # whatever failed, the next read starts on a new connection
            self._loop_connections.conn = None
            conn.close()
            raise

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """``reader`` for Core statements: a plain connection, no ORM session (a read
        costs ~45 us less)."""
        with self._read_engine.connect() as conn:
            yield conn

    @contextmanager
    def write_connection(self) -> Iterator[Connection]:
        """``writer`` for Core statements: a transaction that commits when the block
        ends (rolls back on error), without an ORM session."""
        with self._write_engine.begin() as conn:
            yield conn

    @contextmanager
    def writer(self) -> Iterator[Session]:
        """A session whose transaction commits when the block ends (rolls back on error)."""
        with self._writer() as session, session.begin():
            yield session

    @property
    def _writes_in_autocommit(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    @contextmanager
    def one_statement_writer(self) -> Iterator[Session]:
        """``writer`` for a block that writes with ONE statement (an ``UPDATE ...
        RETURNING``; reads after it may follow, as after a commit): on PostgreSQL the
        statement runs in autocommit, a transaction of its own, without the BEGIN and
        COMMIT round trips (``_pooled_level``); elsewhere ``writer``."""
        if not self._writes_in_autocommit:
            with self.writer() as session:
                yield session
            return
        with self._reader() as session:
            yield session

    @contextmanager
    def one_statement_connection(self) -> Iterator[Connection]:
        """``write_connection`` for ONE write statement, as ``one_statement_writer``."""
        if not self._writes_in_autocommit:
            with self.write_connection() as conn:
                yield conn
            return
        with self._read_engine.connect() as conn:
            yield conn

    def ping(self) -> None:
        """Return when the database answers a ``SELECT 1`` (for /readyz); raise the
        driver's error otherwise."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    def dispose(self) -> None:
        self.engine.dispose()
        if self._loop_engine is not None:
            self._loop_engine.dispose()
        if self.is_sqlite:           # an engine of its own; elsewhere the same pool
            self._write_engine.dispose()
