"""GlanceImageDriver.fetch per pull policy, with a fake Glance (pure logic: which
calls are made, what is downloaded, what the progress hears)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from unit.image.glance.conftest import image_tarball, sha512

from berth.common import exceptions as exc
from berth.image.base import ImageStoreError, StoredImage
from berth.image.glance.cache import ImageCache
from berth.image.glance.driver import GlanceImageDriver

DATA = image_tarball(["team/app:1"])
ID = "0f9e73f2-b878-4afa-9805-16107af9e372"


class FakeGlance:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = [self.record(DATA)]
        self.data = DATA
        self.downloads = 0
        self.calls = 0
        self.fail_download: Exception | None = None

    @staticmethod
    def record(data: bytes, **kw: Any) -> dict[str, Any]:
        return {"id": ID, "name": "app", "tags": ["v1"], "container_format": "docker",
                "os_hash_algo": "sha512", "os_hash_value": sha512(data), "size": len(data),
                "status": "active", **kw}

    def api(self, ctx: object) -> FakeGlance:
        self.calls += 1
        return self

    def get(self, image_id: str) -> dict[str, Any] | None:
        return next((r for r in self.records if r["id"] == image_id), None)

    def docker_images(self, name: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.records if name is None or r["name"] == name]

    def download(self, image_id: str) -> Iterator[bytes]:
        self.downloads += 1
        if self.fail_download is not None:
            raise self.fail_download
        yield self.data[:100]
        yield self.data[100:]


class Progress:
    def __init__(self) -> None:
        self.heard: list[tuple[str, object]] = []

    def started(self, image: StoredImage) -> None:
        self.heard.append(("started", image.id))

    def advanced(self, done: int, total: int | None) -> None:
        self.heard.append(("advanced", (done, total)))

    def finished(self, error: str | None) -> None:
        self.heard.append(("finished", error))


@pytest.fixture
def glance() -> FakeGlance:
    return FakeGlance()


@pytest.fixture
def driver(glance: FakeGlance, tmp_path: Path) -> GlanceImageDriver:
    return GlanceImageDriver(glance, ImageCache(str(tmp_path)))  # type: ignore[arg-type]


def test_always_downloads_once_then_reuses_the_same_checksum(
        driver: GlanceImageDriver, glance: FakeGlance) -> None:
    progress = Progress()
    first = driver.fetch(None, "app", None, "always", progress)
    assert first.downloaded and first.references == ("team/app:1",)
    assert progress.heard[0] == ("started", ID) and progress.heard[-1] == ("finished", None)
    assert ("advanced", (len(DATA), len(DATA))) in progress.heard
    again = driver.fetch(None, ID, None, "always", Progress())
    assert not again.downloaded and glance.downloads == 1
    # a new upload under the same id (another checksum) is downloaded again
    glance.data = image_tarball(["team/app:2"])
    glance.records = [glance.record(glance.data)]
    assert driver.fetch(None, "app", None, "always").references == ("team/app:2",)
    assert glance.downloads == 2


def test_ifnotpresent_and_never_use_the_cache_without_asking_glance(
        driver: GlanceImageDriver, glance: FakeGlance) -> None:
    with pytest.raises(exc.ImageNotFound, match="pull policy of Never"):
        driver.fetch(None, "app", None, "never")
    assert glance.calls == 0
    driver.fetch(None, "app", None, "ifnotpresent")
    calls = glance.calls
    for policy in ("ifnotpresent", "never"):
        got = driver.fetch(None, "app", "v1", policy)
        assert not got.downloaded and got.image.id == ID
    assert glance.calls == calls and glance.downloads == 1


def test_unknown_ambiguous_or_unready_images_are_refused(
        driver: GlanceImageDriver, glance: FakeGlance) -> None:
    with pytest.raises(exc.ImageNotFound, match="nosuch could not be found"):
        driver.fetch(None, "nosuch", None, "always")
    glance.records = [glance.record(DATA, id="other", name="app"),
                      glance.record(DATA, name="app")]
    with pytest.raises(exc.Conflict, match="Multiple images"):
        driver.fetch(None, "app", None, "always")
    glance.records = [glance.record(DATA, status="queued")]
    with pytest.raises(exc.ImageNotFound, match="queued, not active"):
        driver.fetch(None, "app", None, "always")
    glance.records = [glance.record(DATA, container_format="bare")]
    with pytest.raises(exc.ImageNotFound):
        driver.fetch(None, ID, None, "always")
    assert glance.downloads == 0


def test_a_failed_download_is_reported_and_caches_nothing(
        driver: GlanceImageDriver, glance: FakeGlance, tmp_path: Path) -> None:
    glance.fail_download = ImageStoreError(reason="connection reset")
    progress = Progress()
    with pytest.raises(ImageStoreError):
        driver.fetch(None, "app", None, "always", progress)
    assert progress.heard[-1] == ("finished", "connection reset")
    assert list(tmp_path.iterdir()) == []


def test_search_by_substring_and_forget(driver: GlanceImageDriver) -> None:
    assert [i.id for i in driver.search(None, "ap", None, exact=False)] == [ID]
    assert driver.search(None, "ap", None, exact=True) == []
    driver.fetch(None, "app", None, "always")
    assert driver.forget("app") and not driver.forget(ID)
