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

Everything is checked before anything is written; a problem is a 400 (404 for a
Cinder volume that does not exist) naming the mount (``mounts[1]``). The rows are
written with the container's (``MountPlan.rows``); Cinder volumes created here are
deleted again when the create does not go through (``MountPlan.undo``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import volumes as db_volumes
from berth.db.containers import is_uuid_like
from berth.db.models import Volume
from berth.volume.base import CINDER, LOCAL, VolumeDriver, VolumeRef

LOG = logging.getLogger(__name__)


@dataclass(slots=True)
class _Planned:
    destination: str
    read_only: bool
    existing: Volume | None = None
    new: dict[str, Any] | None = None


@dataclass(slots=True)
class MountPlan:
    mounts: list[_Planned] = field(default_factory=list)
    #: The node the container must run on: where its local volumes' data is.
    host: str | None = None
    #: Cinder volumes made for this create (removed by ``undo``).
    created: list[VolumeRef] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.mounts)

    def rows(self, ctx: RequestContext, container_uuid: str) -> Iterator[Any]:
        """The new volumes, then the mappings, for ``containers.create(along=...)``:
        each mapping is made after its volume was inserted (it needs the id)."""
        for planned in self.mounts:
            volume = planned.existing
            if volume is None:
                volume = db_volumes.new_volume(project_id=ctx.project_id,
                                               user_id=ctx.user_id, **(planned.new or {}))
                yield volume
            yield db_volumes.new_mapping(volume, container_uuid, planned.destination,
                                         planned.read_only)

    def wire(self, container_uuid: str) -> dict[str, list[dict[str, Any]]]:
        """``requested_volumes`` for the cast (model.md: keyed by container uuid)."""
        if not self.mounts:
            return {}
        return {container_uuid: [
            {"container_path": p.destination, "read_only": p.read_only,
             "volume_provider": (p.existing.volume_provider if p.existing is not None
                                 else (p.new or {}).get("volume_provider"))}
            for p in self.mounts]}

    def undo(self, state: ApiState, ctx: RequestContext) -> None:
        for ref in self.created:
            try:
                _driver(state, CINDER).delete(ctx, ref, state.settings.volume_delete_timeout)
            except exc.BerthError as err:
                LOG.error("could not delete Cinder volume %s made for a create that did "
                          "not go through: %s; delete it by hand", ref.cinder_volume_id,
                          err.msg)


def plan(state: ApiState, ctx: RequestContext, mounts: list[dict[str, Any]]) -> MountPlan:
    """Check and resolve the mounts; Cinder volumes of a ``size`` are created now (and
    removed again if a later mount is refused)."""
    result = MountPlan()
    if not mounts:
        return result
    _check_destinations(mounts)
    try:
        for index, mount in enumerate(mounts):
            result.mounts.append(_plan_one(state, ctx, result, f"mounts[{index}]", mount))
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


def _plan_one(state: ApiState, ctx: RequestContext, result: MountPlan, where: str,
              mount: dict[str, Any]) -> _Planned:
    destination = str(mount["destination"])
    read_only = bool(mount.get("read_only", False))
    if mount.get("type") == "bind":
        return _Planned(destination, read_only, new={
            "volume_provider": LOCAL, "contents": mount["source"], "auto_remove": True})
    source, size = mount.get("source"), mount.get("size")
    if state.settings.volume_driver == CINDER:
        return _plan_cinder(state, ctx, result, where, destination, read_only, source, size)
    if source is None:
        assert size is not None          # the schema asks for one of the two
        return _Planned(destination, read_only, new={
            "volume_provider": LOCAL, "size": int(size), "auto_remove": True})
    existing = _find_local(state, ctx, str(source))
    if existing is None:
        if is_uuid_like(str(source)):
            raise exc.Invalid(f"{where}: there is no local volume {source} in your project; "
                              f"name a new volume with a name that is not a uuid.")
        return _Planned(destination, read_only, new={
            "volume_provider": LOCAL, "name": str(source), "auto_remove": False,
            "size": int(size or state.settings.local_volume_default_size)})
    if size is not None and existing.size is not None and int(size) != existing.size:
        raise exc.Invalid(f"{where}: local volume {source} exists with {existing.size} GiB, "
                          f"not {size}; leave 'size' out to use it as it is.")
    if existing.host:
        if result.host not in (None, existing.host):
            raise exc.Invalid(f"{where}: local volume {source} is on host {existing.host}, "
                              f"another mount's volume on {result.host}; one container "
                              f"cannot use both.")
        result.host = existing.host
    return _Planned(destination, read_only, existing=existing)


def _find_local(state: ApiState, ctx: RequestContext, source: str) -> Volume | None:
    found = db_volumes.find_named(state.db, LOCAL, ctx.project_id, source)
    if found is None and is_uuid_like(source):
        by_uuid = db_volumes.find_by_uuid(state.db, source.lower())
        if by_uuid is not None and by_uuid.project_id == ctx.project_id \
                and by_uuid.volume_provider == LOCAL and by_uuid.contents is None:
            found = by_uuid
    return found


def _plan_cinder(state: ApiState, ctx: RequestContext, result: MountPlan, where: str,
                 destination: str, read_only: bool, source: Any, size: Any) -> _Planned:
    driver = _driver(state, CINDER)
    if source is not None and size is not None:
        raise exc.Invalid(f"{where}: give a Cinder mount either 'source' (an existing "
                          f"volume) or 'size' (a new one), not both.")
    if source is not None:
        try:
            found = driver.find(ctx, str(source))
        except exc.VolumeNotFound as err:
            raise exc.VolumeNotFound(reason=f"{where}: {err.msg}") from err
        if not found.usable:
            raise exc.Invalid(f"{where}: Cinder volume {source} is {found.status}; a "
                              f"container can use a volume that is available (or in-use "
                              f"with multi-attach).")
        return _Planned(destination, read_only, new={
            "volume_provider": CINDER, "cinder_volume_id": found.volume_id,
            "auto_remove": False, "size": found.size_gib})
    volume_id = driver.create(ctx, int(size))
    ref = VolumeRef(uuid="", provider=CINDER, project_id=ctx.project_id,
                    cinder_volume_id=volume_id, size_gib=int(size))
    result.created.append(ref)
    LOG.info("%s: created Cinder volume %s (%s GiB)", where, volume_id, size)
    return _Planned(destination, read_only, new={
        "volume_provider": CINDER, "cinder_volume_id": volume_id, "auto_remove": True,
        "size": int(size)})


def _driver(state: ApiState, provider: str) -> VolumeDriver:
    driver = state.volume_drivers.get(provider)
    if driver is None:
        raise exc.Invalid(f"The '{provider}' volume driver is not enabled on this API "
                          f"([volume]driver).")
    return driver
