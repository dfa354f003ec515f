"""Commit a container to a new local image (rpc-compute.md §3 ``container_commit``).

A container made from Glance (``image_driver = glance``) is committed as Zun does:
the new image is uploaded to Glance and the answer's ``uuid`` is its Glance id.
Otherwise the image stays in this node's Docker as ``repository:tag``, and the answer's
``uuid`` is the uuid of berth's image record for it (the ``image`` table, the same
records ``zun image-list`` shows), created or updated here.

Unlike Zun, the commit runs before the call answers (the endpoint runs this flow on
the container's worker, so it is ordered with the casts of that container, and waits
for it): when the API answers 202 the image exists, and a failure is the API's answer
instead of a log line. Timeline for a Running container::

    status Paused (saved) ─► docker commit (engine pauses, commits, unpauses)
                          ─► status from the engine (Running) ─► image record

The action ``commit`` (recorded by the API) gets the event
``compute__do_container_commit`` and is finished with the outcome.
"""

from __future__ import annotations

import logging
import uuid as uuidlib

from sqlalchemy import select

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.flows.inspection import created_row, engine_call
from berth.compute.states import Status
from berth.db import containers
from berth.db.models import Image
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def container_commit(deps: AgentDeps, ctx: RequestContext, uuid: str, repository: str,
                     tag: str) -> dict[str, str]:
    """Commit and return ``{"uuid": <image record uuid>}``."""
    with common.recorded(deps, ctx, uuid, "compute__do_container_commit"):
        row, container_id = created_row(deps, uuid)
        running = row.status == Status.RUNNING
        if running:
            # Zun shows Paused while the filesystem is frozen for the commit. Only when
            # no task owns the row: the worker queue orders us after other actions.
            status_writes.mark_paused(deps.db, uuid, was=row.status,
                                      expect=containers.NO_TASK)
        try:
            with engine_call(deps, row):
                image = deps.runtime.commit(container_id, repository, tag, pause=running)
            deps.recent_images.forget()       # repository:tag may name another image now
        finally:
            if running:
                _status_from_engine(deps, uuid, container_id)
        if row.image_driver == "glance" and "glance" in deps.image_stores:
            stored = _upload(deps, ctx, repository, tag, image)
            LOG.info("committed to %s:%s (Docker image %s) and uploaded it to Glance as "
                     "image %s", repository, tag, image.id[:19], stored)
            return {"uuid": stored}
        record = _record_image(deps, ctx, repository, tag, image)
    LOG.info("committed to %s:%s (Docker image %s, image record %s)", repository, tag,
             image.id[:19], record)
    return {"uuid": record}


def _upload(deps: AgentDeps, ctx: RequestContext, repository: str, tag: str,
            image: rt.ImageInfo) -> str:
    """Zun's commit of a container made from Glance: the new image's ``docker save``
    goes to Glance as ``repository`` (container_format docker, disk_format qcow2, tags
    ``[tag]``); the answer's uuid is the Glance image's id. When the upload fails the
    new Glance record and the local image are removed, and the failure is the answer."""
    ref = f"{repository}:{tag}"
    try:
        stored = deps.image_stores["glance"].upload(ctx, repository, tag,
                                                    deps.runtime.save_image(ref))
    except exc.BerthError as failure:
        LOG.error("upload of the committed image %s to Glance failed: %s", ref, failure.msg)
        try:
            deps.runtime.remove_image(ref)
        except rt.RuntimeDriverError as err:
            LOG.warning("could not remove the committed image %s after the failed "
                        "upload: %s", ref, err.msg)
        raise
    return stored.id


def _status_from_engine(deps: AgentDeps, uuid: str, container_id: str) -> None:
    """Put back the status Docker shows (Running after the engine's unpause)."""
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        return
    try:
        seen = deps.runtime.inspect(container_id)
    except rt.RuntimeDriverError as err:
        LOG.warning("could not re-read the container after the commit (%s); the next "
                    "state sync corrects its status", err.msg)
        return
    common.apply_runtime_state(deps, row, seen, force=True)


def _record_image(deps: AgentDeps, ctx: RequestContext, repository: str, tag: str,
                  image: rt.ImageInfo) -> str:
    """Create (or point at the new image) the record of ``repository:tag`` on this
    host; return its uuid. Re-committing a tag moves the tag in Docker, so the record
    of that tag keeps its uuid and now names the new image."""
    with deps.db.writer() as s:
        record = s.scalars(select(Image).where(Image.repo == repository, Image.tag == tag,
                                               Image.host == deps.host)).first()
        if record is None:
            record = Image(uuid=str(uuidlib.uuid4()), repo=repository, tag=tag,
                           host=deps.host, project_id=ctx.project_id, user_id=ctx.user_id)
            s.add(record)
        record.image_id = image.id
        record.size = str(image.size)
        return record.uuid

