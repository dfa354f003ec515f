"""The ``local`` volume driver: volumes that live on this node.

* A **filesystem volume** is a sparse file ``volume_dir/local/<uuid>.img`` of the
  volume's size, loop-mounted at ``volume_dir/<uuid>``; the filesystem is made when
  the first mount fails on a file that holds none, so its size is a real limit: a
  write past it fails with ENOSPC inside the container. The file is its data: it
  outlives mounts, agents and reboots, and goes only with ``delete``.
* An **injected file** (a ``bind`` mount: base64 content) is written to
  ``volume_dir/<uuid>/<uuid>`` and that file is what the container binds.

The kernel's loop driver is the only thing needed (no LVM, no device-mapper).
"""

from __future__ import annotations

import base64
import logging
import os
import shutil
import threading

from berth.common.context import RequestContext
from berth.volume import mounts
from berth.volume.base import LOCAL, Attached, VolumeDriver, VolumeRef

LOG = logging.getLogger(__name__)

_GIB = 1024 ** 3


class LocalVolumeDriver(VolumeDriver):
    provider = LOCAL

    def __init__(self, volume_dir: str, fstype: str = "ext4",
                 default_size_gib: int = 1) -> None:
        self.volume_dir = volume_dir
        self.fstype = fstype
        self.default_size_gib = default_size_gib
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # -- where things are -------------------------------------------------------------

    def mount_dir(self, uuid: str) -> str:
        return os.path.join(self.volume_dir, uuid)

    def backing_file(self, uuid: str) -> str:
        return os.path.join(self.volume_dir, "local", f"{uuid}.img")

    def _lock(self, uuid: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(uuid, threading.Lock())

    # -- the driver -------------------------------------------------------------------

    def attach(self, ctx: RequestContext | None, ref: VolumeRef) -> Attached:
        with self._lock(ref.uuid):
            if ref.is_file:
                return Attached(self._write_file(ref))
            target = self.mount_dir(ref.uuid)
            if mounts.is_mounted(target):
                return Attached(target)
            image, new = self._ensure_backing_file(ref)
            os.makedirs(target, exist_ok=True)
            if new:       # nothing to probe: a file made just now holds no filesystem
                mounts.make_filesystem(image, self.fstype)
                mounts.mount(image, target, self.fstype, ("loop",))
                LOG.info("volume %s: made its %s filesystem", ref.uuid, self.fstype)
            elif mounts.mount_or_format(image, target, self.fstype, ("loop",)):
                LOG.info("volume %s: made its %s filesystem", ref.uuid, self.fstype)
            LOG.info("volume %s (%d GiB) mounted at %s", ref.uuid, self._size(ref), target)
            return Attached(target)

    def detach(self, ctx: RequestContext | None, ref: VolumeRef) -> None:
        with self._lock(ref.uuid):
            target = self.mount_dir(ref.uuid)
            if ref.is_file:
                shutil.rmtree(target, ignore_errors=True)
                return
            if mounts.is_mounted(target):
                mounts.umount(target)
                LOG.info("volume %s unmounted from %s", ref.uuid, target)
            try:
                os.rmdir(target)
            except FileNotFoundError:
                pass
            except OSError as err:
                LOG.warning("volume %s: could not remove its mount point %s: %s",
                            ref.uuid, target, err)

    def delete(self, ctx: RequestContext | None, ref: VolumeRef, timeout: float) -> None:
        self.detach(ctx, ref)
        if not ref.is_file:
            try:
                os.unlink(self.backing_file(ref.uuid))
                LOG.info("volume %s deleted with its data", ref.uuid)
            except FileNotFoundError:
                pass
        with self._locks_guard:
            self._locks.pop(ref.uuid, None)

    def is_attached(self, ref: VolumeRef) -> bool:
        if ref.is_file:
            return os.path.isfile(os.path.join(self.mount_dir(ref.uuid), ref.uuid))
        return mounts.is_mounted(self.mount_dir(ref.uuid))

    def exists(self, ref: VolumeRef) -> bool:
        """Whether the volume's data is on this node."""
        return ref.is_file or os.path.exists(self.backing_file(ref.uuid))

    # -- helpers ----------------------------------------------------------------------

    def _size(self, ref: VolumeRef) -> int:
        return ref.size_gib or self.default_size_gib

    def _ensure_backing_file(self, ref: VolumeRef) -> tuple[str, bool]:
        """The volume's backing file, and whether it was made now."""
        path = self.backing_file(ref.uuid)
        if os.path.exists(path):
            return path, False
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        partial = f"{path}.new"
        with open(partial, "wb") as f:
            f.truncate(self._size(ref) * _GIB)       # sparse: no block written yet
        os.replace(partial, path)
        LOG.info("volume %s: created its %d GiB backing file %s", ref.uuid,
                 self._size(ref), path)
        return path, True

    def _write_file(self, ref: VolumeRef) -> str:
        directory = self.mount_dir(ref.uuid)
        path = os.path.join(directory, ref.uuid)
        if os.path.isfile(path):
            return path
        os.makedirs(directory, exist_ok=True)
        partial = f"{path}.new"
        with open(partial, "wb") as f:
            f.write(base64.b64decode(ref.contents or ""))
        os.replace(partial, path)
        return path
