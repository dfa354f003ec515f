"""Placement kept in berth's own database: the default, with no extra service.

Every write is one transaction of the writer session. An allocation is "check the
capacity, then insert" in that one transaction, with the provider row locked first,
so two allocations on the same node cannot both take the last unit:

* SQLite: writer sessions start with ``BEGIN IMMEDIATE`` (``berth.db.engine``), so
  writers run one at a time on the whole file;
* PostgreSQL / MariaDB: ``SELECT ... FOR UPDATE`` on the provider row serialises the
  writers of one provider, and leaves other providers free.

Because of that lock, a generation conflict cannot happen here; generations are still
kept (and bumped on every change) so that they mean the same as in OpenStack
Placement.
"""

from __future__ import annotations

import logging
import re
import uuid as uuidlib
from collections.abc import Iterable, Mapping

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from berth.db.engine import Database
from berth.db.placement_models import (
    ProviderAggregate,
    ProviderAllocation,
    ProviderInventory,
    ProviderTrait,
    ResourceProvider,
)
from berth.placement.base import (
    AllocationFailed,
    Inventory,
    PlacementError,
    Provider,
    ProviderNotFound,
    holds_exactly,
    shortfall,
)

LOG = logging.getLogger(__name__)
_NAME = re.compile(r"^[A-Z0-9_]{1,255}$")


# The statements of an allocation and its release, built once: every create and
# delete runs them, and building them (and the ORM's objects and flush) cost several
# times the SQL.
_PROVIDER_LOCKED = (select(ResourceProvider.id)
                    .where(ResourceProvider.uuid == bindparam("uuid")).with_for_update())
_INVENTORIES = select(
    ProviderInventory.resource_class, ProviderInventory.total, ProviderInventory.reserved,
    ProviderInventory.min_unit, ProviderInventory.max_unit, ProviderInventory.step_size,
    ProviderInventory.allocation_ratio,
).where(ProviderInventory.resource_provider_id == bindparam("rp"))
_PROVIDERS_OF_CONSUMER = (select(ProviderAllocation.resource_provider_id).distinct()
                          .where(ProviderAllocation.consumer_id == bindparam("consumer")))
_INSERT_ALLOCATIONS = insert(ProviderAllocation).returning(ProviderAllocation.id)
_DROP_CONSUMER = delete(ProviderAllocation).where(
    ProviderAllocation.consumer_id == bindparam("consumer"))
# The allocation's two reads in one: each class's inventory, and what every other
# consumer holds of it on the provider.
_USED_OF_CLASS = (select(func.coalesce(func.sum(ProviderAllocation.used), 0))
                  .where(ProviderAllocation.resource_provider_id
                         == ProviderInventory.resource_provider_id,
                         ProviderAllocation.resource_class == ProviderInventory.resource_class,
                         ProviderAllocation.consumer_id != bindparam("consumer"))
                  .scalar_subquery())
_INVENTORIES_AND_USED = _INVENTORIES.add_columns(_USED_OF_CLASS.label("used"))
_BUMP_PROVIDER = (update(ResourceProvider)
                  .where(ResourceProvider.uuid == bindparam("rp_uuid"))
                  .values(generation=ResourceProvider.generation + 1)
                  .returning(ResourceProvider.id))
_HELD_BY = (select(ResourceProvider.uuid, ProviderAllocation.resource_class,
                   ProviderAllocation.used)
            .join(ResourceProvider,
                  ResourceProvider.id == ProviderAllocation.resource_provider_id)
            .where(ProviderAllocation.consumer_id == bindparam("consumer")))
_BUMP_GENERATIONS = (
    update(ResourceProvider)
    .where(ResourceProvider.id.in_(bindparam("ids", expanding=True)))
    .values(generation=ResourceProvider.generation + 1)
    .execution_options(synchronize_session=False))


def check_inventory(resource_class: str, inv: Inventory) -> None:
    """PlacementError for an inventory OpenStack Placement would refuse (400)."""
    if not _NAME.match(resource_class):
        raise PlacementError(reason=f"invalid resource class name {resource_class!r}")
    bad = (inv.total < 1 or inv.reserved < 0 or inv.reserved > inv.total
           or inv.min_unit < 1 or inv.largest_unit < 1 or inv.min_unit > inv.largest_unit
           or inv.step_size < 1 or inv.allocation_ratio <= 0)
    if bad:
        raise PlacementError(reason=f"invalid {resource_class} inventory {inv}: total, "
                                    f"min_unit, max_unit and step_size must be >= 1, "
                                    f"0 <= reserved <= total, allocation_ratio > 0")


