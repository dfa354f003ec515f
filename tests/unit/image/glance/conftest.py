"""Image tarballs shaped as ``docker save`` writes them (only what berth reads)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile


def image_tarball(repo_tags: list[str] | None, payload: bytes = b"layer") -> bytes:
    """A tarball with a manifest.json naming ``repo_tags`` (None: an untagged image)."""
    out = io.BytesIO()
    manifest = [{"Config": "blobs/sha256/" + "ab" * 32, "RepoTags": repo_tags,
                 "Layers": ["blobs/sha256/" + "cd" * 32]}]
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in (("blobs/sha256/" + "cd" * 32, payload),
                           ("manifest.json", json.dumps(manifest).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def sha512(data: bytes) -> str:
    return hashlib.sha512(data).hexdigest()
