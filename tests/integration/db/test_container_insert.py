"""A container's create (``containers.create``) on the servers berth runs on: on
PostgreSQL its row and its create action go in one statement, and the keys of both
come back; more records along (a volume and its mapping, which needs the volume's
id) follow in turn; elsewhere each is an INSERT of its own, in one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from support.statements import Statements

from berth.common.context import RequestContext
from berth.db import actions, capsules, containers
from berth.db import volumes as db_volumes
from berth.db.engine import Database


def test_the_row_and_its_action_in_one_statement(db: Database) -> None:
    ctx = RequestContext.admin("req-1")
    made: list[Any] = []

    def along(uuid: str) -> list[Any]:
        made.append(actions.new_action(ctx, uuid, "create"))
        return made

    seen = Statements(db)
    row = containers.create(db, {"project_id": "p1", "status": "Creating",
                                 "labels": {"a": "b"}, "command": ["sleep", "1"]},
                            along=along)
    writes = [w for w in seen.sent if w in ("INSERT", "WITH")]
    assert writes == (["WITH"] if db.engine.dialect.name == "postgresql"
                      else ["INSERT", "INSERT"])
    assert row.id is not None and made[0].id is not None
    stored = containers.get_by_uuid(db, row.uuid)
    assert (stored.id, stored.labels, stored.command) == (row.id, {"a": "b"}, ["sleep", "1"])
    action, _ = actions.get_action(db, row.uuid, "req-1")
    assert (action.id, action.action, action.request_id) == (made[0].id, "create", "req-1")


def action_volume_and_mapping(request_id: str, volume_id: str, mounted_by: str | None = None
                              ) -> Callable[[str], Iterator[Any]]:
    """``along`` for a create: its action, a volume, and the volume's mapping to the
    row (or to ``mounted_by``), which needs the volume's id."""
    def along(uuid: str) -> Iterator[Any]:
        yield actions.new_action(RequestContext.admin(request_id), uuid, "create")
        volume = db_volumes.new_volume(project_id="p1", user_id="u1", volume_provider="local",
                                       cinder_volume_id=volume_id, host="n1")
        yield volume
        yield db_volumes.new_mapping(volume, mounted_by or uuid, "/data")
    return along


def test_more_records_along_are_inserted_in_turn(db: Database) -> None:
    seen = Statements(db)
    row = containers.create(db, {"project_id": "p1", "status": "Creating"},
                            along=action_volume_and_mapping("req-1", "v-1"))
    writes = [w for w in seen.sent if w in ("INSERT", "WITH")]
    assert writes == (["WITH", "INSERT", "INSERT"] if db.engine.dialect.name == "postgresql"
                      else ["INSERT"] * 4)
    action, _ = actions.get_action(db, row.uuid, "req-1")
    assert action.action == "create"
    mounts = db_volumes.mounts_of(db, [row.uuid])[row.uuid]
    assert [(m.mapping.container_path, m.volume.cinder_volume_id) for m in mounts] == [("/data", "v-1")]


def test_a_capsule_goes_in_with_its_action_and_then_its_members(db: Database) -> None:
    seen = Statements(db)
    row = capsules.create(db, {"project_id": "p1", "status": "Creating"},
                          [{"project_id": "p1", "uuid": "member-1",
                            "container_type": capsules.MEMBER},
                           {"project_id": "p1", "uuid": "member-2",
                            "container_type": capsules.INIT_MEMBER}],
                          along=action_volume_and_mapping("req-2", "v-2", "member-1"))
    writes = [w for w in seen.sent if w in ("INSERT", "WITH")]
    assert writes == (["WITH"] + ["INSERT"] * 4 if db.engine.dialect.name == "postgresql"
                      else ["INSERT"] * 6)
    init, members = capsules.members_of(db, row.id)
    assert sorted(m.uuid for m in [*init, *members]) == ["member-1", "member-2"]
    action, _ = actions.get_action(db, row.uuid, "req-2")
    assert action.action == "create"
    mounts = db_volumes.mounts_of(db, ["member-1"])["member-1"]
    assert [m.volume.cinder_volume_id for m in mounts] == ["v-2"]
