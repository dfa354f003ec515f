"""``nodes.up_compute_hosts``: the database chooses the hosts whose compute service is
up, and its choice is ``nodes.service_is_up``'s, row for row, on each database berth
runs on (SQLite, PostgreSQL, MariaDB)."""

from __future__ import annotations

import datetime as dt

from berth.db import nodes
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import ZunService

DOWN_TIME = 60


def test_the_database_chooses_the_up_hosts_as_service_is_up_does(any_db: Database) -> None:
    now = utcnow()
    recent, old = now - dt.timedelta(seconds=5), now - dt.timedelta(seconds=DOWN_TIME + 30)
    rows = [
        ZunService(host="beat", binary=nodes.COMPUTE_BINARY, last_seen_up=recent,
                   forced_down=False, created_at=old),
        ZunService(host="forced-down", binary=nodes.COMPUTE_BINARY, last_seen_up=recent,
                   forced_down=True, created_at=old),
        ZunService(host="forced-null", binary=nodes.COMPUTE_BINARY, last_seen_up=recent,
                   forced_down=None, created_at=old),
        ZunService(host="silent", binary=nodes.COMPUTE_BINARY, last_seen_up=old,
                   forced_down=False, created_at=old),
        ZunService(host="updated-only", binary=nodes.COMPUTE_BINARY, last_seen_up=None,
                   forced_down=False, created_at=old, updated_at=recent),
        ZunService(host="created-only", binary=nodes.COMPUTE_BINARY, last_seen_up=None,
                   forced_down=False, created_at=recent),
        ZunService(host="created-long-ago", binary=nodes.COMPUTE_BINARY, last_seen_up=None,
                   forced_down=False, created_at=old),
        ZunService(host="not-compute", binary="zun-cni-daemon", last_seen_up=recent,
                   forced_down=False, created_at=old),
    ]
    with any_db.writer() as s:
        s.add_all(rows)
    up = nodes.up_compute_hosts(any_db, DOWN_TIME)
    assert up == {"beat", "forced-null", "updated-only", "created-only"}
    assert up == {svc.host for svc in nodes.list_services(any_db, nodes.COMPUTE_BINARY)
                  if nodes.service_is_up(svc, DOWN_TIME)}
