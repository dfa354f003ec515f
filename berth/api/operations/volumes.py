"""A create's ``mounts`` made into volumes and mappings (api-v1.md §7.2 ``mounts``).

    type bind,   source (base64)   a new local volume holding the file, auto-remove
    type volume, local driver:
                 source [+ size]   the project's local volume named (or with the uuid)
                                   ``source``; made on first use, of ``size`` GiB or
                                   [volume]local_volume_default_size, and kept after
                                   its containers go; its data is on one node, so the
                                   container is scheduled there
                 size              a new local volume of that size, auto-remove
    type volume, cinder driver:
                 source            the Cinder volume named or with the id ``source``,
                                   usable now (available, or in-use and multi-attach)
                 size              a new Cinder volume, created now, auto-remove

A capsule template's volumes (``plan_capsule``) are resolved the same way, once each
however many members mount them. Everything is checked before anything is written;
a problem is a 400 (404 for a Cinder volume that does not exist) naming the mount
(``mounts[1]``, ``spec.volumes[0]``). The rows are
written with the container's (``MountPlan.rows``); Cinder volumes created here are
deleted again when the create does not go through (``MountPlan.undo``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError

from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import volumes as db_volumes
from berth.db.containers import is_uuid_like
from berth.db.models import Volume
from berth.volume.base import CINDER, LOCAL, VolumeDriver, VolumeRef

LOG = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(slots=True)
class _PlannedVolume:
    existing: Volume | None = None
    new: dict[str, Any] | None = None

    @property
    def provider(self) -> str | None:
        if self.existing is not None:
            return self.existing.volume_provider
        return (self.new or {}).get("volume_provider")


@dataclass(slots=True)
class _PlannedMapping:
    volume: int              # index in MountPlan.volumes
    member: int              # index of the container (0: the container; a capsule's member)
    destination: str
    read_only: bool = False


@dataclass(slots=True)
class MountPlan:
    volumes: list[_PlannedVolume] = field(default_factory=list)
    mappings: list[_PlannedMapping] = field(default_factory=list)
    #: The node the container must run on: where its local volumes' data is.
    host: str | None = None
    #: Cinder volumes made for this create (removed by ``undo``).
    created: list[VolumeRef] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.mappings)

    def rows(self, ctx: RequestContext, container_uuids: list[str]) -> Iterator[Any]:
        """The new volumes, then the mappings (of ``container_uuids[member]``), for
        ``containers.create(along=...)``: each mapping is made once its volume was
        inserted (it needs the id)."""
        made: list[Volume] = []
        for planned in self.volumes:
            volume = planned.existing
            if volume is None:
                volume = db_volumes.new_volume(project_id=ctx.project_id,
                                               user_id=ctx.user_id, **(planned.new or {}))
                yield volume
            made.append(volume)
        for m in self.mappings:
            yield db_volumes.new_mapping(made[m.volume], container_uuids[m.member],
                                         m.destination, m.read_only)

    def wire(self, container_uuids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """``requested_volumes`` for the cast (model.md: keyed by container uuid)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for m in self.mappings:
            out.setdefault(container_uuids[m.member], []).append(
                {"container_path": m.destination, "read_only": m.read_only,
                 "volume_provider": self.volumes[m.volume].provider})
        return out

    def undo(self, state: ApiState, ctx: RequestContext) -> None:
        for ref in self.created:
            try:
                _driver(state, CINDER).delete(ctx, ref, state.settings.volume_delete_timeout)
            except exc.BerthError as err:
                LOG.error("could not delete Cinder volume %s made for a create that did "
                          "not go through: %s; delete it by hand", ref.cinder_volume_id,
                          err.msg)

    def _add(self, planned: _PlannedVolume, destination: str, read_only: bool = False,
             member: int = 0) -> None:
        self.volumes.append(planned)
        self.mappings.append(_PlannedMapping(len(self.volumes) - 1, member, destination,
                                             read_only))


