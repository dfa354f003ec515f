"""Queries on ``volume`` and ``volume_mapping``.

The API writes a container's volumes (the new ones) and mappings (one per mount) in
the container's own transaction (``new_volume``, ``new_mapping`` given to
``containers.create(along=...)``); the agent reads them back to attach, and removes
mappings and volumes as containers go. A local volume named by a mount is unique in
its project (``uniq_volume0provider0project0name``): two first uses at once agree
on one volume (the loser's transaction fails and is tried again).
"""

from __future__ import annotations

import json
import uuid as uuidlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update

from berth.db.engine import Database
from berth.db.models import Container, Volume, VolumeMapping
from berth.volume.base import VolumeRef


@dataclass(frozen=True, slots=True)
class Mount:
    """One of a container's mounts: the mapping and its volume."""

    mapping: VolumeMapping
    volume: Volume

    @property
    def ref(self) -> VolumeRef:
        return ref_of(self.volume)


def ref_of(volume: Volume) -> VolumeRef:
    info = json.loads(volume.connection_info) if volume.connection_info else None
    return VolumeRef(uuid=volume.uuid, provider=volume.volume_provider,
                     project_id=volume.project_id, cinder_volume_id=volume.cinder_volume_id,
                     size_gib=volume.size, contents=volume.contents, connection_info=info)


def new_volume(**values: Any) -> Volume:
    values.setdefault("uuid", str(uuidlib.uuid4()))
    return Volume(**values)


def new_mapping(volume: Volume, container_uuid: str, container_path: str,
                read_only: bool = False) -> VolumeMapping:
    """A mapping of ``volume``; ``volume`` must have its id (inserted first)."""
    return VolumeMapping(uuid=str(uuidlib.uuid4()), project_id=volume.project_id,
                         user_id=volume.user_id, volume_id=volume.id,
                         container_uuid=container_uuid, container_path=container_path,
                         read_only=read_only)


def find_named(db: Database, provider: str, project_id: str | None, name: str
               ) -> Volume | None:
    with db.reader() as s:
        return s.scalars(select(Volume).where(
            Volume.volume_provider == provider, Volume.project_id == project_id,
            Volume.name == name)).first()


def find_by_uuid(db: Database, uuid: str) -> Volume | None:
    with db.reader() as s:
        return s.scalars(select(Volume).where(Volume.uuid == uuid)).first()


def mounts_of(db: Database, container_uuids: Iterable[str]) -> dict[str, list[Mount]]:
    """Each container's mounts, in the order they were asked for."""
    uuids = list(container_uuids)
    found: dict[str, list[Mount]] = {u: [] for u in uuids}
    if not uuids:
        return found
    with db.reader() as s:
        for mapping, volume in s.execute(
                select(VolumeMapping, Volume).join(Volume, VolumeMapping.volume_id == Volume.id)
                .where(VolumeMapping.container_uuid.in_(uuids))
                .order_by(VolumeMapping.id)):
            found[mapping.container_uuid].append(Mount(mapping, volume))
    return found


def volumes_of(db: Database, container_uuid: str) -> list[Volume]:
    with db.reader() as s:
        return list(s.scalars(
            select(Volume).join(VolumeMapping, VolumeMapping.volume_id == Volume.id)
            .where(VolumeMapping.container_uuid == container_uuid)
            .order_by(VolumeMapping.id)))


def set_attached(db: Database, volume_id: int, host: str,
                 connection_info: dict[str, Any] | None) -> None:
    with db.writer() as s:
        s.execute(update(Volume).where(Volume.id == volume_id).values(
            host=host,
            connection_info=json.dumps(connection_info) if connection_info else None))


def claim_host(db: Database, volume_id: int, host: str) -> str:
    """Record ``host`` as the volume's node unless it has one; the node it has."""
    with db.writer() as s:
        s.execute(update(Volume).where(Volume.id == volume_id, Volume.host.is_(None))
                  .values(host=host))
        return str(s.scalars(select(Volume.host).where(Volume.id == volume_id)).one())