def allocate_in(s: Session | Connection, consumer_uuid: str, provider_uuid: str,
                resources: Mapping[str, int], project_id: str | None,
                user_id: str | None, *, new_consumer: bool = False) -> None:
    """``allocate``, inside the caller's transaction on ``s``: the provider row locked
    first (``lock_provider``), then ``allocate_locked``. The API runs it in the
    transaction that writes a container's row on the node the scheduler chose
    (``berth.api.operations.placing``), with ``new_consumer`` (a uuid made for it:
    nothing to replace)."""
    conn = s.connection() if isinstance(s, Session) else s
    allocate_locked(conn, lock_provider(conn, provider_uuid), provider_uuid, consumer_uuid,
                    resources, project_id, user_id, new_consumer=new_consumer)


def lock_provider(conn: Connection, provider_uuid: str) -> int:
    """Lock the provider's row for the rest of ``conn``'s transaction: everything read
    after it stays true until the commit. Where UPDATE has RETURNING, the bump of its
    generation is the lock (a refusal rolls it back). Its id; ProviderNotFound."""
    found = (conn.execute(_BUMP_PROVIDER, {"rp_uuid": provider_uuid})
             if conn.dialect.update_returning else
             conn.execute(_PROVIDER_LOCKED, {"uuid": provider_uuid})).first()
    if found is None:
        raise ProviderNotFound(uuid=provider_uuid)
    return int(found[0])


def allocate_locked(conn: Connection, rp_id: int, provider_uuid: str, consumer_uuid: str,
                    resources: Mapping[str, int], project_id: str | None,
                    user_id: str | None, *, new_consumer: bool = False) -> None:
    """The allocation on the provider ``lock_provider`` locked in this transaction (its
    id ``rp_id``): the fit checked against its inventory and every other consumer's
    allocation, the consumer's earlier allocation replaced. AllocationFailed when it
    does not fit; PlacementError when ``resources`` is empty."""
    if not resources:
        raise PlacementError(reason=f"nothing to allocate for consumer {consumer_uuid}")
    problems = []
    held = {row.resource_class: row for row in conn.execute(
        _INVENTORIES_AND_USED, {"rp": rp_id, "consumer": consumer_uuid})}
    for rc, amount in sorted(resources.items()):
        row = held.get(rc)
        why = shortfall(rc, Inventory.of_row(row) if row is not None else None,
                        int(row.used) if row is not None else 0, int(amount))
        if why:
            problems.append(why)
    if problems:
        raise AllocationFailed(reason=f"provider {provider_uuid}: " + "; ".join(problems))
    if not new_consumer:
        EmbeddedPlacement._drop_consumer(conn, consumer_uuid)
    records = [{"resource_provider_id": rp_id, "consumer_id": consumer_uuid,
                "resource_class": rc, "used": int(amount), "project_id": project_id,
                "user_id": user_id} for rc, amount in resources.items()]
    # One INSERT of every class's row. A plain executemany runs one execution per
    # class (psycopg's pipeline), a statement of its own for PostgreSQL each; with
    # RETURNING, SQLAlchemy's "insertmanyvalues" sends one, from a statement compiled
    # once. A multi-row VALUES is compiled anew at each execution (it has no cache
    # key): twice the CPU of the transaction that writes it (bench P15).
    if conn.dialect.insert_executemany_returning:
        conn.execute(_INSERT_ALLOCATIONS, records)
    else:
        conn.execute(insert(ProviderAllocation).values(records))
    if not conn.dialect.update_returning:     # the lock was a SELECT ... FOR UPDATE
        conn.execute(_BUMP_GENERATIONS, {"ids": [rp_id]})


def _provider_of(row: ResourceProvider) -> Provider:
    return Provider(uuid=row.uuid, name=row.name, generation=row.generation)


