"""Images from an image store (``image_driver = glance``): the store driver brings the
image's tarball onto the node (``berth.image.glance``), this module loads it into the
node's engine and reports the download: progress in the log (with the container's
uuid, as every line of its create) and the event ``compute__image_download`` on the
create's action (started when the download begins, Success or Error with the reason).

Every failure of the store comes out as exc.ImageNotFound naming the image, which the
create, rebuild and capsule flows write on the row (Error) after undoing their work.
"""

from __future__ import annotations

import logging
import time

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.db import actions as db_actions
from berth.image.base import ImageStoreDriver, StoredImage
from berth.image.glance.matching import split_name
from berth.image.reference import parse_image
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: The action event of a download from an image store.
DOWNLOAD_EVENT = "compute__image_download"


class DownloadReporter:
    """Logs a download every tenth of its size (or every 5 s when Glance gives no
    size) and records it as an event of the request's action."""

    def __init__(self, deps: AgentDeps, uuid: str | None, ctx: RequestContext | None,
                 ) -> None:
        self._deps, self._uuid, self._ctx = deps, uuid, ctx
        self._event: int | None = None
        self._image: StoredImage | None = None
        self._began = 0.0
        self._last_step = -1
        self._last_log = 0.0

    def started(self, image: StoredImage) -> None:
        self._image, self._began = image, time.monotonic()
        self._last_log = self._began
        size = f"{image.size / 2**20:.1f} MiB" if image.size is not None else "size unknown"
        LOG.info("downloading image %s (%s, %s) from Glance", image.name, image.id, size)
        if self._uuid and self._ctx is not None:
            self._event = db_actions.event_start(self._deps.db, self._uuid,
                                                 self._ctx.request_id, DOWNLOAD_EVENT)

    def advanced(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if total:
            step = done * 10 // total
            if step == self._last_step:
                return
            self._last_step = step
            LOG.info("downloading image %s from Glance: %d%% (%.1f of %.1f MiB)",
                     self._name, step * 10, done / 2**20, total / 2**20)
        elif now - self._last_log >= 5.0:
            self._last_log = now
            LOG.info("downloading image %s from Glance: %.1f MiB so far", self._name,
                     done / 2**20)

    def finished(self, error: str | None) -> None:
        took = time.monotonic() - self._began
        if error is None:
            LOG.info("downloaded image %s from Glance in %.1f s", self._name, took)
        else:
            LOG.error("download of image %s from Glance failed after %.1f s: %s",
                      self._name, took, error)
        db_actions.event_finish(self._deps.db, self._event, error is not None,
                                traceback=error)

    @property
    def _name(self) -> str:
        return self._image.name if self._image else "?"


def pull_from_store(deps: AgentDeps, store: ImageStoreDriver, image: str, policy: str,
                    ctx: RequestContext | None, uuid: str | None
                    ) -> tuple[rt.ImageRef, rt.ImageInfo]:
    """The image ``image`` (a Glance name, ``name:tag`` or id) present in the engine."""
    name, tag = split_name(image)
    try:
        fetched = store.fetch(ctx, name, tag, policy, DownloadReporter(deps, uuid, ctx))
    except exc.ImageNotFound:
        raise
    except exc.BerthError as err:
        raise exc.ImageNotFound(f"Image {image} could not be fetched from {store.name}: "
                                f"{err.msg}") from err
    first = fetched.references[0]
    # An untagged image is named by its id (sha256:...), which is no reference.
    ref = rt.ImageRef(repo="sha256", tag=first.removeprefix("sha256:")) \
        if first.startswith("sha256:") else parse_image(first)
    if not fetched.downloaded:
        try:
            info = deps.runtime.inspect_image(fetched.references[0])
            LOG.info("image %s from Glance is loaded in the engine already", ref.ref)
            return ref, info
        except rt.RuntimeImageNotFound:
            pass
    LOG.info("loading image %s (Glance image %s) into the engine", ref.ref, fetched.image.id)
    deps.recent_images.forget(fetched.references[0])
    try:
        deps.runtime.load_image(fetched.path)
        return ref, deps.runtime.inspect_image(fetched.references[0])
    except rt.RuntimeInvalid as err:
        store.forget(fetched.image.id)
        raise exc.ImageNotFound(f"Image {image} from {store.name} could not be loaded "
                                f"into Docker: {err.msg}") from err
    except rt.RuntimeImageNotFound as err:
        raise exc.ImageNotFound(f"Image {image} from {store.name} did not load as "
                                f"{fetched.references[0]} ({err.msg})") from err