def delete_mappings(db: Database, container_uuid: str, *,
                    auto_remove_only: bool = False) -> list[Volume]:
    """Remove the container's mappings (only those of auto-remove volumes, when
    asked); the volumes they pointed at."""
    with db.writer() as s:
        query = select(VolumeMapping.id, Volume).join(
            Volume, VolumeMapping.volume_id == Volume.id).where(
            VolumeMapping.container_uuid == container_uuid)
        if auto_remove_only:
            query = query.where(Volume.auto_remove.is_(True))
        found = [(mapping_id, volume) for mapping_id, volume in s.execute(query)]
        if found:
            s.execute(delete(VolumeMapping).where(
                VolumeMapping.id.in_([mapping_id for mapping_id, _ in found])))
        volumes = {v.id: v for _, v in found}
        for volume in volumes.values():
            s.expunge(volume)
        return list(volumes.values())


def users_of(db: Database, volume_id: int) -> list[tuple[str, str | None, str | None]]:
    """The containers that map the volume: ``(uuid, Docker container id, status)``; a
    mapping whose container row is gone has ``None`` for both."""
    with db.reader() as s:
        return [(uuid, cid, status) for uuid, cid, status in s.execute(
            select(VolumeMapping.container_uuid, Container.container_id, Container.status)
            .outerjoin(Container, Container.uuid == VolumeMapping.container_uuid)
            .where(VolumeMapping.volume_id == volume_id))]


def destroy_volume(db: Database, volume_id: int) -> None:
    with db.writer() as s:
        s.execute(delete(VolumeMapping).where(VolumeMapping.volume_id == volume_id))
        s.execute(delete(Volume).where(Volume.id == volume_id))


def on_host(db: Database, host: str) -> list[Volume]:
    """The volumes this node holds or held (their ``host``), and the volumes mapped
    by this node's containers."""
    with db.reader() as s:
        mapped = select(VolumeMapping.volume_id).join(
            Container, Container.uuid == VolumeMapping.container_uuid).where(
            Container.host == host)
        return list(s.scalars(select(Volume).where(
            (Volume.host == host) | Volume.id.in_(mapped)).order_by(Volume.id)))


def orphan_mappings(db: Database) -> int:
    """Remove the mappings whose container row is gone; how many."""
    with db.writer() as s:
        gone = select(VolumeMapping.id).outerjoin(
            Container, Container.uuid == VolumeMapping.container_uuid).where(
            Container.id.is_(None))
        ids = list(s.scalars(gone))
        if ids:
            s.execute(delete(VolumeMapping).where(VolumeMapping.id.in_(ids)))
        return len(ids)



def listed(db: Database, project_id: str | None
           ) -> list[tuple[Volume, list[tuple[str, str, str | None]]]]:
    """A project's volumes (every project's when ``project_id`` is None), newest first,
    each with its mounts: ``(container uuid, path, container name)``. Read by the
    console's volume view; the injected files of 'bind' mounts are left out."""
    query = select(Volume).where(Volume.contents.is_(None)).order_by(Volume.id.desc())
    if project_id is not None:
        query = query.where(Volume.project_id == project_id)
    with db.reader() as s:
        volumes = list(s.scalars(query))
        mounts: dict[int, list[tuple[str, str, str | None]]] = {v.id: [] for v in volumes}
        if volumes:
            for volume_id, uuid, path, name in s.execute(
                    select(VolumeMapping.volume_id, VolumeMapping.container_uuid,
                           VolumeMapping.container_path, Container.name)
                    .outerjoin(Container, Container.uuid == VolumeMapping.container_uuid)
                    .where(VolumeMapping.volume_id.in_(list(mounts)))):
                mounts[volume_id].append((uuid, path, name))
        return [(v, mounts[v.id]) for v in volumes]
