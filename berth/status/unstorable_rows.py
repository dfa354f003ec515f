"""Rows that hold a string berth cannot store or pass on (issue 42): a lone UTF-16
surrogate or a NUL (``berth.common.unstorable``), let in by a berth older than the
check that now refuses them. The API renders such a row with U+FFFD in place of each
surrogate, but the container engine, a log line or another database may still fail on
it: each is named (table, row, column and field) with what to do about it.

Reads every table's text and JSON columns (reflected, so any revision will do) a
batch of rows at a time: a large deployment's check takes longer, and changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from oslo_upgradecheck.upgradecheck import Code, Result
from sqlalchemy import JSON, MetaData, String, Text, create_engine, select
from sqlalchemy.engine import Connection

from berth.common import unstorable

#: At most this many rows are named; the count says how many more there are.
NAMED = 20
_BATCH = 1000

#: What to do about a bad row of each table (the rest: ``_ANY``).
_REPAIR = {
    "container": ("show it with `openstack appcontainer show <uuid>` (bad characters "
                  "appear as U+FFFD) and, as an admin, delete it with `openstack "
                  "appcontainer delete --force <uuid>` (a capsule: `openstack capsule "
                  "delete <uuid>`), then create it again with good values"),
    "registry": ("delete it with `openstack appcontainer registry delete <uuid>` and "
                 "create it again"),
    "network": "delete it with `openstack appcontainer network delete <uuid>`",
}
_ANY = ("it goes with the container it belongs to (delete that); otherwise edit or "
        "delete the row with the database's own client")


def check_unstorable_rows(url: str) -> Result:
    """Warning naming each row (at most ``NAMED``) with an unstorable string; Success
    when there is none."""
    try:
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                found = list(_bad_rows(conn))
        finally:
            engine.dispose()
    except Exception as err:  # noqa: BLE001 - reported, like the schema check's
        return Result(Code.FAILURE, f"Cannot read berth's tables: {err}")
    if not found:
        return Result(Code.SUCCESS, "No row holds a NUL or a lone surrogate.")
    named = "; ".join(f"{table} {row} {column}" + (f" field {field}" if field else "")
                      for table, row, column, field in found[:NAMED])
    more = f" and {len(found) - NAMED} more" if len(found) > NAMED else ""
    tables = sorted({table for table, _row, _column, _field in found})
    todo = "; ".join(f"a {t} row: {_REPAIR.get(t, _ANY)}" for t in tables)
    return Result(Code.WARNING, f"{len(found)} value(s) hold a NUL or a lone UTF-16 "
                                f"surrogate, which an older berth let in and the engine "
                                f"or database may refuse: {named}{more}. For {todo}.")


def _bad_rows(conn: Connection) -> Iterator[tuple[str, str, str, str]]:
    """(table, row, column, field) of each unstorable string in the database."""
    meta = MetaData()
    meta.reflect(conn)
    for table in meta.sorted_tables:
        texts = [c for c in table.columns if isinstance(c.type, (String, Text, JSON))]
        if not texts:
            continue
        keys = [c for c in ("uuid", "id") if c in table.columns] or \
            [c.name for c in table.primary_key.columns]
        query = select(*(table.columns[k] for k in keys), *texts)
        result = conn.execution_options(yield_per=_BATCH).execute(query)
        for row in result:
            ident = " ".join(f"{k} {row._mapping[k]}" for k in keys[:1]) or "(no key)"
            for column in texts:
                for path in _unstorable_in(row._mapping[column.name]):
                    yield table.name, ident, column.name, \
                        unstorable.field_name(path) if path else ""


def _unstorable_in(value: Any) -> Iterator[tuple[str | int, ...]]:
    """The paths of ``value``'s unstorable strings; a text column that holds JSON (a
    JSON column a database reports as text) is read as JSON, so an escaped
    ``\\ud800`` counts."""
    if isinstance(value, str) and not unstorable.UNSTORABLE.search(value) \
            and unstorable.ESCAPE.search(value.encode("utf-8", "surrogatepass")):
        try:
            value = json.loads(value)
        except ValueError:
            return
    for path, _text in unstorable.unstorable_strings(value):
        yield path