def created_with(state: ApiState, ctx: RequestContext, plan_mounts: Callable[[], MountPlan],
                 create: Callable[[MountPlan], T]) -> T:
    """``create(plan_mounts())``. The plan's Cinder volumes are removed again when the
    create does not go through; a create that lost the race for a new named local
    volume's name (two first uses at once: the name is unique) plans once more, and
    then uses the volume the other create made."""
    for attempt in (1, 2):
        mounts = plan_mounts()
        try:
            return create(mounts)
        except IntegrityError:
            mounts.undo(state, ctx)
            if attempt == 2 or not mounts:
                raise
            LOG.info("a named local volume was created concurrently; planning again")
        except BaseException:
            mounts.undo(state, ctx)
            raise
    raise AssertionError("unreachable")


def mount_source(mount: dict[str, Any]) -> Any:
    """A volume mount's source; an empty one (beside a size: the schema allows no
    other) is none, as in Zun."""
    return mount.get("source") or None


def new_gib(state: ApiState, ctx: RequestContext, sized: list[tuple[Any, Any]]) -> int:
    """GiB of the new volumes a request makes (for the disk quota, before anything is
    made): each ``(source, size)`` with a size, unless ``source`` names a local volume
    the project has already."""
    total = 0
    for source, size in sized:
        if size is None:
            continue
        if source is not None and state.settings.volume_driver == LOCAL and \
                _find_local(state, ctx, str(source)) is not None:
            continue
        total += int(size)
    return total


def plan(state: ApiState, ctx: RequestContext, mounts: list[dict[str, Any]]) -> MountPlan:
    """A container's mounts checked and resolved; Cinder volumes of a ``size`` are
    created now (and removed again if a later mount is refused)."""
    result = MountPlan()
    if not mounts:
        return result
    _check_destinations(mounts)
    try:
        for index, mount in enumerate(mounts):
            where = f"mounts[{index}]"
            destination = str(mount["destination"])
            if mount.get("type") == "bind":
                result._add(_PlannedVolume(new={"volume_provider": LOCAL, "auto_remove": True,
                                                "contents": mount["source"]}), destination)
                continue
            source, size = mount_source(mount), mount.get("size")
            result._add(_plan_volume(state, ctx, result, where, source, size,
                                     auto_remove=source is None), destination)
    except exc.BerthError:
        result.undo(state, ctx)
        raise
    return result


def plan_capsule(state: ApiState, ctx: RequestContext, capsule_name: str,
                 volumes: list[dict[str, Any]], mounts: list[list[dict[str, Any]]]
                 ) -> MountPlan:
    """A capsule template's volumes (each once, however many members mount it) and
    its members' mounts (``mounts[i]``: member i's). With the local driver a new
    volume that is not auto-remove is named ``<capsule>-<volume>``, so that it can be
    mounted again (a capsule made again with the same name finds its data)."""
    result = MountPlan()
    index_of: dict[str, int] = {}
    try:
        for index, volume in enumerate(volumes):
            where = f"spec.volumes[{index}]"
            source, size = volume.get("source"), volume.get("size")
            auto_remove = bool(volume.get("auto_remove"))
            if source is None and not auto_remove and state.settings.volume_driver == LOCAL:
                source = f"{capsule_name}-{volume['name']}"
            result.volumes.append(_plan_volume(state, ctx, result, where, source, size,
                                               auto_remove=auto_remove,
                                               must_exist="size" not in volume))
            index_of[volume["name"]] = index
        for member, member_mounts in enumerate(mounts):
            for mount in member_mounts:
                result.mappings.append(_PlannedMapping(
                    index_of[mount["volume"]], member, mount["destination"],
                    bool(mount["read_only"])))
    except exc.BerthError:
        result.undo(state, ctx)
        raise
    return result


