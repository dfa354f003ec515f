"""Queries on ``compute_node`` and ``zun_service``: what each node has, and whether
its agent is alive."""

from __future__ import annotations

import datetime as dt
import functools
import threading
import time
import uuid as uuidlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Select,
    String,
    Update,
    bindparam,
    case,
    cast,
    false,
    func,
    literal_column,
    or_,
    select,
    update,
)

from berth.common import exceptions as exc
from berth.db.base import utcnow
from berth.db.containers import NOT_HOLDING
from berth.db.engine import Database
from berth.db.inline_lists import inline_in, inline_not_in
from berth.db.models import ComputeNode, Container, ZunService

COMPUTE_BINARY = "zun-compute"


def upsert_compute_node(db: Database, hostname: str, values: Mapping[str, Any]) -> ComputeNode:
    with db.writer() as s:
        row = s.scalars(select(ComputeNode).where(ComputeNode.hostname == hostname)).first()
        if row is None:
            node_uuid = str(uuidlib.uuid4())
            row = ComputeNode(uuid=node_uuid, rp_uuid=node_uuid, hostname=hostname)
            s.add(row)
        for key, value in values.items():
            setattr(row, key, value)
        s.flush()
        return row


def set_provider(db: Database, hostname: str, rp_uuid: str) -> None:
    """Record ``rp_uuid`` as the Placement provider of ``hostname``'s compute node
    (Nova's, with ``[compute]host_shared_with_nova``)."""
    with db.write_connection() as conn:
        conn.execute(update(ComputeNode).where(ComputeNode.hostname == hostname)
                     .values(rp_uuid=rp_uuid, updated_at=utcnow()))


def publish_usage(db: Database, hostname: str) -> None:
    """Write what ``hostname``'s containers hold to its compute node, counted by the
    database in the UPDATE itself (one statement, no rows to the client): cpu, memory
    MiB and disk GiB of the rows that hold resources (placed there, in neither Error nor
    Deleted), how many those are (``running_containers``: Zun's meaning), and how many
    containers and capsules there are in all, Paused, and Stopped (berth's own, not
    every container Docker has). A row's ``memory`` is a string of MiB; anything else
    counts as 0, as ``berth.common.units.memory_mib`` reads it. (The API shows the
    usage it reads itself, ``usage_of_hosts``: the row is for readers of the
    database, and may lag.)"""
    with db.one_statement_connection() as conn:
        conn.execute(_USAGE_UPDATE, {"h": hostname, "at": utcnow()})


def _census_columns() -> list[Any]:
    """The aggregates of a census over container rows (their constants inline): cpu,
    memory MiB and disk GiB of the rows that hold resources, how many those are, how
    many rows in all, Paused and Stopped; each labelled with the compute node's
    column it is written to."""
    c = Container.__table__.c
    zero: Any = literal_column("0")
    one: Any = literal_column("1")
    holding = c.status.is_not(None) & inline_not_in(c.status, NOT_HOLDING)

    def total(value: Any, when: Any) -> Any:
        return func.coalesce(func.sum(case((when, value), else_=zero)), zero)

    mib = case((c.memory.regexp_match(literal_column("'^[0-9]{1,18}$'")),
                cast(c.memory, BigInteger)), else_=zero)
    return [
        total(func.coalesce(c.cpu, zero), holding).label("cpu_used"),
        total(mib, holding).label("mem_used"),
        total(func.coalesce(c.disk, zero), holding).label("disk_used"),
        total(one, holding).label("running_containers"),
        func.count().label("total_containers"),
        total(one, c.status == literal_column("'Paused'")).label("paused_containers"),
        total(one, c.status == literal_column("'Stopped'")).label("stopped_containers"),
    ]


#: Containers and capsules (not a capsule's members, which its capsule row counts).
_COUNTED_KINDS = inline_in(Container.container_type, (0, 1))

# The census ``publish_usage`` writes: one row, whatever the host holds (no parameter
# but the host, which is named so that the UPDATE joins it by that name).
_CENSUS = select(bindparam("h", type_=String()).label("host"), *_census_columns()).where(
    Container.host == bindparam("h"), _COUNTED_KINDS).subquery("census")
_USAGE_UPDATE = update(ComputeNode).where(ComputeNode.hostname == _CENSUS.c.host).values(
    updated_at=bindparam("at"),
    **{column.key: column for column in _CENSUS.c if column.key != "host"})
