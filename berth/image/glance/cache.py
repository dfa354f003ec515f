"""Downloaded Glance images on this node: ``<images_directory>/<glance id>.tar`` (Zun's
layout) and beside it ``<glance id>.json``, what berth knows of that tarball: the
Glance record it came from (name, tags, checksum), the tarball's size and
modification time when it was verified, and the references its manifest names.

A tarball is reused when its record's checksum is the one Glance gives now and the file
is still the one verified (same size and mtime): a second create of an image reads no
byte of it. A download is written to a temporary file, hashed as it arrives, checked
against Glance's checksum, and only then renamed into place: a cut or corrupt
download never looks cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from berth.image.base import ImageStoreError, StoredImage

LOG = logging.getLogger(__name__)


def new_hash(algorithm: str) -> Any:
    """A hashlib object for Glance's ``os_hash_algo`` (or ``md5``, its legacy
    ``checksum``). ImageStoreError for an algorithm this Python lacks."""
    try:
        return hashlib.new(algorithm, usedforsecurity=False)
    except (ValueError, TypeError) as err:
        raise ImageStoreError(reason=f"Glance's checksum algorithm {algorithm!r} is not "
                                     f"available here: {err}") from err


def manifest_references(path: str) -> tuple[str, ...]:
    """The ``RepoTags`` of every image in a ``docker save`` tarball's manifest.json;
    for an image without tags its config digest (``sha256:...``), as Zun does.
    ImageStoreError when the file is no image tarball."""
    try:
        with tarfile.open(path, "r:") as tar:
            member = tar.extractfile("manifest.json")
            if member is None:
                raise KeyError("manifest.json")
            manifest = json.load(member)
    except (tarfile.TarError, KeyError, OSError, ValueError) as err:
        raise ImageStoreError(reason=f"the Glance image data is not a docker save "
                                     f"tarball (no readable manifest.json: {err})") from err
    refs: list[str] = []
    for entry in manifest if isinstance(manifest, list) else []:
        tags = entry.get("RepoTags") or []
        if tags:
            refs.extend(str(t) for t in tags)
        elif entry.get("Config"):
            name = os.path.basename(str(entry["Config"])).removesuffix(".json")
            refs.append(name if name.startswith("sha256:") else f"sha256:{name}")
    if not refs:
        raise ImageStoreError(reason="the Glance image's tarball names no image")
    return tuple(refs)


class ImageCache:
    """Thread-safe for different images; the driver serialises work on one image."""

    def __init__(self, directory: str) -> None:
        self.directory = directory

    def tar_path(self, image_id: str) -> str:
        return os.path.join(self.directory, f"{image_id}.tar")

    def _meta_path(self, image_id: str) -> str:
        return os.path.join(self.directory, f"{image_id}.json")

    def _meta(self, image_id: str) -> dict[str, Any] | None:
        try:
            with open(self._meta_path(image_id), encoding="utf-8") as f:
                meta = json.load(f)
            st = os.stat(self.tar_path(image_id))
        except (OSError, ValueError):
            return None
        if st.st_size != meta.get("file_size") or st.st_mtime_ns != meta.get("mtime_ns"):
            return None         # changed since it was verified: not to be trusted
        return meta if isinstance(meta, dict) else None

    def cached(self, image: StoredImage) -> tuple[str, ...] | None:
        """The references of the cached tarball of ``image`` when it holds what Glance
        has now (the same checksum); None otherwise."""
        meta = self._meta(image.id)
        if meta is None or not image.checksum:
            return None
        if (meta.get("checksum_algorithm"), meta.get("checksum")) != \
                (image.checksum_algorithm, image.checksum):
            return None
        return tuple(meta.get("references") or ()) or None

    def local(self, ident: str, tag: str | None) -> tuple[StoredImage, tuple[str, ...]] | None:
        """A verified tarball of the image with id or name ``ident`` (and ``tag``
        among its tags when given), without asking Glance: the newest one."""
        best: tuple[int, StoredImage, tuple[str, ...]] | None = None
        try:
            names = os.listdir(self.directory)
        except OSError:
            return None
        for name in names:
            if not name.endswith(".json"):
                continue
            meta = self._meta(name.removesuffix(".json"))
            if meta is None or ident not in (meta.get("id"), meta.get("name")):
                continue
            tags = tuple(meta.get("tags") or ())
            if tag and tags and tag not in tags:
                continue
            image = StoredImage(id=meta["id"], name=meta.get("name") or "", tags=tags,
                                checksum_algorithm=meta.get("checksum_algorithm") or "",
                                checksum=meta.get("checksum") or "", size=meta.get("size"))
            if best is None or meta["mtime_ns"] > best[0]:
                best = (meta["mtime_ns"], image, tuple(meta.get("references") or ()))
        return None if best is None else (best[1], best[2])

    def store(self, image: StoredImage, chunks: Iterable[bytes],
              advanced: Callable[[int], None] | None = None) -> tuple[str, ...]:
        """Write ``chunks`` (the image's data) as the cached tarball of ``image``,
        checking Glance's checksum; return the tarball's references."""
        os.makedirs(self.directory, exist_ok=True)
        digest = new_hash(image.checksum_algorithm) if image.checksum else None
        fd, part = tempfile.mkstemp(prefix=f".{image.id}.", suffix=".part",
                                    dir=self.directory)
        try:
            done = 0
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
                    if digest is not None:
                        digest.update(chunk)
                    done += len(chunk)
                    if advanced is not None:
                        advanced(done)
            if digest is not None and digest.hexdigest() != image.checksum:
                raise ImageStoreError(reason=(
                    f"the download of Glance image {image.id} is corrupt: its "
                    f"{image.checksum_algorithm} is {digest.hexdigest()}, Glance says "
                    f"{image.checksum}"))
            if image.size is not None and done != image.size:
                raise ImageStoreError(reason=(
                    f"the download of Glance image {image.id} was cut short: {done} of "
                    f"{image.size} bytes"))
            references = manifest_references(part)
            os.replace(part, self.tar_path(image.id))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(part)
            raise
        st = os.stat(self.tar_path(image.id))
        meta = {**asdict(image), "tags": list(image.tags), "references": list(references),
                "file_size": st.st_size, "mtime_ns": st.st_mtime_ns}
        tmp = self._meta_path(image.id) + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(meta, f)
        os.replace(tmp, self._meta_path(image.id))
        return references

    def remove(self, image_id: str) -> bool:
        """Drop the cached tarball of ``image_id``; whether there was one."""
        removed = False
        for path in (self._meta_path(image_id), self.tar_path(image_id)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
                removed = True
        return removed
