"""The volume driver interface: what the API and the agent ask of a volume's provider.

A provider is ``local`` (a filesystem in a sparse file on the node, or an injected
file) or ``cinder``. The API side resolves and creates volumes at request time; the
agent side makes one usable on its node and takes it away again::

    API    find(ctx, source) ─► an existing volume's id and state   (cinder)
           create(ctx, size) ─► a new volume's id                    (cinder; local: none)
           delete(ctx, ref)  ─► the volume is gone (auto-remove, or an undone create)
    agent  wait_available(ref, timeout)   the seed's step 1
           attach(ref) ─► Attached(path, connection_info)   the seed's step 2: the
                          volume's filesystem mounted at volume_dir/<uuid> (or its
                          injected file written there), idempotent
           detach(ref)                    unmounted and released, idempotent
           is_attached(ref)               what the node holds now (recovery)

Every call is idempotent where it says so, so that recovery can simply call it
again after a crash. Errors are :class:`VolumeError` with a message that says what
to do.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext

LOCAL = "local"
CINDER = "cinder"


VolumeError = exc.VolumeError
VolumeNotFound = exc.VolumeNotFound
VolumeUnavailable = exc.VolumeUnavailable


@dataclass(frozen=True, slots=True)
class VolumeRef:
    """What a driver needs to know of one volume row."""

    uuid: str
    provider: str
    project_id: str | None = None
    cinder_volume_id: str | None = None
    size_gib: int | None = None
    #: Base64 file content: a ``bind`` mount's injected file (local only).
    contents: str | None = None
    #: The driver's own record of an attachment (Cinder's connection info), as
    #: ``attach`` returned it: reused by recovery's remount.
    connection_info: dict[str, Any] | None = None

    @property
    def is_file(self) -> bool:
        return self.contents is not None

    def with_connection(self, info: dict[str, Any] | None) -> VolumeRef:
        return dataclasses.replace(self, connection_info=info)


@dataclass(frozen=True, slots=True)
class FoundVolume:
    """An existing volume as its provider sees it (API side)."""

    volume_id: str
    status: str                 # Cinder's words: available, in-use, creating, error, ...
    multiattach: bool = False
    size_gib: int | None = None


def attachable(status: str, multiattach: bool) -> bool:
    """Whether a volume can be attached now: available, or in-use and multi-attach."""
    return status == "available" or (status == "in-use" and multiattach)


@dataclass(frozen=True, slots=True)
class Attached:
    """Where an attached volume is on the node: a directory with its filesystem (or,
    for an injected file, the file itself), and what to keep for a later remount."""

    path: str
    connection_info: dict[str, Any] | None = None


class VolumeDriver(abc.ABC):
    """One provider's volumes. Thread-safe: the agent attaches volumes of different
    containers at once (one volume is never attached and detached at once: the
    caller serialises a volume's changes)."""

    provider: str

    # -- API side -------------------------------------------------------------------

    def find(self, ctx: RequestContext, source: str) -> FoundVolume:
        """The volume named or identified by ``source`` (by name: in the caller's
        project); VolumeNotFound when there is none (or several by that name),
        VolumeUnavailable when it cannot be attached now (``attachable``)."""
        raise VolumeNotFound(reason=f"The {self.provider} volume driver cannot look up "
                                    f"volumes by name or id.")

    def create(self, ctx: RequestContext, size_gib: int, name: str | None = None
               ) -> str | None:
        """Create a volume of ``size_gib`` GiB; its provider id (None: the provider
        creates it when it is first attached, as local volumes are)."""
        return None

    @abc.abstractmethod
    def delete(self, ctx: RequestContext | None, ref: VolumeRef, timeout: float) -> None:
        """Remove the volume and its data, waiting up to ``timeout`` seconds; no error
        when it is gone already."""

    # -- agent side -----------------------------------------------------------------

    def wait_available(self, ctx: RequestContext | None, ref: VolumeRef,
                       timeout: float) -> None:
        """Return once the volume can be attached here; VolumeUnavailable when it is
        in error or not ready within ``timeout`` seconds."""

    @abc.abstractmethod
    def attach(self, ctx: RequestContext | None, ref: VolumeRef) -> Attached:
        """Make the volume usable at ``volume_dir/<uuid>``; when it is already, say
        where (idempotent)."""

    @abc.abstractmethod
    def detach(self, ctx: RequestContext | None, ref: VolumeRef) -> None:
        """Unmount and release it on this node; nothing when it is not attached."""

    @abc.abstractmethod
    def is_attached(self, ref: VolumeRef) -> bool:
        """Whether this node holds the volume attached now (its mount is there)."""
