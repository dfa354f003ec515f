"""The agent's image flows (berth.compute.flows.images) and the registry credentials
of a pull (compute.image_puller.registry_auth_for / pull_image), on a real migrated SQLite
database and an in-memory engine that records what it was asked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.migrated_sqlite import migrated_url

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import image_puller
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.flows import images as flows
from berth.db import containers, images, registries
from berth.db.engine import Database
from berth.runtime import base as rt

HOST = "node1"
KEY = registries.derive_key("unit-test secret")
CTX = RequestContext.admin()


class ImageEngine:
    """Just the image side of a Runtime: local images by reference, a registry's
    contents, and a Docker Hub that may be unreachable."""

    def __init__(self) -> None:
        self.local: dict[str, rt.ImageInfo] = {}
        self.registry: set[str] = set()
        self.hub: tuple[rt.ImageSearchResult, ...] | rt.RuntimeDriverError = ()
        self.pulls: list[tuple[str, rt.RegistryAuth | None]] = []
        self.removed: list[str] = []
        self.refuse_removal = False
        self.searched: list[str] = []
        self.inspected: list[str] = []

    def inspect_image(self, ref: str) -> rt.ImageInfo:
        self.inspected.append(ref)
        if ref not in self.local:
            raise rt.RuntimeImageNotFound(reason=ref)
        return self.local[ref]

    def image_exists_in_registry(self, image: rt.ImageRef,
                                 auth: rt.RegistryAuth | None = None) -> bool | None:
        return None if "unreachable" in image.ref else image.ref in self.registry

    def pull_image(self, image: rt.ImageRef, auth: rt.RegistryAuth | None = None,
                   progress: Any = None) -> rt.ImageInfo:
        self.pulls.append((image.ref, auth))
        if image.ref not in self.registry:
            raise rt.RuntimeImageNotFound(reason=f"manifest for {image.ref} not found")
        self.local[image.ref] = rt.ImageInfo(id=f"sha256:{len(self.local):064d}",
                                             repo_tags=(image.ref,), size=1234, cmd=("sh",),
                                             entrypoint=None)
        return self.local[image.ref]

    def remove_image(self, ref: str) -> None:
        if self.refuse_removal:
            raise rt.RuntimeConflict(reason=f"image {ref} is used by a container")
        self.removed.append(ref)
        self.local.pop(ref, None)

    def search_images(self, term: str, limit: int = 25) -> tuple[rt.ImageSearchResult, ...]:
        self.searched.append(term)
        if isinstance(self.hub, rt.RuntimeDriverError):
            raise self.hub
        return self.hub


@pytest.fixture
def engine() -> ImageEngine:
    return ImageEngine()


@pytest.fixture
def deps(tmp_path: Path, engine: ImageEngine) -> Iterator[AgentDeps]:
    db = Database(migrated_url(tmp_path))
    yield AgentDeps(db=db, runtime=engine, tracker=ResourceTracker(db, HOST),  # type: ignore[arg-type]
                    settings=AgentSettings(host=HOST, registry_key=KEY),
                    capsules=DockerCapsules())
    db.dispose()


def add_registry(deps: AgentDeps, domain: str = "reg.example:5000", username: str | None = "u",
                 password: str | None = "pw") -> Any:
    token = registries.PasswordCipher(KEY).encrypt(password) if password else None
    return registries.create(deps.db, {"domain": domain, "username": username,
                                       "password": token, "name": "reg"})


# -- search ---------------------------------------------------------------------------------

def test_keyword_search_asks_docker_hub_for_the_bare_name(deps: AgentDeps,
                                                          engine: ImageEngine) -> None:
    engine.hub = (rt.ImageSearchResult("library/busybox", "tiny", True, False, 3000),)
    got = flows.search_image(deps, "docker.io/library/busybox:1.36", exact_match=False)
    assert engine.searched == ["library/busybox"]
    assert got == [{"name": "library/busybox", "description": "tiny", "is_automated": False,
                    "metadata": {"is_official": True, "star_count": 3000}}]
    flows.search_image(deps, "busybox:latest", exact_match=False)
    assert engine.searched[-1] == "busybox"


def test_keyword_search_without_internet_is_a_503_naming_the_host(
        deps: AgentDeps, engine: ImageEngine) -> None:
    engine.hub = rt.RuntimeDriverError(reason="dial tcp: lookup index.docker.io: no such host")
    with pytest.raises(exc.ServiceUnavailable) as err:
        flows.search_image(deps, "busybox", exact_match=False)
    assert HOST in err.value.msg and "no such host" in err.value.msg
    assert "exact_match=True" in err.value.msg
    engine.hub = rt.RuntimeUnavailable(reason="engine down")
    with pytest.raises(rt.RuntimeUnavailable):           # the engine itself: passed on
        flows.search_image(deps, "busybox", exact_match=False)


def test_keyword_search_of_a_private_registry_or_a_disabled_glance_is_refused(
        deps: AgentDeps, engine: ImageEngine) -> None:
    with pytest.raises(exc.Invalid) as err:
        flows.search_image(deps, "127.0.0.1:5000/team/app", exact_match=False)
    assert "127.0.0.1:5000" in err.value.msg and "exact_match" in err.value.msg
    with pytest.raises(exc.Invalid, match="image driver glance is not enabled"):
        flows.search_image(deps, "cirros", exact_match=False, image_driver="glance")
    assert engine.searched == []


def test_exact_search_says_what_this_node_can_get(deps: AgentDeps, engine: ImageEngine) -> None:
    engine.local["team/app:1"] = rt.ImageInfo("sha256:1", ("team/app:1",), 1, None, None)
    engine.registry.add("reg.example:5000/team/app:2")
    assert "present on host node1" in \
        flows.search_image(deps, "team/app:1", True)[0]["description"]
    assert flows.search_image(deps, "reg.example:5000/team/app:2", True)[0]["name"] == \
        "reg.example:5000/team/app:2"
    assert flows.search_image(deps, "reg.example:5000/team/app:3", True) == []
    assert "could not be asked" in \
        flows.search_image(deps, "unreachable.example/app", True)[0]["description"]
    # with the container's registry, a bare name is looked up on that registry
    reg = add_registry(deps)
    hits = flows.search_image(deps, "team/app:2", True, registry={"id": reg.id})
    assert hits[0]["name"] == "reg.example:5000/team/app:2"


def test_exact_search_answers_from_an_image_seen_seconds_ago(deps: AgentDeps,
                                                            engine: ImageEngine) -> None:
    """A burst of creates of one image asks the engine once: the validations that
    follow within the TTL answer from what the first one saw."""
    engine.local["team/app:1"] = rt.ImageInfo("sha256:1", ("team/app:1",), 1, None, None)
    for _ in range(3):
        assert "present on host node1" in \
            flows.search_image(deps, "team/app:1", True)[0]["description"]
    assert engine.inspected == ["team/app:1"]
    deps.recent_images.forget()           # as after an image delete or a commit
    del engine.local["team/app:1"]
    assert flows.search_image(deps, "team/app:1", True) == []
    assert engine.inspected == ["team/app:1"] * 2


# -- pull and delete of image records ---------------------------------------------------------

def test_pull_record_saves_the_image_id_and_size(deps: AgentDeps, engine: ImageEngine) -> None:
    engine.registry.add("reg.example:5000/app:1")
    row = images.create(deps.db, {"repo": "reg.example:5000/app", "tag": "1", "host": HOST})
    flows.pull_image_record(deps, CTX, row.uuid)
    saved = images.get(deps.db, row.uuid)
    assert (saved.image_id, saved.size) == (engine.local["reg.example:5000/app:1"].id, "1234")


def test_a_failed_pull_leaves_the_record_without_image_id(deps: AgentDeps,
                                                          engine: ImageEngine) -> None:
    row = images.create(deps.db, {"repo": "reg.example:5000/nope", "tag": "1", "host": HOST})
    flows.pull_image_record(deps, CTX, row.uuid)
    assert images.get(deps.db, row.uuid).image_id is None
    flows.pull_image_record(deps, CTX, "00000000-0000-0000-0000-000000000000")  # gone: no-op


def test_delete_record_removes_the_tag_then_the_row(deps: AgentDeps, engine: ImageEngine) -> None:
    engine.registry.add("reg.example:5000/app:1")
    row = images.create(deps.db, {"repo": "reg.example:5000/app", "tag": "1", "host": HOST})
    flows.pull_image_record(deps, CTX, row.uuid)
    engine.refuse_removal = True
    flows.delete_image_record(deps, CTX, row.uuid)
    assert images.find(deps.db, row.uuid) is not None          # Docker kept it: so do we
    engine.refuse_removal = False
    flows.delete_image_record(deps, CTX, row.uuid)
    assert engine.removed == ["reg.example:5000/app:1"]        # by tag, never by id
    assert images.find(deps.db, row.uuid) is None


def test_delete_of_a_never_pulled_record_touches_no_image(deps: AgentDeps,
                                                          engine: ImageEngine) -> None:
    row = images.create(deps.db, {"repo": "app", "tag": "1", "host": HOST})
    flows.delete_image_record(deps, CTX, row.uuid)
    assert engine.removed == [] and images.find(deps.db, row.uuid) is None


# -- registry credentials at pull time ---------------------------------------------------------

def test_registry_credentials_are_decrypted_for_that_registry_only(deps: AgentDeps) -> None:
    reg = add_registry(deps)
    on_it = rt.ImageRef("reg.example:5000/team/app")
    assert image_puller.registry_auth_for(deps, on_it, reg) == \
        rt.RegistryAuth("u", "pw", "reg.example:5000")
    elsewhere = rt.ImageRef("other.example/team/app")
    assert image_puller.registry_auth_for(deps, elsewhere, reg) is None
    anonymous = add_registry(deps, domain="anon.example", username=None, password=None)
    assert image_puller.registry_auth_for(deps, rt.ImageRef("anon.example/x"), anonymous) is None


def test_without_the_key_a_registry_password_is_a_clear_pull_error(deps: AgentDeps) -> None:
    reg = add_registry(deps)
    keyless = AgentDeps(db=deps.db, runtime=deps.runtime, tracker=deps.tracker,
                        settings=AgentSettings(host=HOST, registry_key=None),
                        capsules=DockerCapsules())
    with pytest.raises(exc.ImageNotFound) as err:
        image_puller.registry_auth_for(keyless, rt.ImageRef("reg.example:5000/app"), reg)
    assert reg.uuid in err.value.msg
    other_key = AgentDeps(db=deps.db, runtime=deps.runtime, tracker=deps.tracker,
                          settings=AgentSettings(host=HOST,
                                                 registry_key=registries.derive_key("x")),
                          capsules=DockerCapsules())
    with pytest.raises(exc.ImageNotFound) as err:
        image_puller.registry_auth_for(other_key, rt.ImageRef("reg.example:5000/app"), reg)
    assert "auth_encryption_key" in err.value.msg


def test_a_container_with_a_registry_pulls_the_prefixed_name_with_its_credentials(
        deps: AgentDeps, engine: ImageEngine) -> None:
    reg = add_registry(deps)
    engine.registry.add("reg.example:5000/team/app:latest")
    row = containers.create(deps.db, {"image": "team/app", "registry_id": reg.id,
                                      "image_pull_policy": "always", "status": "Creating"})
    ref, _ = image_puller.pull_image(deps, row)
    assert ref.ref == "reg.example:5000/team/app:latest"
    assert engine.pulls == [("reg.example:5000/team/app:latest",
                             rt.RegistryAuth("u", "pw", "reg.example:5000"))]
    # a name with its own domain keeps it, and gets no credentials of another registry
    engine.registry.add("other.example/app:latest")
    row = containers.create(deps.db, {"image": "other.example/app", "registry_id": reg.id,
                                      "image_pull_policy": "always", "status": "Creating"})
    ref, _ = image_puller.pull_image(deps, row)
    assert ref.ref == "other.example/app:latest" and engine.pulls[-1][1] is None


# -- the image validation's answer, reused by the create (berth.compute.recent_images) ----------

def _local(engine: ImageEngine, ref: str) -> None:
    engine.local[ref] = rt.ImageInfo(id="sha256:" + "a" * 64, repo_tags=(ref,), size=1,
                                     cmd=("sh",), entrypoint=None)


def test_the_create_reuses_what_the_validation_just_saw(deps: AgentDeps,
                                                        engine: ImageEngine) -> None:
    _local(engine, "reg.example:5000/app:latest")
    assert flows.search_image(deps, "reg.example:5000/app", exact_match=True)
    assert engine.inspected == ["reg.example:5000/app:latest"]
    row = containers.create(deps.db, {"image": "reg.example:5000/app", "status": "Creating",
                                      "image_pull_policy": "ifnotpresent"})
    ref, info = image_puller.pull_image(deps, row)
    assert ref.ref == "reg.example:5000/app:latest" and info.cmd == ("sh",)
    assert engine.inspected == ["reg.example:5000/app:latest"] and engine.pulls == []


def test_a_create_remembers_its_own_look_for_the_creates_that_follow(
        deps: AgentDeps, engine: ImageEngine) -> None:
    _local(engine, "reg.example:5000/app:latest")
    for _ in range(3):       # no validation before them (the API's answer is older)
        row = containers.create(deps.db, {"image": "reg.example:5000/app",
                                          "status": "Creating",
                                          "image_pull_policy": "ifnotpresent"})
        image_puller.pull_image(deps, row)
    assert engine.inspected == ["reg.example:5000/app:latest"] and engine.pulls == []


def test_pull_policy_always_and_a_forgotten_image_ask_the_engine_again(
        deps: AgentDeps, engine: ImageEngine) -> None:
    _local(engine, "reg.example:5000/app:latest")
    engine.registry.add("reg.example:5000/app:latest")
    flows.search_image(deps, "reg.example:5000/app", exact_match=True)
    always = containers.create(deps.db, {"image": "reg.example:5000/app", "status": "Creating",
                                         "image_pull_policy": "always"})
    image_puller.pull_image(deps, always)
    assert len(engine.inspected) == 2 and len(engine.pulls) == 1
    # removed behind berth's back: the create's "No such image" makes it forget and look
    # again, and ifnotpresent then pulls it
    del engine.local["reg.example:5000/app:latest"]
    deps.recent_images.forget("reg.example:5000/app:latest")
    row = containers.create(deps.db, {"image": "reg.example:5000/app", "status": "Creating",
                                      "image_pull_policy": "ifnotpresent"})
    image_puller.pull_image(deps, row)
    assert len(engine.pulls) == 2


def test_deleting_an_image_forgets_what_was_seen(deps: AgentDeps, engine: ImageEngine) -> None:
    _local(engine, "reg.example:5000/app:latest")
    flows.search_image(deps, "reg.example:5000/app", exact_match=True)
    record = images.create(deps.db, {"repo": "reg.example:5000/app", "tag": "latest",
                                     "image_id": "sha256:" + "a" * 64, "host": HOST})
    flows.delete_image_record(deps, CTX, record.uuid)
    assert deps.recent_images.get("reg.example:5000/app:latest") is None
