"""The volume step: the containers' volumes waited for and attached (the seed's
create steps 1-2), Docker's binds for them, and on failure released again;
``VOLUME_ERRORS`` are what it raises, which put the container in Error naming the
volume. The attachments themselves are ``berth.compute.volumes``'."""

from __future__ import annotations

import concurrent.futures as cf

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.metrics.catalog import create_phase

#: What the volume step raises: the container goes to Error naming the volume.
VOLUME_ERRORS = (exc.VolumeUnavailable, exc.VolumeError, exc.VolumeNotFound)


class Volumes:
    """The volumes of ``uuids`` (a container, or a capsule's members).

    ``made_here``: the flow makes the containers (create), so a release removes the
    volumes made for them (auto-remove) and detaches the rest; False (rebuild): the
    volumes are the container's for its life, so a release only detaches them.
    ``overlapped``: ``acquire`` begins the attaching beside the flow (create: beside
    the pull), which ``binds`` joins."""

    def __init__(self, deps: AgentDeps, ctx: RequestContext | None, uuids: list[str], *,
                 made_here: bool = True, overlapped: bool = False) -> None:
        self._deps, self._ctx, self._uuids = deps, ctx, list(uuids)
        self._made_here, self._overlapped = made_here, overlapped
        self._began = False
        self._attaching: cf.Future[dict[str, tuple[str, ...]]] | None = None
        self._binds: dict[str, tuple[str, ...]] = {}

    def acquire(self) -> None:
        """VOLUME_ERRORS naming the volume when one cannot be used (raised by
        ``binds`` when overlapped)."""
        if self._deps.volumes is None:
            return
        self._began = True
        if self._overlapped:
            self._attaching = common.overlapped(self._deps, attach_volumes, self._deps,
                                                self._ctx, self._uuids)
        else:
            self._binds = attach_volumes(self._deps, self._ctx, self._uuids)

    def binds(self) -> dict[str, tuple[str, ...]]:
        """Docker's binds of each container (joined first when overlapped)."""
        if self._attaching is not None:
            self._binds = self._attaching.result()
        return self._binds

    def release(self) -> None:
        """Idempotent; never raises a berth error (what cannot be undone now is
        logged, and the start-up reconciliation of volumes retries it)."""
        volumes = self._deps.volumes
        if volumes is None or not self._began:
            return
        if self._attaching is not None:
            common.settle(self._attaching)     # an attach still under way finishes first
        if self._made_here:
            volumes.release_failed(self._ctx, self._uuids)
        else:
            for uuid in self._uuids:
                volumes.settle_all_of(uuid)    # kept, detached: no container binds them


def attach_volumes(deps: AgentDeps, ctx: RequestContext | None, uuids: list[str]
                   ) -> dict[str, tuple[str, ...]]:
    """Wait for and attach the containers' volumes; Docker's binds for each."""
    if deps.volumes is None:
        return {}
    with create_phase("volumes"):
        return deps.volumes.binds_of(ctx, uuids)


def release_volumes(deps: AgentDeps, ctx: RequestContext | None, uuid: str) -> None:
    """A create's volumes released (a cut-short create, recovery): what it made
    removed, the rest detached."""
    if deps.volumes is not None:
        deps.volumes.release_failed(ctx, [uuid])
