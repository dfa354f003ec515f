"""What a service reads from its database over a while, from MariaDB's general log.

``GeneralLog()`` as a context manager turns the server's general log on (into a file of
its own in the server's data directory) and restores the server's settings on exit; it
notes, while on, which connection belongs to which database (``information_schema.
PROCESSLIST``, and the log's own Connect lines). ``reads(database, table)`` then gives
each SELECT on ``table`` that the connections of ``database`` sent, run again on that
database: its text and the rows it returns. Statements are logged with their
parameters in place (PyMySQL sends them so), and only SELECTs are ever run again.

The general log is the server's, so it records every database's statements while it is
on: keep the window short (a minute or two).
"""

from __future__ import annotations

import re
import threading
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pymysql
import pymysql.cursors

MARIADB: dict[str, Any] = {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}
#: one entry of the general log: [time] thread-id command<TAB>argument
_ENTRY = re.compile(r"^(?:\d{6}\s+\d{1,2}:\d{2}:\d{2})?\s+(\d+)\s([A-Za-z_ ]+?)\t(.*)$")
_CONNECT = re.compile(r"^\S+@\S+ on (\S*)")


@dataclass(slots=True)
class Read:
    """One SELECT as the service sent it, and the rows it returns."""

    sql: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    def count(self, values: set[str]) -> int:
        """How many of its rows carry one of ``values`` (in any column)."""
        return sum(1 for row in self.rows if values & {str(v) for v in row.values()})


def connect(database: str | None = None) -> pymysql.connections.Connection:
    return pymysql.connect(autocommit=True, database=database,
                           cursorclass=pymysql.cursors.DictCursor, **MARIADB)


class GeneralLog:
    def __init__(self) -> None:
        self.name = f"zundefects-general-{uuidlib.uuid4().hex[:8]}.log"
        self.thread_db: dict[int, str | None] = {}
        self.entries: list[tuple[int, str, str]] = []
        self._saved: dict[str, Any] = {}
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    def __enter__(self) -> Self:
        with connect() as conn, conn.cursor() as cur:
            cur.execute("SELECT @@GLOBAL.general_log AS on_, @@GLOBAL.general_log_file AS "
                        "file, @@GLOBAL.log_output AS output, @@datadir AS datadir")
            self._saved = dict(cur.fetchone())
            if self._saved["on_"]:
                raise AssertionError("MariaDB's general log is on already: someone else "
                                     "is reading it; try again later")
            cur.execute("SET GLOBAL general_log_file = %s", (self.name,))
            if "FILE" not in str(self._saved["output"]).upper():
                cur.execute("SET GLOBAL log_output = 'FILE'")
            cur.execute("SET GLOBAL general_log = 1")
        self._watcher = threading.Thread(target=self._watch, name="processlist", daemon=True)
        self._watcher.start()
        return self

    def _watch(self) -> None:
        """Which connection uses which database, every second while the log is on."""
        with connect() as conn, conn.cursor() as cur:
            while not self._stop.is_set():
                cur.execute("SELECT ID, DB FROM information_schema.PROCESSLIST")
                for row in cur.fetchall():
                    if row["DB"]:
                        self.thread_db.setdefault(int(row["ID"]), row["DB"])
                self._stop.wait(1.0)

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(10)
        with connect() as conn, conn.cursor() as cur:
            cur.execute("SET GLOBAL general_log = 0")
            cur.execute("SET GLOBAL general_log_file = %s", (self._saved["file"],))
            cur.execute("SET GLOBAL log_output = %s", (self._saved["output"],))
        path = Path(self._saved["datadir"]) / self.name
        try:
            self._parse(path.read_text(errors="replace"))
        finally:
            path.unlink(missing_ok=True)

    def _parse(self, text: str) -> None:
        for line in text.splitlines():
            m = _ENTRY.match(line)
            if m:
                self.entries.append((int(m.group(1)), m.group(2).strip(), m.group(3)))
            elif self.entries:                       # a statement's next line
                thread, command, argument = self.entries[-1]
                self.entries[-1] = (thread, command, f"{argument}\n{line}")
        for thread, command, argument in self.entries:
            if command == "Connect":
                m = _CONNECT.match(argument)
                if m and m.group(1):
                    self.thread_db[thread] = m.group(1)

    def reads(self, database: str, table: str) -> list[Read]:
        """Each SELECT on ``table`` the connections of ``database`` sent, run again."""
        on_table = re.compile(rf"\bFROM\s+`?{re.escape(table)}`?(?![\w`])", re.IGNORECASE)
        found = [Read(argument) for thread, command, argument in self.entries
                 if command == "Query" and self.thread_db.get(thread) == database
                 and argument.lstrip().upper().startswith("SELECT")
                 and on_table.search(argument)]
        with connect(database) as conn, conn.cursor() as cur:
            for read in found:
                cur.execute(read.sql)   # no arguments: PyMySQL formats nothing
                read.rows = list(cur.fetchall())
        return found
