"""The database answers and is at this code's migration head; every compute agent has
sent a heartbeat within ``service_down_time``."""

from __future__ import annotations

import datetime as dt
from typing import Any

from oslo_upgradecheck.upgradecheck import Code, Result
from sqlalchemy import create_engine, make_url, select

from berth.db import migrate, nodes
from berth.db.base import utcnow
from berth.db.models import ZunService

_RUN_UPGRADE = "run `berth db upgrade --config-file <your file>`"


def printable(url: str) -> str:
    """``url`` without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: say so, hide it all
        return "<unreadable URL>"


def check_schema(url: str, head: str = migrate.HEAD) -> Result:
    try:
        current = migrate.current_revision(url)
    except Exception as err:  # noqa: BLE001 - any failure to connect is the answer
        return Result(Code.FAILURE, f"Cannot reach the database at {printable(url)}: "
                                    f"{err}. Check [database]connection and that the "
                                    f"server runs and accepts this user.")
    if current == head:
        return Result(Code.SUCCESS, f"{printable(url)} is at migration revision {head}.")
    if current is None:
        return Result(Code.FAILURE, f"The database at {printable(url)} holds no berth "
                                    f"schema: {_RUN_UPGRADE} before starting berth.")
    return Result(Code.FAILURE, f"The database at {printable(url)} is at migration "
                                f"revision {current}, this berth needs {head}: "
                                f"{_RUN_UPGRADE} (if {current} is newer than {head}, "
                                f"this berth is older than the one that migrated it).")


_AGENTS = select(ZunService.host, ZunService.disabled, ZunService.forced_down,
                 ZunService.last_seen_up, ZunService.updated_at, ZunService.created_at
                 ).where(ZunService.binary == nodes.COMPUTE_BINARY).order_by(ZunService.host)


def check_agents(url: str, down_time: int, now: dt.datetime | None = None) -> Result:
    """Warning for each agent whose heartbeat is older than ``down_time`` seconds (or
    that is forced down): it is stopped, cut off, or a node that was removed."""
    try:
        if migrate.current_revision(url) is None:
            return Result(Code.WARNING, "Not checked: the database holds no berth schema "
                                        "(see the database check).")
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                rows = conn.execute(_AGENTS).all()
        finally:
            engine.dispose()
    except Exception as err:  # noqa: BLE001 - reported, like the schema check's
        return Result(Code.FAILURE, f"Cannot read the compute agents' service records: "
                                    f"{err}")
    if not rows:
        return Result(Code.SUCCESS, "No compute agent has registered yet.")
    now = now or utcnow()
    down = [_describe_down(row, now) for row in rows if not nodes.service_is_up(
        row, down_time, now)]
    if not down:
        return Result(Code.SUCCESS, f"{len(rows)} compute agent(s), each heard from within "
                                    f"[DEFAULT]service_down_time ({down_time} s).")
    return Result(Code.WARNING, f"{len(down)} of {len(rows)} compute agent(s) down: "
                                f"{'; '.join(down)}. Start berth-compute there (the "
                                f"scheduler skips a down node), or remove a node that is "
                                f"gone with `openstack appcontainer service delete "
                                f"<host> {nodes.COMPUTE_BINARY}`.")


def _describe_down(row: Any, now: dt.datetime) -> str:
    host = row.host
    notes = ["disabled"] if row.disabled else []
    if row.forced_down:
        notes.append("forced down")
    last = row.last_seen_up or row.updated_at
    if last is not None:
        ago = int((now - last).total_seconds())
        notes.append(f"last heartbeat {last:%Y-%m-%d %H:%M:%S} UTC, {ago} s ago")
    else:
        notes.append("no heartbeat ever")
    return f"{host} ({', '.join(notes)})"
