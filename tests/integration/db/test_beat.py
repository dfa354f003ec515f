"""``nodes.beat``: an agent's heartbeat as one UPDATE of its service row, on each
database berth runs on (SQLite, PostgreSQL, MariaDB): the row made on the first beat,
then counted, stamped and, when the agent names one, zoned; the service's disabled
flag answered where the database returns it from the UPDATE."""

from __future__ import annotations

from sqlalchemy import select

from berth.db import nodes
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import ZunService

HOST = "node-a"


def _row(db: Database, host: str = HOST) -> ZunService:
    with db.reader() as s:
        row = s.scalars(select(ZunService).where(
            ZunService.host == host, ZunService.binary == nodes.COMPUTE_BINARY)).one()
    return row


def test_a_beat_counts_stamps_and_answers_the_disabled_flag(any_db: Database) -> None:
    db = any_db
    returns = db.engine.dialect.update_returning
    assert nodes.beat(db, HOST, nodes.COMPUTE_BINARY, None) is None   # made: not read
    nodes.beat(db, "node-b", nodes.COMPUTE_BINARY, None)
    first = _row(db)
    before = utcnow()
    assert nodes.beat(db, HOST, nodes.COMPUTE_BINARY, None) is (False if returns else None)
    second = _row(db)
    assert second.report_count == (first.report_count or 0) + 1
    assert second.last_seen_up is not None and second.last_seen_up >= before.replace(
        microsecond=0)
    assert second.availability_zone == first.availability_zone

    nodes.update_service(db, HOST, nodes.COMPUTE_BINARY, {"disabled": True})
    assert nodes.beat(db, HOST, nodes.COMPUTE_BINARY, "zone-2") is (True if returns else None)
    third = _row(db)
    assert (third.report_count, third.availability_zone) == (second.report_count + 1, "zone-2")
    assert _row(db, "node-b").report_count == first.report_count   # nobody else's row
