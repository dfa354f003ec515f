"""berth's database: refused unless empty, then every row in one transaction.

Empty means no row in any of berth's tables (a schema already migrated is fine: a
first run killed half-way leaves exactly that, and the transaction that was writing
never committed). The ids Zun gave its rows are kept, so PostgreSQL's sequences are
moved past them before the commit.
"""

from __future__ import annotations

import os

from sqlalchemy import create_engine, func, insert, inspect, select, text

from berth.db.base import Base
from berth.takeover.plan import ORDER, Plan, table


class TargetRefused(Exception):
    """berth's database cannot take the import (the message says why)."""


def _exists(url: str) -> bool:
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///"):]
        return path == ":memory:" or os.path.exists(path)
    return True


def check_empty(url: str) -> None:
    """TargetRefused when berth's database at ``url`` holds any row."""
    if not _exists(url):
        return
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            present = set(inspect(conn).get_table_names())
            if "zun_service" in present and "task_deadline" not in {
                    c["name"] for c in inspect(conn).get_columns("container")}:
                raise TargetRefused(
                    "berth's [database]connection names a Zun database (its container "
                    "table has no task_deadline): berth needs a database of its own, new "
                    "and empty; Zun's is only read, through --zun-connection")
            busy = []
            for name in sorted(Base.metadata.tables):
                if name in present:
                    count = conn.execute(select(func.count()).select_from(table(name))).scalar()
                    if count:
                        busy.append(f"{name} ({count})")
    finally:
        engine.dispose()
    if busy:
        raise TargetRefused(
            f"berth's database is not empty: {', '.join(busy[:6])}"
            f"{' ...' if len(busy) > 6 else ''} rows. The import writes only into a new, "
            f"empty database: point [database]connection at one (berth db upgrade makes "
            f"the schema), or drop this one if it holds nothing to keep")


def write(url: str, plan: Plan) -> None:
    """Every row of ``plan`` in one transaction (all or nothing)."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("PRAGMA foreign_keys = ON")
            for name in ORDER:
                keys = {k for row in plan.rows[name] for k in row}
                rows = [{k: row.get(k) for k in keys} for row in plan.rows[name]]
                for start in range(0, len(rows), 500):
                    conn.execute(insert(table(name)), rows[start:start + 500])
            if conn.dialect.name == "postgresql":
                for name in ORDER:
                    if "id" in table(name).c and plan.rows[name]:
                        conn.execute(text(
                            f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                            f"(SELECT max(id) FROM {name}))"))
    finally:
        engine.dispose()
