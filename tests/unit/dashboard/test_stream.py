"""The event stream's scope and events against a real (migrated SQLite) database: a
member's stream holds their project's rows without the admin-only keys, an admin's
``all_projects`` stream every project's, a batch is cut to what the scope sees, and a
stream whose token has expired ends after its snapshot."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.dashboard import stream
from berth.dashboard.watch import Batch, Change, ChangeWatcher
from berth.db import containers
from berth.db.engine import Database

MEMBER = RequestContext(user_id="alice", project_id="p1", roles=["member", "reader"])
ADMIN = RequestContext(user_id="admin", project_id="admin", roles=["admin"], is_admin=True)


def _state(db: Database) -> ApiState:
    return ApiState(db=db, compute=None, scheduler=None,  # type: ignore[arg-type]
                    settings=ApiSettings())


def _make(db: Database, project: str) -> str:
    return containers.create(db, {"name": f"in-{project}", "project_id": project,
                                  "status": "Running", "host": "node1"}).uuid


def test_a_member_sees_their_project_without_admin_keys(db: Database) -> None:
    mine, theirs = _make(db, "p1"), _make(db, "p2")
    scope = stream.authorize(MEMBER, all_projects=False)
    shot = stream.snapshot(_state(db), scope)
    assert [c["uuid"] for c in shot["containers"]] == [mine]
    assert "host" not in shot["containers"][0]
    batch = Batch((Change("container", theirs, "p2"), Change("container", mine, "p1"),
                   Change("container", "gone-uuid", "p2", deleted=True)))
    rendered = stream.render(_state(db), scope, batch)
    assert rendered is not None
    assert [c["uuid"] for c in rendered["containers"]] == [mine]
    assert rendered["deleted"] == []
    assert stream.render(_state(db), scope, Batch((Change("container", theirs, "p2"),))) \
        is None


def test_all_projects_needs_the_admin_rule(db: Database) -> None:
    with pytest.raises(exc.PolicyNotAuthorized):
        stream.authorize(MEMBER, all_projects=True)
    mine, theirs = _make(db, "p1"), _make(db, "p2")
    scope = stream.authorize(ADMIN, all_projects=True)
    shot = stream.snapshot(_state(db), scope)
    assert {c["uuid"] for c in shot["containers"]} == {mine, theirs}
    assert all(c["host"] == "node1" for c in shot["containers"])


def test_a_stream_ends_once_its_token_has_expired(db: Database) -> None:
    _make(db, "p1")
    scope = stream.authorize(MEMBER, all_projects=False, expires_at=time.time() - 1)

    async def read() -> list[bytes]:
        watcher = ChangeWatcher(db, interval=0.05)
        out = [chunk async for chunk in stream.events(_state(db), watcher, scope)]
        await watcher.stop()
        return out

    chunks: list[Any] = asyncio.run(read())
    assert len(chunks) == 1 and chunks[0].startswith(b"event: snapshot\ndata: ")
    data = json.loads(chunks[0].split(b"data: ", 1)[1])
    assert len(data["containers"]) == 1
