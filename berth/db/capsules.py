"""Queries on capsules: a ``container`` row of type 1 and its members, rows of type 2
(containers) and 3 (init containers) whose ``capsule_id`` is the capsule's ``id``
(model.md §2.1). A capsule and its members are written and removed together."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, delete, select

from berth.db import rows
from berth.db.engine import Database
from berth.db.models import Container

CAPSULE = 1
MEMBER = 2
INIT_MEMBER = 3
MEMBER_TYPES = (MEMBER, INIT_MEMBER)


def create(db: Database, capsule: Mapping[str, Any], members: Sequence[Mapping[str, Any]],
           *, along: Callable[[str], Iterable[Any]] | None = None,
           guard: Callable[[Connection], object] | None = None) -> Container:
    """Insert the capsule and its ``members`` (each with its ``container_type``) in one
    transaction, after ``guard(conn)`` (the quota check) and with ``along(uuid)``'s
    records (the create action, first: it goes in with the capsule, one statement on
    PostgreSQL; then volumes and their mappings, which name members by uuid). The
    capsule comes back unattached."""
    row = Container(**capsule, container_type=CAPSULE)
    row.uuid = row.uuid or str(uuidlib.uuid4())
    with db.write_connection() as conn:
        if guard is not None:
            guard(conn)
        others = iter(along(row.uuid) if along is not None else ())
        rows.insert_new_leading(conn, row, others)
        for values in members:
            member = Container(**values)
            member.uuid = member.uuid or str(uuidlib.uuid4())
            member.capsule_id = row.id
            rows.insert_new(conn, member)
        for other in others:
            rows.insert_new(conn, other)
    return row


def members_of(db: Database, capsule_id: int) -> tuple[list[Container], list[Container]]:
    """(init containers, containers) of the capsule, each in the template's order."""
    return members_of_many(db, [capsule_id])[capsule_id]


def find_by_id(db: Database, capsule_id: int) -> Container | None:
    """The capsule whose ``id`` (members' ``capsule_id``) this is, or None."""
    with db.reader() as s:
        return s.scalars(select(Container).where(Container.id == capsule_id,
                                                 Container.container_type == CAPSULE)).first()


def members_of_many(db: Database, capsule_ids: Iterable[int]
                    ) -> dict[int, tuple[list[Container], list[Container]]]:
    """``members_of`` for several capsules in one query (a list of capsules)."""
    ids = list(capsule_ids)
    out: dict[int, tuple[list[Container], list[Container]]] = {i: ([], []) for i in ids}
    if not ids:
        return out
    with db.reader() as s:
        for member in s.scalars(select(Container).where(Container.capsule_id.in_(ids))
                                .order_by(Container.id)):
            assert member.capsule_id is not None
            inits, members = out[member.capsule_id]
            (inits if member.container_type == INIT_MEMBER else members).append(member)
    return out


def destroy(db: Database, capsule_uuid: str) -> bool:
    """Remove the capsule's row and its members' rows; False when it was gone."""
    with db.writer() as s:
        row = s.scalars(select(Container).where(Container.uuid == capsule_uuid,
                                                Container.container_type == CAPSULE)).first()
        if row is None:
            return False
        s.execute(delete(Container).where(Container.capsule_id == row.id))
        s.execute(delete(Container).where(Container.id == row.id))
    return True


def update_members(db: Database, capsule_id: int, values: Mapping[str, Any]) -> None:
    """The same ``values`` on every member (a capsule's host, its failure)."""
    with db.writer() as s:
        for member in s.scalars(select(Container).where(Container.capsule_id == capsule_id)):
            for key, value in values.items():
                setattr(member, key, value)
