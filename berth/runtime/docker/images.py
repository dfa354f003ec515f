"""DockerRuntime operations: remove image, load and save image tarballs, search.

A mixin of :class:`~berth.runtime.docker.driver.DockerRuntime`: it uses
``self._api()`` (the shared low-level APIClient) inside ``translate_errors()``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from berth.runtime.base import (
    ImageSearchResult,
    RuntimeImageNotFound,
    RuntimeInvalid,
    RuntimeNotFound,
)
from berth.runtime.docker.errors import translate_errors

if TYPE_CHECKING:
    import docker

LOG = logging.getLogger(__name__)


class ImagesMixin:
    if TYPE_CHECKING:
        def _api(self) -> docker.APIClient: ...

    def remove_image(self, ref: str) -> None:
        """``docker rmi ref`` (no force, parents pruned): untags ``repo:tag`` and removes
        the image with its last tag. Missing: no-op. Used by a container: RuntimeConflict."""
        try:
            with translate_errors():
                self._api().remove_image(ref)
        except (RuntimeImageNotFound, RuntimeNotFound):
            LOG.info("image %s is not on this node; nothing to remove", ref)
            return
        LOG.info("removed image %s", ref)

    def import_image(self, ref: str, rootfs_tar: bytes, command: tuple[str, ...],
                     labels: dict[str, str]) -> None:
        """``docker import``: make image ``ref`` (``repo:tag``) of the files in
        ``rootfs_tar``, with ``command`` as its default command. Idempotent: a second
        import retags ``ref`` to an equal image."""
        repo, _, tag = ref.rpartition(":")
        changes = [f"CMD {json.dumps(list(command))}",
                   *(f"LABEL {json.dumps(k)}={json.dumps(v)}" for k, v in labels.items())]
        with translate_errors():
            self._api().import_image_from_data(rootfs_tar, repository=repo or ref,
                                               tag=tag if repo else "latest",
                                               changes=changes)
        LOG.info("made image %s locally (%d bytes of files)", ref, len(rootfs_tar))

    def load_image(self, tar_path: str) -> tuple[str, ...]:
        """``docker load < tar_path``: the engine reads the tarball as it is sent (the
        file is streamed, never held in memory) and reports each image it loaded."""
        loaded: list[str] = []
        with open(tar_path, "rb") as data, translate_errors():
            for message in self._api().load_image(data):
                if message.get("error"):
                    raise RuntimeInvalid(f"docker load of {tar_path} failed: "
                                         f"{str(message['error']).strip()}")
                text = str(message.get("stream") or "").strip()
                for prefix in ("Loaded image: ", "Loaded image ID: "):
                    if text.startswith(prefix):
                        loaded.append(text[len(prefix):].strip())
        if not loaded:
            raise RuntimeInvalid(f"docker load of {tar_path} loaded no image: it is not "
                                 f"an image tarball (docker save)")
        LOG.info("loaded image %s from %s", ", ".join(loaded), tar_path)
        return tuple(loaded)

    def save_image(self, ref: str) -> Iterator[bytes]:
        """``docker save ref``, chunk by chunk (2 MiB)."""
        with translate_errors():
            stream = self._api().get_image(ref, chunk_size=2 * 1024 * 1024)
        return _translated(stream)

    def search_images(self, term: str, limit: int = 25) -> tuple[ImageSearchResult, ...]:
        """``docker search term`` against the engine's index (Docker Hub)."""
        with translate_errors():
            hits: list[dict[str, Any]] = self._api().search(term, limit=limit)
        return tuple(result_from_search(h) for h in hits)


def result_from_search(hit: dict[str, Any]) -> ImageSearchResult:
    """One entry of the engine's ``/images/search`` answer."""
    return ImageSearchResult(
        name=str(hit.get("name") or ""), description=str(hit.get("description") or ""),
        is_official=bool(hit.get("is_official")), is_automated=bool(hit.get("is_automated")),
        star_count=int(hit.get("star_count") or 0))


def _translated(stream: Iterator[bytes]) -> Iterator[bytes]:
    """The engine's chunks, with its failures mid-stream translated."""
    with translate_errors():
        yield from stream