def _check_destinations(mounts: list[dict[str, Any]]) -> None:
    seen: dict[str, int] = {}
    for index, mount in enumerate(mounts):
        destination = str(mount["destination"]).rstrip("/") or "/"
        if destination == "/":
            raise exc.Invalid(f"mounts[{index}]: a volume cannot be mounted at '/'.")
        if destination in seen:
            raise exc.Invalid(f"mounts[{index}]: destination {destination} is already the "
                              f"destination of mounts[{seen[destination]}]; give each mount "
                              f"its own.")
        seen[destination] = index


def _plan_volume(state: ApiState, ctx: RequestContext, result: MountPlan, where: str,
                 source: Any, size: Any, *, auto_remove: bool,
                 must_exist: bool = False) -> _PlannedVolume:
    """One volume: an existing one (``source``), a named local one made on first use
    (``source`` and the local driver, unless ``must_exist``), or a new one."""
    if state.settings.volume_driver == CINDER:
        return _plan_cinder(state, ctx, result, where, source, size, auto_remove)
    if source is None:
        assert size is not None          # the schemas ask for one of the two
        return _PlannedVolume(new={"volume_provider": LOCAL, "size": int(size),
                                   "auto_remove": auto_remove})
    existing = _find_local(state, ctx, str(source))
    if existing is None:
        if must_exist or is_uuid_like(str(source)):
            raise exc.Invalid(f"{where}: there is no local volume {source} in your project.")
        return _PlannedVolume(new={
            "volume_provider": LOCAL, "name": str(source), "auto_remove": False,
            "size": int(size or state.settings.local_volume_default_size)})
    if size is not None and existing.size is not None and int(size) != existing.size:
        raise exc.Invalid(f"{where}: local volume {source} exists with {existing.size} GiB, "
                          f"not {size}; leave 'size' out to use it as it is.")
    if existing.host:
        if result.host not in (None, existing.host):
            raise exc.Invalid(f"{where}: local volume {source} is on host {existing.host}, "
                              f"another volume on {result.host}; one container or capsule "
                              f"cannot use both.")
        result.host = existing.host
    return _PlannedVolume(existing=existing)


def _find_local(state: ApiState, ctx: RequestContext, source: str) -> Volume | None:
    found = db_volumes.find_named(state.db, LOCAL, ctx.project_id, source)
    if found is None and is_uuid_like(source):
        by_uuid = db_volumes.find_by_uuid(state.db, source.lower())
        if by_uuid is not None and by_uuid.project_id == ctx.project_id \
                and by_uuid.volume_provider == LOCAL and by_uuid.contents is None:
            found = by_uuid
    return found


def _plan_cinder(state: ApiState, ctx: RequestContext, result: MountPlan, where: str,
                 source: Any, size: Any, auto_remove: bool) -> _PlannedVolume:
    driver = _driver(state, CINDER)
    if source is not None and size is not None:
        raise exc.Invalid(f"{where}: give a Cinder volume either 'source' (an existing "
                          f"volume) or 'size' (a new one), not both.")
    if source is not None:
        try:          # the driver refuses a volume that cannot be attached now
            found = driver.find(ctx, str(source))
        except (exc.VolumeNotFound, exc.VolumeUnavailable) as err:
            raise type(err)(reason=f"{where}: {err.msg}") from err
        return _PlannedVolume(new={"volume_provider": CINDER, "auto_remove": False,
                                   "cinder_volume_id": found.volume_id,
                                   "size": found.size_gib})
    volume_id = driver.create(ctx, int(size))
    result.created.append(VolumeRef(uuid="", provider=CINDER, project_id=ctx.project_id,
                                    cinder_volume_id=volume_id, size_gib=int(size)))
    LOG.info("%s: created Cinder volume %s (%s GiB)", where, volume_id, size)
    return _PlannedVolume(new={"volume_provider": CINDER, "cinder_volume_id": volume_id,
                               "auto_remove": auto_remove, "size": int(size)})


def _driver(state: ApiState, provider: str) -> VolumeDriver:
    driver = state.volume_drivers.get(provider)
    if driver is None:
        raise exc.Invalid(f"The '{provider}' volume driver is not enabled on this API "
                          f"([volume]driver).")
    return driver
