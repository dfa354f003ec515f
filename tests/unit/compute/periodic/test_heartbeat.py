"""The heartbeat (one UPDATE of the agent's zun_service row) creates the row when
there is none, then counts each report and stamps last_seen_up; on a real SQLite
database."""

from __future__ import annotations

from berth.compute.periodic.heartbeat import heartbeat_spacing, update_zun_service
from berth.db import nodes
from berth.db.engine import Database


def _row(db: Database, host: str):  # type: ignore[no-untyped-def]
    [row] = [s for s in nodes.list_services(db, nodes.COMPUTE_BINARY) if s.host == host]
    return row


def test_the_heartbeat_creates_then_counts_and_stamps_the_service(db: Database) -> None:
    update_zun_service(db, "n1", None)
    first = _row(db, "n1")
    assert first.report_count == 1 and first.last_seen_up is not None
    update_zun_service(db, "n1", "zone-a")
    update_zun_service(db, "n1", None)        # no zone given: the row keeps its zone
    later = _row(db, "n1")
    assert (later.report_count, later.availability_zone) == (3, "zone-a")
    assert later.last_seen_up >= first.last_seen_up
    update_zun_service(db, "n2", None)
    assert _row(db, "n2").report_count == 1 and _row(db, "n1").report_count == 3
    assert nodes.service_is_up(later, 60)


def test_an_agent_beats_three_times_per_down_time_between_10_s_and_the_interval() -> None:
    assert heartbeat_spacing(60, 180) == 60          # the defaults: Zun's, once a minute
    assert heartbeat_spacing(60, 90) == 30
    assert heartbeat_spacing(60, 600) == 60          # never rarer than the interval
    assert heartbeat_spacing(60, 15) == 10           # never more often than every 10 s
    assert heartbeat_spacing(2, 5) == 2              # a short interval still rules