# The same census of several hosts, a row for each that has any container.
_CENSUS_OF_HOSTS = select(Container.host, *_census_columns()).where(
    Container.host.in_(bindparam("hosts", expanding=True)), _COUNTED_KINDS
).group_by(Container.host)

# What the API shows of a node's usage, as a sort key of the host list: each the census
# of the node's containers as ``usage_of_hosts`` reads it (the row's column may lag),
# a correlated subquery of the listed node.
LIVE_USAGE_ORDER: dict[str, Any] = {
    column.key: select(column).where(
        Container.host == ComputeNode.hostname, _COUNTED_KINDS).scalar_subquery()
    for column in _census_columns()
    if column.key in ("cpu_used", "mem_used", "disk_used", "total_containers")}


@dataclass(frozen=True, slots=True)
class NodeUsage:
    """What a node's containers hold now, in the compute node's columns' terms."""

    cpu_used: float = 0.0
    mem_used: int = 0
    disk_used: int = 0
    running_containers: int = 0
    total_containers: int = 0
    paused_containers: int = 0
    stopped_containers: int = 0


def usage_of_hosts(db: Database, hostnames: Collection[str]) -> dict[str, NodeUsage]:
    """The usage ``publish_usage`` would write for each of ``hostnames``, read now in
    one query (a host without containers: all zero)."""
    out = {name: NodeUsage() for name in hostnames}
    if not out:
        return out
    with db.connection() as conn:
        for host, cpu, mem, disk, held, total, paused, stopped in conn.execute(
                _CENSUS_OF_HOSTS, {"hosts": list(out)}):
            out[host] = NodeUsage(float(cpu), int(mem), int(disk), int(held), int(total),
                                  int(paused), int(stopped))
    return out


_LOCK_NODE = select(ComputeNode.uuid).where(
    ComputeNode.uuid == bindparam("uuid")).with_for_update()


def lock_compute_node(conn: Connection, node_uuid: str) -> None:
    """Hold ``node_uuid``'s compute_node row (by its primary key, so that MariaDB locks
    that row alone) until ``conn``'s transaction ends: every API process placing a
    container on the node waits here, so the usage it reads next includes what the
    one before it placed. On SQLite a write transaction already excludes every other
    writer: nothing to do."""
    if conn.dialect.name != "sqlite":
        conn.execute(_LOCK_NODE, {"uuid": node_uuid}).first()


def get_compute_node(db: Database, ident: str) -> ComputeNode:
    with db.reader() as s:
        row = s.scalars(select(ComputeNode).where(
            (ComputeNode.uuid == ident) | (ComputeNode.hostname == ident))).first()
    if row is None:
        raise exc.ComputeNodeNotFound(compute_node=ident)
    return row


_PROVIDER_OF_HOST = select(ComputeNode.rp_uuid, ComputeNode.uuid).where(
    ComputeNode.hostname == bindparam("host"))


def provider_uuid_of(db: Database, host: str) -> str:
    """The Placement provider of ``host``'s compute node (its ``rp_uuid``, else its
    uuid): what every create allocates against, read without loading the node."""
    with db.connection() as conn:
        found = conn.execute(_PROVIDER_OF_HOST, {"host": host}).first()
    if found is None:
        raise exc.ComputeNodeNotFound(compute_node=host)
    return str(found[0] or found[1])


def list_compute_nodes(db: Database) -> list[ComputeNode]:
    with db.reader() as s:
        return list(s.scalars(compute_nodes_stmt()).all())


def compute_nodes_stmt() -> Select[ComputeNode]:
    """Every compute node, in ``list_compute_nodes``'s order (to read in a session of
    one's own)."""
    return select(ComputeNode).order_by(ComputeNode.uuid)


def report_service_up(db: Database, host: str, binary: str,
                      availability_zone: str | None) -> ZunService:
    """The heartbeat: create the row if needed, count the report, stamp last_seen_up."""
    now = utcnow()
    with db.writer() as s:
        row = s.scalars(select(ZunService).where(
            ZunService.host == host, ZunService.binary == binary)).first()
        if row is None:
            row = ZunService(host=host, binary=binary, report_count=0,
                             availability_zone=availability_zone)
            s.add(row)
        row.report_count = (row.report_count or 0) + 1
        row.last_seen_up = now
        if availability_zone and row.availability_zone != availability_zone:
            row.availability_zone = availability_zone
        s.flush()
        return row


