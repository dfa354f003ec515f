"""The cache of downloaded Glance images: verified by checksum on the way in, reused
only while Glance's checksum and the file are the ones verified."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from unit.image.glance.conftest import image_tarball, sha512

from berth.image.base import ImageStoreError, StoredImage
from berth.image.glance.cache import ImageCache

DATA = image_tarball(["team/app:1"])


def stored(data: bytes = DATA, **kw: object) -> StoredImage:
    values: dict[str, object] = {"id": "img-1", "name": "app", "tags": ("v1",),
                                 "checksum_algorithm": "sha512", "checksum": sha512(data),
                                 "size": len(data)}
    values.update(kw)
    return StoredImage(**values)  # type: ignore[arg-type]


def chunks(data: bytes, size: int = 1000) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def test_a_verified_download_is_cached_with_its_references(tmp_path: Path) -> None:
    cache = ImageCache(str(tmp_path / "images"))
    seen: list[int] = []
    assert cache.store(stored(), chunks(DATA), seen.append) == ("team/app:1",)
    assert seen[-1] == len(DATA) and len(seen) == len(chunks(DATA))
    assert Path(cache.tar_path("img-1")).read_bytes() == DATA
    assert cache.cached(stored()) == ("team/app:1",)
    # Glance's legacy md5 works as well
    md5 = stored(checksum_algorithm="md5", checksum=hashlib.md5(DATA).hexdigest())
    assert cache.store(md5, [DATA]) == ("team/app:1",)
    assert cache.cached(md5) == ("team/app:1",)


def test_another_checksum_or_a_changed_file_is_not_reused(tmp_path: Path) -> None:
    cache = ImageCache(str(tmp_path))
    cache.store(stored(), [DATA])
    assert cache.cached(stored(checksum="0" * 128)) is None
    assert cache.cached(stored(checksum="")) is None
    with open(cache.tar_path("img-1"), "ab") as f:
        f.write(b"x")
    assert cache.cached(stored()) is None
    assert cache.local("app", None) is None


@pytest.mark.parametrize(("image", "words"), [
    (stored(checksum="1" * 128), "is corrupt"),
    (stored(size=len(DATA) + 5), "cut short"),
    (stored(image_tarball(None)[:0] or b"not a tar", checksum=sha512(b"not a tar"),
            size=len(b"not a tar")), "not a docker save tarball")])
def test_a_bad_download_leaves_nothing_cached(tmp_path: Path, image: StoredImage,
                                              words: str) -> None:
    cache = ImageCache(str(tmp_path))
    data = b"not a tar" if "docker save" in words else DATA
    with pytest.raises(ImageStoreError, match=words):
        cache.store(image, [data])
    assert os.listdir(tmp_path) == []


def test_an_untagged_image_is_named_by_its_config_digest(tmp_path: Path) -> None:
    data = image_tarball(None)
    refs = ImageCache(str(tmp_path)).store(stored(data), [data])
    assert refs == ("sha256:" + "ab" * 32,)


def test_local_finds_by_id_or_name_and_tag_without_glance(tmp_path: Path) -> None:
    cache = ImageCache(str(tmp_path))
    cache.store(stored(), [DATA])
    for ident, tag in (("img-1", None), ("app", None), ("app", "v1")):
        found = cache.local(ident, tag)
        assert found is not None and found[0].id == "img-1" and found[1] == ("team/app:1",)
    assert cache.local("app", "v2") is None and cache.local("other", None) is None
    assert cache.remove("img-1") and not cache.remove("img-1")
    assert cache.local("app", None) is None
