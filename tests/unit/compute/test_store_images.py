"""compute.store_images.pull_from_store: what the agent does with what an image store
hands it (load or not, errors as ImageNotFound naming the image), on a fake store and a
fake engine (pure logic)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.migrated_sqlite import migrated_url

from berth.common import exceptions as exc
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.store_images import pull_from_store
from berth.db.engine import Database
from berth.image.base import FetchedImage, ImageStoreError, StoredImage
from berth.runtime import base as rt

IMAGE = StoredImage(id="img-1", name="app", checksum_algorithm="sha512", checksum="ab")
INFO = rt.ImageInfo("sha256:1", ("team/app:1",), 10, ("sh",), None)


class Store:
    name = "glance"

    def __init__(self, downloaded: bool = True, error: Exception | None = None) -> None:
        self.downloaded, self.error = downloaded, error
        self.forgotten: list[str] = []
        self.asked: list[tuple[str, str | None, str]] = []

    def fetch(self, ctx: Any, ident: str, tag: str | None, policy: str,
              progress: Any = None) -> FetchedImage:
        self.asked.append((ident, tag, policy))
        if self.error is not None:
            raise self.error
        return FetchedImage(IMAGE, "/cache/img-1.tar", ("team/app:1",), self.downloaded)

    def forget(self, ident: str) -> bool:
        self.forgotten.append(ident)
        return True


class Engine:
    def __init__(self, present: bool = False, loads: bool = True) -> None:
        self.present, self.loads = present, loads
        self.loaded: list[str] = []

    def inspect_image(self, ref: str) -> rt.ImageInfo:
        if not self.present:
            raise rt.RuntimeImageNotFound(reason=ref)
        return INFO

    def load_image(self, path: str) -> tuple[str, ...]:
        if not self.loads:
            raise rt.RuntimeInvalid(reason="unexpected EOF")
        self.loaded.append(path)
        self.present = True
        return ("team/app:1",)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(migrated_url(tmp_path))
    yield database
    database.dispose()


def deps_with(db: Database, engine: Engine) -> AgentDeps:
    return AgentDeps(db=db, runtime=engine, tracker=ResourceTracker(db, "n1"),  # type: ignore[arg-type]
                     settings=AgentSettings(host="n1"), capsules=DockerCapsules())


def test_a_download_is_always_loaded_and_the_tarballs_reference_used(db: Database) -> None:
    engine, store = Engine(present=True), Store(downloaded=True)
    ref, info = pull_from_store(deps_with(db, engine), store, "app:v1", "always", None, None)
    assert store.asked == [("app", "v1", "always")]
    assert engine.loaded == ["/cache/img-1.tar"]
    assert ref.ref == "team/app:1" and info == INFO


def test_a_cached_tarball_is_loaded_only_when_the_engine_lacks_it(db: Database) -> None:
    present = Engine(present=True)
    pull_from_store(deps_with(db, present), Store(downloaded=False), "app", "always", None,
                    None)
    assert present.loaded == []
    absent = Engine(present=False)
    pull_from_store(deps_with(db, absent), Store(downloaded=False), "app", "always", None,
                    None)
    assert absent.loaded == ["/cache/img-1.tar"]


def test_failures_are_image_not_found_naming_the_image(db: Database) -> None:
    down = Store(error=ImageStoreError(reason="Glance cannot be reached"))
    with pytest.raises(exc.ImageNotFound, match="Image app could not be fetched from glance: "
                                                "Glance cannot be reached"):
        pull_from_store(deps_with(db, Engine()), down, "app", "always", None, None)
    many = Store(error=exc.Conflict("Multiple images exist with same name app"))
    with pytest.raises(exc.ImageNotFound, match="Multiple images"):
        pull_from_store(deps_with(db, Engine()), many, "app", "always", None, None)
    store = Store()
    with pytest.raises(exc.ImageNotFound, match="could not be loaded into Docker"):
        pull_from_store(deps_with(db, Engine(loads=False)), store, "app", "always", None,
                        None)
    assert store.forgotten == ["img-1"]          # a tarball Docker refuses is not kept


def test_the_driver_of_a_container_is_one_of_the_nodes_image_driver_list(db: Database) -> None:
    from types import SimpleNamespace

    from berth.compute.image_puller import served_by

    glance_node = AgentDeps(db=db, runtime=Engine(), tracker=ResourceTracker(db, "n1"),  # type: ignore[arg-type]
                            settings=AgentSettings(host="n1"), image_stores={"glance": Store()},
                            capsules=DockerCapsules())
    docker_only = deps_with(db, Engine())
    row = SimpleNamespace(image="app", image_driver="glance")
    assert served_by(glance_node, row) == "glance"  # type: ignore[arg-type]
    assert served_by(docker_only, SimpleNamespace(image="app", image_driver=None)) == "docker"  # type: ignore[arg-type]
    with pytest.raises(exc.ImageNotFound, match="image driver glance is not enabled on host n1"):
        served_by(docker_only, row)  # type: ignore[arg-type]
