"""Queries on ``quotas`` (per-project limits), ``quota_classes`` (named sets of limits;
class ``default`` overrides the configured defaults) and the usage they limit.

Usage is computed on demand from the ``container`` table, never kept in a ledger
(``quota_usages`` stays unused, as in Zun): a project uses the number of its
containers and of its capsules' members (init containers too; Zun counted neither
capsules nor their members), and the sum of the cpu, memory and disk of its
containers and capsules (a capsule's row holds its members' sum, so members are not
summed again).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, literal, select, union_all
from sqlalchemy.orm import Session

from berth.common.units import memory_mib
from berth.db.engine import Database
from berth.db.inline_lists import inline_in
from berth.db.models import Container, ProjectQuotaLock, Quota, QuotaClass, Volume

RESOURCES = ("containers", "memory", "cpu", "disk")
DEFAULT_CLASS = "default"
#: Zun's ``[quota]`` defaults (also the option defaults in ``berth.conf.quota``).
CONFIG_DEFAULTS: Mapping[str, int] = {"containers": 40, "memory": 51200, "cpu": 20,
                                      "disk": 100}
#: Row types that hold resources: plain containers (0) and capsules (1).
COUNTED_TYPES = (0, 1)
#: Row types that count as containers: plain containers and capsule members (2, 3).
CONTAINER_TYPES = (0, 2, 3)


def project_limits(db: Database, project_id: str) -> dict[str, int]:
    """The limits set for ``project_id`` (only the resources that have a row)."""
    with db.reader() as s:
        return _project_limits(s, project_id)


def class_limits(db: Database, class_name: str) -> dict[str, int]:
    """The limits of quota class ``class_name`` (only the resources that have a row)."""
    with db.reader() as s:
        return _class_limits(s, class_name)


def _project_limits(s: Session, project_id: str) -> dict[str, int]:
    rows = s.scalars(select(Quota).where(Quota.project_id == project_id))
    return {r.resource: r.hard_limit for r in rows}


def _class_limits(s: Session, class_name: str) -> dict[str, int]:
    rows = s.scalars(select(QuotaClass).where(QuotaClass.class_name == class_name))
    return {r.resource: r.hard_limit for r in rows}


# Built once: every create reads both layers of limits and the project's usage, and
# building the statements (and their cache keys) on each call cost most of the read.
_LIMITS = union_all(
    select(literal(0).label("layer"), QuotaClass.resource, QuotaClass.hard_limit)
    .where(QuotaClass.class_name == bindparam("class_name")),
    select(literal(1).label("layer"), Quota.resource, Quota.hard_limit)
    .where(Quota.project_id == bindparam("project_id")))
# Grouped by size in the database: a project's usage is a few rows however many
# containers it holds (bench P15).
_USAGE = select(Container.container_type, Container.cpu, Container.memory,
                Container.disk, func.count().label("n")).where(
    Container.project_id == bindparam("project_id"),
    inline_in(Container.container_type, (*COUNTED_TYPES, *CONTAINER_TYPES))).group_by(
    Container.container_type, Container.cpu, Container.memory, Container.disk)


def class_and_project_limits(db: Database, class_name: str, project_id: str
                             ) -> tuple[dict[str, int], dict[str, int]]:
    """``class_limits`` and ``project_limits`` in one statement (every create asks both)."""
    with db.connection() as conn:
        return class_and_project_limits_on(conn, class_name, project_id)


def class_and_project_limits_on(conn: Connection, class_name: str, project_id: str
                                ) -> tuple[dict[str, int], dict[str, int]]:
    """``class_and_project_limits`` on ``conn`` (inside a caller's transaction)."""
    rows = conn.execute(_LIMITS, {"class_name": class_name, "project_id": project_id}).all()
    layers: tuple[dict[str, int], dict[str, int]] = ({}, {})
    for layer, resource, limit in rows:
        layers[layer][resource] = limit
    return layers


def set_project_limits(db: Database, project_id: str, values: Mapping[str, int]) -> None:
    """Upsert one row per resource in ``values``."""
    _upsert_limits(db, Quota, "project_id", project_id, values)


def delete_project_limits(db: Database, project_id: str) -> int:
    """Drop every limit set for ``project_id``; how many rows went."""
    with db.writer() as s:
        result = s.execute(delete(Quota).where(Quota.project_id == project_id))
        return int(getattr(result, "rowcount", 0) or 0)


def set_class_limits(db: Database, class_name: str, values: Mapping[str, int]) -> None:
    _upsert_limits(db, QuotaClass, "class_name", class_name, values)


def _upsert_limits(db: Database, model: Any, key: str, owner: str,
                   values: Mapping[str, int]) -> None:
    """One row per resource of ``values`` for ``owner`` (a project or a quota class),
    inserted or updated in one transaction."""
    with db.writer() as s:
        existing = {r.resource: r for r in s.scalars(
            select(model).where(getattr(model, key) == owner)).all()}
        for resource, limit in values.items():
            row = existing.get(resource)
            if row is None:
                s.add(model(**{key: owner}, resource=resource, hard_limit=limit))
            else:
                row.hard_limit = limit


def project_usage(db: Database, project_id: str) -> dict[str, int | float]:
    """What ``project_id`` uses now: container count, cpu (cores, a float), memory
    (MiB) and disk (GiB), over its containers and capsules in any status (a row in
    Error still counts until it is deleted, as in Zun)."""
    with db.connection() as conn:
        return project_usage_on(conn, project_id)


def project_usage_on(conn: Connection, project_id: str) -> dict[str, int | float]:
    """``project_usage`` on ``conn`` (inside a caller's transaction). ``disk`` counts
    the containers' root filesystems and the project's volumes (berth: Zun's quota
    ignored volumes)."""
    found = conn.execute(_USAGE, {"project_id": project_id}).all()
    rows = [r for r in found if r.container_type in COUNTED_TYPES]
    memory = sum(memory_mib(r.memory) * r.n for r in rows)
    volumes = int(conn.execute(_VOLUME_GIB, {"project_id": project_id}).scalar() or 0)
    return {"containers": sum(r.n for r in found if r.container_type in CONTAINER_TYPES),
            "cpu": round(sum((r.cpu or 0.0) * r.n for r in rows), 6),
            "memory": memory, "disk": sum((r.disk or 0) * r.n for r in rows) + volumes}


_VOLUME_GIB = select(func.sum(Volume.size)).where(Volume.project_id == bindparam("project_id"))


_LOCK_ROW = select(ProjectQuotaLock.project_id).where(
    ProjectQuotaLock.project_id == bindparam("project_id")).with_for_update()


def lock_project(conn: Connection, project_id: str) -> None:
    """Take ``project_id``'s quota lock for the rest of ``conn``'s transaction: its row
    in ``project_quota_locks``, written by an upsert (made on first use), which holds
    the row's exclusive lock until the transaction ends. Every other enforcement for
    the project waits here, so the usage it reads next is the usage its own write adds
    to. (One statement that locks exclusively at once: MariaDB's INSERT IGNORE takes a
    shared lock on an existing row, and two of them then deadlock when they both ask
    for the exclusive one.) On SQLite, a write transaction (``BEGIN IMMEDIATE``)
    already excludes every other writer, of this process or another: nothing to do."""
    dialect = conn.dialect.name
    if dialect == "sqlite":
        return
    values = {"project_id": project_id}
    # Each dialect's package is imported where it is used: on SQLite and PostgreSQL,
    # MySQL's costs a process memory for nothing, and the other way round.
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql
        pg = postgresql.insert(ProjectQuotaLock).values(values)
        conn.execute(pg.on_conflict_do_update(index_elements=["project_id"],
                                              set_={"project_id": pg.excluded.project_id}))
    elif dialect in ("mysql", "mariadb"):
        from sqlalchemy.dialects import mysql
        my = mysql.insert(ProjectQuotaLock).values(values)
        conn.execute(my.on_duplicate_key_update(project_id=my.inserted.project_id))
    else:   # another database: an insert that may lose the race, then the lock
        if conn.execute(_LOCK_ROW, values).first() is None:
            conn.execute(insert(ProjectQuotaLock).values(values))
        conn.execute(_LOCK_ROW, values).first()
