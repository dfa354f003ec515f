"""``GlanceImageDriver``: container images from OpenStack Glance.

fetch, timeline of one image (work on one image id is serialised; others run beside)::

    policy ifnotpresent/never ─► verified tarball in the cache? ─► yes: use it
    find in Glance (name or id, tag) ─► cached with Glance's checksum? ─► yes: use it
    download (progress) ─► checksum checked ─► renamed into the cache ─► use it

"Use it" is the caller's: load the tarball into the engine unless the engine has the
image already (``berth.compute.image_puller``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

from oslo_config import cfg

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.image.base import DownloadProgress, FetchedImage, ImageStoreError, StoredImage
from berth.image.glance import matching
from berth.image.glance.cache import ImageCache
from berth.image.glance.client import GlanceSessions, stored_image

LOG = logging.getLogger(__name__)


class GlanceImageDriver:
    name = "glance"

    def __init__(self, sessions: GlanceSessions, cache: ImageCache) -> None:
        self._sessions = sessions
        self.cache = cache
        self._locks_lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts) -> GlanceImageDriver:
        return cls(GlanceSessions(conf), ImageCache(conf.glance.images_directory))

    def _lock(self, image_id: str) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(image_id, threading.Lock())

    def search(self, ctx: RequestContext | None, ident: str, tag: str | None,
               exact: bool) -> list[StoredImage]:
        api = self._sessions.api(ctx)
        if matching.is_image_id(ident):
            record = api.get(ident)
            found = [stored_image(record)] if record and \
                record.get("container_format") == "docker" else []
            return found
        records = api.docker_images(name=ident if exact else None)
        return matching.matching((stored_image(r) for r in records), ident, tag, exact)

    def find(self, ctx: RequestContext | None, ident: str, tag: str | None) -> StoredImage:
        return matching.only_one(self.search(ctx, ident, tag, exact=True), ident)

    def fetch(self, ctx: RequestContext | None, ident: str, tag: str | None, policy: str,
              progress: DownloadProgress | None = None) -> FetchedImage:
        if policy in ("ifnotpresent", "never"):
            local = self.cache.local(ident, tag)
            if local is not None:
                image, refs = local
                LOG.info("Glance image %s (%s) is cached on this node (pull policy %s)",
                         ident, image.id, policy)
                return FetchedImage(image, self.cache.tar_path(image.id), refs, False)
            if policy == "never":
                raise exc.ImageNotFound(
                    f"Image {ident} not present with pull policy of Never: no downloaded "
                    f"copy of it from Glance on this node. Create the container with "
                    f"image_pull_policy ifnotpresent or always.")
        image = self.find(ctx, ident, tag)
        if image.status != "active":
            raise exc.ImageNotFound(f"Glance image {ident} ({image.id}) is {image.status}, "
                                    f"not active: it holds no data yet.")
        with self._lock(image.id):
            cached = self.cache.cached(image)
            if cached is not None:
                LOG.info("Glance image %s (%s) is cached with checksum %s…: no download",
                         ident, image.id, image.checksum[:12])
                return FetchedImage(image, self.cache.tar_path(image.id), cached, False)
            downloaded = self._download(ctx, image, progress)
        return FetchedImage(image, self.cache.tar_path(image.id), downloaded, True)

    def _download(self, ctx: RequestContext | None, image: StoredImage,
                  progress: DownloadProgress | None) -> tuple[str, ...]:
        if progress is not None:
            progress.started(image)
        try:
            chunks = self._sessions.api(ctx).download(image.id)
            refs = self.cache.store(
                image, chunks,
                (lambda done: progress.advanced(done, image.size)) if progress else None)
        except exc.BerthError as err:
            if progress is not None:
                progress.finished(err.msg)
            raise
        except OSError as err:
            if progress is not None:
                progress.finished(str(err))
            raise ImageStoreError(reason=f"cannot write Glance image {image.id} under "
                                         f"{self.cache.directory}: {err}") from err
        if progress is not None:
            progress.finished(None)
        return refs

    def upload(self, ctx: RequestContext | None, name: str, tag: str,
               data: Iterator[bytes]) -> StoredImage:
        api = self._sessions.api(ctx)
        record = api.create(name, [tag] if tag else [])
        try:
            api.upload(record["id"], data)
        except BaseException:
            LOG.warning("upload of image %s to Glance failed; deleting its record %s",
                        name, record["id"])
            try:
                api.delete(record["id"])
            except exc.BerthError as err:
                LOG.error("could not delete Glance image %s after the failed upload: %s",
                          record["id"], err.msg)
            raise
        done = api.get(record["id"]) or record
        return stored_image(done)

    def delete(self, ctx: RequestContext | None, image_id: str) -> None:
        self._sessions.api(ctx).delete(image_id)

    def forget(self, ident: str) -> bool:
        local = self.cache.local(ident, None)
        image_id = local[0].id if local else ident
        with self._lock(image_id):
            return self.cache.remove(image_id)
