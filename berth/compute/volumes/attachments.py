"""The agent's volume steps (the seed's create steps 1-2 and delete step 3).

    create / rebuild   for each of the container's mounts, in order:
                         the volume's node recorded (a local volume's data stays on
                         the node that first held it) ──► wait until it is available
                         ──► attach (mounted at volume_dir/<uuid>) ──► a bind
                         "<path>:<destination>[:ro]" for Docker
    a failed create    its auto-remove volumes' mappings removed, then each volume
                       settled (below): nothing it attached or created stays behind
    delete             every mapping of the container removed, each volume settled

A volume is **settled** under its own lock: it stays attached while a container
that binds it needs it (a row with a Docker container, or one being created), is
detached otherwise, and removed with its data once no mapping is left when it is
auto-remove. Start-up reconciliation (``reconcile``) applies the same rule to every
volume of the node, which finishes or undoes whatever a crash interrupted.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.states import Status
from berth.db import volumes as db_volumes
from berth.db.engine import Database
from berth.db.models import Volume
from berth.db.volumes import Mount
from berth.volume.base import LOCAL, VolumeDriver, VolumeRef

LOG = logging.getLogger(__name__)


class ContainerVolumes:
    """The volumes of this node's containers, through the enabled drivers."""

    def __init__(self, db: Database, host: str, drivers: Mapping[str, VolumeDriver],
                 timeout_available: float = 60, timeout_deleted: float = 60) -> None:
        self.db = db
        self.host = host
        self.drivers = dict(drivers)
        self.timeout_available = timeout_available
        self.timeout_deleted = timeout_deleted
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, volume_uuid: str) -> threading.RLock:
        with self._locks_guard:
            return self._locks.setdefault(volume_uuid, threading.RLock())

    def driver(self, provider: str) -> VolumeDriver:
        try:
            return self.drivers[provider]
        except KeyError:
            raise exc.VolumeError(
                reason=f"this node has no '{provider}' volume driver enabled: set "
                       f"[volume]driver = {provider} on host {self.host}") from None

    # -- create, rebuild ----------------------------------------------------------------

    def attach(self, ctx: RequestContext | None, container_uuid: str) -> tuple[str, ...]:
        """Wait for and attach each of the container's volumes; Docker's binds for
        them (() when it has none). VolumeUnavailable or VolumeError, naming the
        volume, when one cannot be used; what was attached stays for the caller's
        undo (``release_failed``)."""
        mounts = db_volumes.mounts_of(self.db, [container_uuid])[container_uuid]
        return tuple(self._attach_one(ctx, m) for m in mounts)

    def binds_of(self, ctx: RequestContext | None,
                 container_uuids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """``attach`` for several containers at once (a capsule's members): one read."""
        found = db_volumes.mounts_of(self.db, container_uuids)
        return {uuid: tuple(self._attach_one(ctx, m) for m in mounts)
                for uuid, mounts in found.items()}

    def _attach_one(self, ctx: RequestContext | None, mount: Mount) -> str:
        volume, mapping = mount.volume, mount.mapping
        driver = self.driver(volume.volume_provider)
        ref = mount.ref
        with self._lock(volume.uuid):
            holder = db_volumes.claim_host(self.db, volume.id, self.host)
            if holder != self.host and volume.volume_provider == LOCAL:
                raise exc.VolumeUnavailable(reason=(
                    f"Local volume {_named(volume)} lives on host {holder}, not on "
                    f"{self.host}: a container that mounts it must run there."))
            try:
                driver.wait_available(ctx, ref, self.timeout_available)
                attached = driver.attach(ctx, ref)
            except (exc.VolumeError, exc.VolumeUnavailable, exc.VolumeNotFound) as err:
                raise type(err)(reason=f"Volume {_named(volume)} for "
                                       f"{mapping.container_path}: {err.msg}") from err
            if attached.connection_info != ref.connection_info or holder != self.host:
                db_volumes.set_attached(self.db, volume.id, self.host,
                                        attached.connection_info)
        LOG.info("volume %s attached for %s", _named(volume), mapping.container_path)
        return f"{attached.path}:{mapping.container_path}" + (":ro" if mapping.read_only
                                                                else "")

    # -- failed creates, deletes ----------------------------------------------------------

    def release_failed(self, ctx: RequestContext | None, container_uuids: list[str]) -> None:
        """Undo a create's volume steps (of a container, or of a capsule's members):
        the volumes made for it removed (auto-remove), every other one detached unless
        another container needs it. Never raises: what cannot be undone now is logged,
        and start-up reconciliation retries it."""
        volumes: list[Volume] = []
        for uuid in container_uuids:
            volumes += db_volumes.delete_mappings(self.db, uuid, auto_remove_only=True)
            volumes += db_volumes.volumes_of(self.db, uuid)
        self._settle_all(ctx, volumes, leaving=frozenset(container_uuids))

    def release(self, ctx: RequestContext | None, container_uuids: list[str]) -> None:
        """The containers (one, or a capsule's members) are going: their mappings
        removed and each volume settled."""
        volumes: list[Volume] = []
        for uuid in container_uuids:
            if db_volumes.volumes_of(self.db, uuid):
                volumes += db_volumes.delete_mappings(self.db, uuid)
        self._settle_all(ctx, volumes)

    def settle_all_of(self, container_uuid: str) -> None:
        """Settle each of the container's volumes (a failed rebuild: kept, detached)."""
        self._settle_all(None, db_volumes.volumes_of(self.db, container_uuid),
                         leaving=frozenset([container_uuid]))

    def _settle_all(self, ctx: RequestContext | None, volumes: list[Volume],
                    leaving: frozenset[str] = frozenset()) -> None:
        seen: set[int] = set()
        for volume in volumes:
            if volume.id in seen:
                continue
            seen.add(volume.id)
            try:
                self.settle(ctx, volume, leaving=leaving)
            except exc.BerthError as err:
                LOG.error("volume %s could not be released (%s); the agent's next start "
                          "tries again", _named(volume), err.msg)

    def settle(self, ctx: RequestContext | None, volume: Volume,
               leaving: frozenset[str] = frozenset()) -> None:
        """Attach state made to follow the containers that map the volume: detached
        when none needs it (those ``leaving`` do not, whatever their rows say), removed
        when none maps it and it is auto-remove."""
        if volume.host not in (None, self.host):
            return                               # held by another node: its agent's
        driver = self.driver(volume.volume_provider)
        ref = db_volumes.ref_of(volume)
        with self._lock(volume.uuid):
            users = db_volumes.users_of(self.db, volume.id)
            needed = any(needs and uuid not in leaving for uuid, needs in needs_attached(users))
            if not needed and driver.is_attached(ref):
                driver.detach(ctx, ref)
                LOG.info("volume %s detached: no container needs it", _named(volume))
            if not users and volume.auto_remove:
                driver.detach(ctx, ref)      # idempotent: Cinder may hold an attachment
                driver.delete(ctx, ref, self.timeout_deleted)
                db_volumes.destroy_volume(self.db, volume.id)
                LOG.info("volume %s removed: its last container went", _named(volume))

    def is_attached(self, volume: Volume) -> bool:
        return self.driver(volume.volume_provider).is_attached(db_volumes.ref_of(volume))

    def ref(self, volume: Volume) -> VolumeRef:
        return db_volumes.ref_of(volume)


def needs_attached(users: list[tuple[str, str | None, str | None]]) -> list[tuple[str, bool]]:
    """Which mapping containers need the volume attached: those with a Docker
    container, and those being made (status Creating or Rebuilding); not a failed
    create (Error without a Docker container) nor a row that is gone."""
    return [(uuid, bool(cid) or status in _BEING_MADE) for uuid, cid, status in users]


_BEING_MADE = frozenset({Status.CREATING.value, Status.REBUILDING.value})


def _named(volume: Volume) -> str:
    return f"{volume.name} ({volume.uuid})" if volume.name else volume.uuid