def beat(db: Database, host: str, binary: str, availability_zone: str | None
         ) -> bool | None:
    """``report_service_up`` without reading the row first: one UPDATE (the row
    created by ``report_service_up`` when there is none yet); the read and the ORM
    object were most of a beat's cost (bench P15: 200 idle agents). Returns the
    service's ``disabled`` flag where the database returns it from the UPDATE
    (PostgreSQL, SQLite), so that the agent need not read it again; None elsewhere
    and when the row was only now created."""
    params = {"w_host": host, "w_binary": binary, "at": utcnow(), "zone": availability_zone}
    with db.one_statement_connection() as conn:
        returning = conn.dialect.update_returning
        result = conn.execute(_beat(bool(availability_zone), returning), params)
        if returning:
            found = result.first()
            if found is not None:
                return bool(found[0])
        elif result.rowcount:
            return None
    report_service_up(db, host, binary, availability_zone)
    return None


@functools.cache
def _beat(in_zone: bool, returning: bool) -> Update:
    """The beat's UPDATE, built once per shape: an agent beats every minute, and
    building the statement was a third of a beat's cost (bench P15, idle agents). (Its
    bound names are no column's: an UPDATE takes those as values to set.)"""
    stmt = update(ZunService).where(
        ZunService.host == bindparam("w_host"), ZunService.binary == bindparam("w_binary")
    ).values(last_seen_up=bindparam("at"),
             report_count=func.coalesce(ZunService.report_count, 0) + 1)
    if in_zone:
        stmt = stmt.values(availability_zone=bindparam("zone"))
    return stmt.returning(ZunService.disabled) if returning else stmt


def list_services(db: Database, binary: str | None = None) -> list[ZunService]:
    with db.reader() as s:
        return list(s.scalars(services_stmt(binary)).all())


def service_disabled(db: Database, host: str, binary: str) -> bool:
    """Whether ``host``'s ``binary`` service is disabled (False when it has no row).
    One row: every agent asks for its own at every inventory report, and reading
    every service there made the fleet's reads grow with the square of its nodes."""
    with db.connection() as conn:
        return bool(conn.execute(_SERVICE_DISABLED, {"host": host, "binary": binary})
                    .scalar())


_SERVICE_DISABLED = select(ZunService.disabled).where(
    ZunService.host == bindparam("host"), ZunService.binary == bindparam("binary")).limit(1)


def services_stmt(binary: str | None = None) -> Select[ZunService]:
    """The services (of ``binary``), in ``list_services``'s order."""
    stmt = select(ZunService).order_by(ZunService.id)
    return stmt.where(ZunService.binary == binary) if binary else stmt


def update_service(db: Database, host: str, binary: str, values: Mapping[str, Any]
                   ) -> ZunService:
    """Change the service row (enable, disable, force down); ZunServiceNotFound."""
    with db.writer() as s:
        row = s.scalars(select(ZunService).where(
            ZunService.host == host, ZunService.binary == binary)).first()
        if row is None:
            raise exc.ZunServiceNotFound(host=host, binary=binary)
        for key, value in values.items():
            setattr(row, key, value)
        s.flush()
        return row


def delete_service(db: Database, host: str, binary: str) -> None:
    """Remove the service row; ZunServiceNotFound when there is none. A live agent
    registers again at its next heartbeat."""
    with db.writer() as s:
        row = s.scalars(select(ZunService).where(
            ZunService.host == host, ZunService.binary == binary)).first()
        if row is None:
            raise exc.ZunServiceNotFound(host=host, binary=binary)
        s.delete(row)


def service_is_up(service: ZunService | Any, down_time: int,
                  now: dt.datetime | None = None) -> bool:
    """Up = not forced down and a heartbeat within ``down_time`` seconds. ``service``:
    the row, or a row of its columns forced_down, last_seen_up, updated_at and
    created_at."""
    if service.forced_down:
        return False
    last = service.last_seen_up or service.updated_at or service.created_at
    if last is None:
        return False
    now = now or utcnow()
    return (now - last).total_seconds() <= down_time


_SERVICE_LIVENESS = select(ZunService.forced_down, ZunService.last_seen_up,
                          ZunService.updated_at, ZunService.created_at).where(
    ZunService.host == bindparam("host"), ZunService.binary == COMPUTE_BINARY)


