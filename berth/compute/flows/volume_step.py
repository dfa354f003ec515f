"""The volume step of the flows that create a container (create, rebuild; a capsule's
members have their own, in ``capsules.create``): wait for and attach the container's
volumes (``attach_volumes``), undone by ``release_volumes``; ``VOLUME_ERRORS`` are
what it raises, which put the container in Error naming the volume. The attachments
themselves are ``berth.compute.volumes``'."""

from __future__ import annotations

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.metrics.catalog import create_phase

#: What the volume steps raise: the container goes to Error naming the volume.
VOLUME_ERRORS = (exc.VolumeUnavailable, exc.VolumeError, exc.VolumeNotFound)


def attach_volumes(deps: AgentDeps, ctx: RequestContext | None, uuid: str
                   ) -> tuple[str, ...]:
    """Wait for and attach the container's volumes (the seed's steps 1-2); Docker's
    binds for them."""
    if deps.volumes is None:
        return ()
    with create_phase("volumes"):
        return deps.volumes.attach(ctx, uuid)


def release_volumes(deps: AgentDeps, ctx: RequestContext | None, uuid: str) -> None:
    """Undo of ``attach_volumes``: what the create made removed, the rest detached."""
    if deps.volumes is not None:
        deps.volumes.release_failed(ctx, [uuid])
