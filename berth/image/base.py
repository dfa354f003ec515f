"""The interface of an image store driver: a service that holds container images as
``docker save`` tarballs (Glance), as opposed to a registry the engine pulls from
itself (the docker driver, ``berth.compute.image_puller``).

A store driver finds an image by name or id, brings its tarball onto the node (a
cache it owns), searches the store, and takes a new image in (``commit``). Loading
the tarball into the engine is the caller's (the agent's image puller), so that the
driver never touches Docker.

    BerthError
    └── ImageStoreError               the store failed or cannot be reached (500)
        (an unknown image is exc.ImageNotFound; several matches exc.Conflict)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from berth.common.context import RequestContext
from berth.common.exceptions import BerthError


class ImageStoreError(BerthError):
    """The image store failed, or cannot be reached."""

    message = "%(reason)s"


@dataclass(frozen=True, slots=True)
class StoredImage:
    """An image record of the store."""

    id: str
    name: str
    tags: tuple[str, ...] = ()
    #: The store's checksum of the tarball: ``algorithm`` (``md5``, ``sha512``...)
    #: and its hex ``value``; empty when the store has none (no data yet).
    checksum_algorithm: str = ""
    checksum: str = ""
    size: int | None = None
    status: str = "active"


@dataclass(frozen=True, slots=True)
class FetchedImage:
    """An image's tarball on this node: ``path``; ``references`` the tarball's own
    ``repo:tag`` names (its manifest), the first being what a container is created
    from; ``downloaded``: it came from the store now (else from the cache)."""

    image: StoredImage
    path: str
    references: tuple[str, ...]
    downloaded: bool


class DownloadProgress(Protocol):
    """What a download reports, for the logs and the action's events."""

    def started(self, image: StoredImage) -> None: ...

    def advanced(self, done: int, total: int | None) -> None: ...

    def finished(self, error: str | None) -> None: ...


class ImageStoreDriver(Protocol):
    """Thread-safe. ``ctx``: the caller (its token is used when it has one)."""

    name: str

    def find(self, ctx: RequestContext | None, ident: str, tag: str | None) -> StoredImage:
        """The one image named ``ident`` (or with id ``ident``), with ``tag`` among its
        tags when given. exc.ImageNotFound; exc.Conflict when several match."""

    def search(self, ctx: RequestContext | None, ident: str, tag: str | None,
               exact: bool) -> list[StoredImage]:
        """Images whose name equals (``exact``) or contains ``ident``."""

    def fetch(self, ctx: RequestContext | None, ident: str, tag: str | None, policy: str,
              progress: DownloadProgress | None = None) -> FetchedImage:
        """The image's tarball on this node per the pull ``policy`` (``always``: ask
        the store, download unless the cache holds the same checksum;
        ``ifnotpresent``: a cached copy is used without asking; ``never``: only a
        cached copy). exc.ImageNotFound when there is none to be had."""

    def upload(self, ctx: RequestContext | None, name: str, tag: str,
               data: Iterator[bytes]) -> StoredImage:
        """A new image ``name`` (tags ``[tag]``) holding the tarball ``data``."""

    def delete(self, ctx: RequestContext | None, image_id: str) -> None:
        """Remove the image from the store (absent: no-op)."""

    def forget(self, ident: str) -> bool:
        """Drop the cached tarball of the image ``ident`` (id or name); whether one was."""
