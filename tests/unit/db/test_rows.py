"""berth.db.rows.detached: a row read or returned by a Core statement, as the object a
session's query leaves once the session closed."""

from __future__ import annotations

from sqlalchemy import event, inspect, select

from berth.db import containers, rows
from berth.db.engine import Database
from berth.db.models import Container


def test_a_detached_row_reads_as_a_loaded_one_and_flushes_nothing(db: Database) -> None:
    made = containers.create(db, {"project_id": "p1", "status": "Running",
                                  "labels": {"a": "b"}, "command": ["sleep", "1"]})
    with db.connection() as conn:
        found = conn.execute(select(*Container.__table__.c).where(
            Container.__table__.c.uuid == made.uuid)).one()
    row = rows.detached(Container, {**found._mapping, "registry_uuid": None})
    assert inspect(row).detached and not inspect(row).modified
    assert (row.uuid, row.status, row.labels, row.command, row.id) == \
        (made.uuid, "Running", {"a": "b"}, ["sleep", "1"], made.id)
    loaded = containers.get_by_uuid(db, made.uuid)
    assert {k: v for k, v in row.__dict__.items() if not k.startswith("_sa_")} == \
        {k: v for k, v in loaded.__dict__.items() if not k.startswith("_sa_")}
    sent: list[str] = []
    for engine in {db.engine, db._write_engine}:     # SQLite writes through its own
        event.listen(engine, "before_cursor_execute",
                     lambda conn, cursor, statement, *_: sent.append(statement))
    with db.writer() as s:      # taken into a session again, it writes nothing
        s.add(row)
        assert row.status == "Running"
    assert not any(statement.lstrip().upper().startswith(("UPDATE", "INSERT"))
                   for statement in sent)