def compute_service_is_up(conn: Connection, host: str, down_time: int) -> bool:
    """Whether ``host``'s compute service is up, read on ``conn`` (inside the caller's
    transaction, so that a decision about a down node is written only if the node's
    last heartbeat is still the one it was made on). No service row: down."""
    row = conn.execute(_SERVICE_LIVENESS, {"host": host}).first()
    return row is not None and service_is_up(row, down_time)


#: The hosts whose compute service is up, as ``service_is_up`` judges (not forced
#: down, a heartbeat since ``since``), chosen by the database: a host name a row, where
#: loading every service row as an object cost the API a third of its CPU at 1,000
#: nodes (bench P15).
_UP_COMPUTE_HOSTS = select(ZunService.host).where(
    ZunService.binary == COMPUTE_BINARY,
    or_(ZunService.forced_down.is_(None), ZunService.forced_down == false()),
    func.coalesce(ZunService.last_seen_up, ZunService.updated_at, ZunService.created_at)
    >= bindparam("since"))


def up_compute_hosts(db: Database, down_time: int) -> set[str]:
    since = utcnow() - dt.timedelta(seconds=down_time)
    with db.connection() as conn:
        return set(conn.execute(_UP_COMPUTE_HOSTS, {"since": since}).scalars())


def disk_quota_hosts(db: Database, down_time: int) -> set[str]:
    """The up compute hosts whose engine can limit a container's root filesystem."""
    with db.reader() as s:
        able = set(s.scalars(select(ComputeNode.hostname).where(
            ComputeNode.disk_quota_supported.is_(True))))
    return able & up_compute_hosts(db, down_time) if able else set()


class UpHosts:
    """``up(host)``: is the compute service of ``host`` up? The API asks before every
    action and show; the answer is read from the services at most once per ``ttl``
    seconds (a query of every service row otherwise, a third of a show's cost). A
    service seen down after a missed heartbeat is so ``down_time`` seconds late
    anyway; the API's own force-down and delete of a service call ``forget()`` so
    that they count at once."""

    def __init__(self, db: Database, down_time: int, ttl: float = 1.0) -> None:
        self._db, self._down_time, self._ttl = db, down_time, ttl
        #: When the read began (monotonic), the up hosts, and for how long it serves
        self._seen: tuple[float, frozenset[str], float] | None = None
        self._reading = threading.Lock()
        self._forgotten = 0     # forget()s so far: a read begun before one is not kept
        self._forgotten_at = float("-inf")    # and when the last one was (monotonic)

    def __call__(self, host: str) -> bool:
        seen = self._seen
        if seen is None or time.monotonic() - seen[0] >= seen[2]:
            seen = self._read(seen)
        return host in seen[1]

    def _read(self, stale: tuple[float, frozenset[str], float] | None
              ) -> tuple[float, frozenset[str], float]:
        """The services read again by one thread at a time: the others answer from
        the read it replaces (a moment older) meanwhile, or wait for it when there
        is none (at the start, after ``forget``)."""
        if not self._reading.acquire(blocking=stale is None):
            assert stale is not None
            return stale
        try:
            seen = self._seen
            if seen is None or time.monotonic() - seen[0] >= seen[2]:
                forgotten = self._forgotten
                seen = (time.monotonic(),
                        frozenset(up_compute_hosts(self._db, self._down_time)), self._ttl)
                if forgotten == self._forgotten:
                    self._seen = seen
            return seen
        finally:
            self._reading.release()

    def learn(self, up: frozenset[str], began: float) -> None:
        """The up hosts as another read of the services found them, begun at ``began``
        (monotonic): the scheduler's read of the nodes, once a second while creates
        come, which then spares this one its own read. Kept if newer than the read
        it replaces and begun after the last ``forget``; it serves twice ``ttl``: the
        scheduler reads again at the first create after its own ``ttl``, and the casts
        of creates placed before that read would otherwise find this one just too
        old (bench P15: 0.7 reads of their own a second per API process)."""
        seen = self._seen
        if began >= self._forgotten_at and (seen is None or began > seen[0]):
            self._seen = (began, up, 2 * self._ttl)

    def forget(self) -> None:
        self._forgotten += 1
        self._forgotten_at = time.monotonic()
        self._seen = None