class EmbeddedPlacement:
    """The Placement interface on berth's database (see the module docstring)."""

    in_database = True

    def __init__(self, db: Database) -> None:
        self._db = db

    # --- providers ---------------------------------------------------------

    def _row(self, s: Session, uuid: str, lock: bool = False) -> ResourceProvider:
        stmt = select(ResourceProvider).where(ResourceProvider.uuid == uuid)
        if lock:
            stmt = stmt.with_for_update()
        row = s.scalars(stmt).first()
        if row is None:
            raise ProviderNotFound(uuid=uuid)
        return row

    def get_provider(self, uuid: str) -> Provider | None:
        with self._db.reader() as s:
            row = s.scalars(select(ResourceProvider).where(ResourceProvider.uuid == uuid)).first()
            return _provider_of(row) if row is not None else None

    def find_provider(self, name: str) -> Provider | None:
        with self._db.reader() as s:
            row = s.scalars(select(ResourceProvider).where(ResourceProvider.name == name)).first()
            return _provider_of(row) if row is not None else None

    def ensure_provider(self, uuid: str, name: str) -> Provider:
        found = self.get_provider(uuid)
        if found is not None:
            return found
        try:
            with self._db.writer() as s:
                other = s.scalars(select(ResourceProvider).where(
                    ResourceProvider.name == name)).first()
                if other is not None and other.uuid != uuid:
                    raise PlacementError(reason=(
                        f"provider name {name!r} already belongs to provider {other.uuid}, "
                        f"not {uuid}; remove the stale provider or rename the host"))
                if other is None:
                    s.add(ResourceProvider(uuid=uuid, name=name, generation=0))
                    LOG.info("created resource provider %s (%s)", uuid, name)
        except IntegrityError:
            LOG.debug("provider %s was created concurrently", uuid)   # fall through: re-read
        found = self.get_provider(uuid)
        if found is None:
            raise PlacementError(reason=f"provider {uuid} could not be created")
        return found

    # --- inventory -----------------------------------------------------------

    @staticmethod
    def _inventories(s: Session, provider_id: int) -> dict[str, Inventory]:
        rows = s.scalars(select(ProviderInventory).where(
            ProviderInventory.resource_provider_id == provider_id)).all()
        return {r.resource_class: Inventory.of_row(r) for r in rows}

    def get_inventory(self, provider_uuid: str) -> dict[str, Inventory]:
        with self._db.reader() as s:
            return self._inventories(s, self._row(s, provider_uuid).id)

    def set_inventory(self, provider_uuid: str, inventories: Mapping[str, Inventory]) -> bool:
        wanted = {rc: inv.normalized() for rc, inv in inventories.items()}
        for rc, inv in wanted.items():
            check_inventory(rc, inv)
        if self.get_inventory(provider_uuid) == wanted:
            return False            # the usual periodic report: no write at all
        with self._db.writer() as s:
            rp = self._row(s, provider_uuid, lock=True)
            current = self._inventories(s, rp.id)
            if current == wanted:
                return False
            gone = set(current) - set(wanted)
            in_use = self._used(s, rp.id, classes=gone)
            if any(in_use.values()):
                raise PlacementError(reason=(
                    f"cannot remove the {', '.join(sorted(in_use))} inventory of provider "
                    f"{provider_uuid}: containers still hold allocations on it"))
            if gone:
                s.execute(delete(ProviderInventory).where(
                    ProviderInventory.resource_provider_id == rp.id,
                    ProviderInventory.resource_class.in_(gone)))
            rows = {r.resource_class: r for r in s.scalars(select(ProviderInventory).where(
                ProviderInventory.resource_provider_id == rp.id)).all()}
            for rc, inv in wanted.items():
                row = rows.get(rc) or ProviderInventory(resource_provider_id=rp.id,
                                                        resource_class=rc)
                row.total, row.reserved, row.min_unit = inv.total, inv.reserved, inv.min_unit
                row.max_unit, row.step_size = inv.largest_unit, inv.step_size
                row.allocation_ratio = inv.allocation_ratio
                s.add(row)
            rp.generation += 1
        LOG.info("inventory of provider %s set to %s", provider_uuid, wanted)
        return True

    # --- traits and aggregates -------------------------------------------------

    def get_traits(self, provider_uuid: str) -> frozenset[str]:
        with self._db.reader() as s:
            rp = self._row(s, provider_uuid)
            return frozenset(s.scalars(select(ProviderTrait.trait).where(
                ProviderTrait.resource_provider_id == rp.id)).all())

    def set_traits(self, provider_uuid: str, traits: Iterable[str]) -> bool:
        wanted = frozenset(traits)
        for name in wanted:
            if not _NAME.match(name):
                raise PlacementError(reason=f"invalid trait name {name!r} (A-Z, 0-9, _)")
        if self.get_traits(provider_uuid) == wanted:
            return False
        with self._db.writer() as s:
            rp = self._row(s, provider_uuid, lock=True)
            s.execute(delete(ProviderTrait).where(ProviderTrait.resource_provider_id == rp.id))
            s.add_all(ProviderTrait(resource_provider_id=rp.id, trait=t) for t in wanted)
            rp.generation += 1
        LOG.info("traits of provider %s set to %s", provider_uuid, sorted(wanted))
        return True

    def get_aggregates(self, provider_uuid: str) -> frozenset[str]:
        with self._db.reader() as s:
            rp = self._row(s, provider_uuid)
            return frozenset(s.scalars(select(ProviderAggregate.aggregate_uuid).where(
                ProviderAggregate.resource_provider_id == rp.id)).all())

    def set_aggregates(self, provider_uuid: str, aggregates: Iterable[str]) -> bool:
        try:
            wanted = frozenset(str(uuidlib.UUID(a)) for a in aggregates)
        except ValueError as err:
            raise PlacementError(reason=f"aggregates must be uuids: {err}") from err
        if self.get_aggregates(provider_uuid) == wanted:
            return False
        with self._db.writer() as s:
            rp = self._row(s, provider_uuid, lock=True)
            s.execute(delete(ProviderAggregate).where(
                ProviderAggregate.resource_provider_id == rp.id))
            s.add_all(ProviderAggregate(resource_provider_id=rp.id, aggregate_uuid=a)
                      for a in wanted)
            rp.generation += 1
        LOG.info("aggregates of provider %s set to %s", provider_uuid, sorted(wanted))
        return True

    # --- allocations -----------------------------------------------------------

    @staticmethod
    def _used(s: Session, provider_id: int, classes: Iterable[str] | None = None,
              exclude_consumer: str | None = None) -> dict[str, int]:
        stmt = (select(ProviderAllocation.resource_class, func.sum(ProviderAllocation.used))
                .where(ProviderAllocation.resource_provider_id == provider_id)
                .group_by(ProviderAllocation.resource_class))
        if classes is not None:
            stmt = stmt.where(ProviderAllocation.resource_class.in_(list(classes)))
        if exclude_consumer is not None:
            stmt = stmt.where(ProviderAllocation.consumer_id != exclude_consumer)
        return {rc: int(total or 0) for rc, total in s.execute(stmt).all()}

    def allocate(self, consumer_uuid: str, provider_uuid: str, resources: Mapping[str, int],
                 project_id: str | None, user_id: str | None) -> None:
        with self._db.writer() as s:
            allocate_in(s, consumer_uuid, provider_uuid, resources, project_id, user_id)
        LOG.info("allocated %s on provider %s to container %s", dict(resources),
                 provider_uuid, consumer_uuid)

    def holds(self, consumer_uuid: str, provider_uuid: str,
              resources: Mapping[str, int]) -> bool:
        """Whether the consumer holds exactly ``resources`` on the provider, and
        nothing else (one read): then ``allocate`` has nothing to do. The API writes
        a container's allocation with its row (``allocate_in``), and its agent asks
        this before allocating again."""
        with self._db.connection() as conn:
            held = {(str(uuid), rc): int(used)
                    for uuid, rc, used in conn.execute(_HELD_BY, {"consumer": consumer_uuid})}
        return holds_exactly(held, provider_uuid, resources)

    @staticmethod
    def _drop_consumer(s: Session | Connection, consumer_uuid: str) -> bool:
        """Delete the consumer's allocations; bump the generation of each provider."""
        provider_ids = list(s.execute(_PROVIDERS_OF_CONSUMER,
                                      {"consumer": consumer_uuid}).scalars())
        if not provider_ids:
            return False
        s.execute(_BUMP_GENERATIONS, {"ids": provider_ids})
        s.execute(_DROP_CONSUMER, {"consumer": consumer_uuid})
        return True

    def remove_allocation(self, consumer_uuid: str) -> bool:
        with self._db.writer() as s:
            removed = self._drop_consumer(s, consumer_uuid)
        if removed:
            LOG.info("released the allocation of container %s", consumer_uuid)
        return removed

    def get_allocation(self, consumer_uuid: str) -> dict[str, dict[str, int]]:
        with self._db.reader() as s:
            rows = s.execute(
                select(ResourceProvider.uuid, ProviderAllocation.resource_class,
                       ProviderAllocation.used)
                .join(ResourceProvider,
                      ResourceProvider.id == ProviderAllocation.resource_provider_id)
                .where(ProviderAllocation.consumer_id == consumer_uuid)).all()
        out: dict[str, dict[str, int]] = {}
        for rp_uuid, rc, amount in rows:
            out.setdefault(rp_uuid, {})[rc] = int(amount)
        return out

    def provider_allocations(self, provider_uuid: str) -> dict[str, dict[str, int]]:
        with self._db.reader() as s:
            rp = self._row(s, provider_uuid)
            rows = s.execute(
                select(ProviderAllocation.consumer_id, ProviderAllocation.resource_class,
                       ProviderAllocation.used)
                .where(ProviderAllocation.resource_provider_id == rp.id)).all()
        out: dict[str, dict[str, int]] = {}
        for consumer, rc, amount in rows:
            out.setdefault(consumer, {})[rc] = int(amount)
        return out

    def usages(self, provider_uuid: str) -> dict[str, int]:
        with self._db.reader() as s:
            rp = self._row(s, provider_uuid)
            out = {rc: 0 for rc in self._inventories(s, rp.id)}
            out.update(self._used(s, rp.id))
            return out
