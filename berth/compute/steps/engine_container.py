"""The engine-container step of create and rebuild: ``docker create`` of the
container's spec from its pulled image (``zun-<uuid>``), removed again on failure.
Also how a create or rebuild cut short finds what the engine made for it
(``named_container``, ``remove_left_by_create``). A capsule's engine containers are
its engine's (``CapsuleEngine.make``)."""

from __future__ import annotations

import logging

from berth.compute.deps import AgentDeps
from berth.compute.image_puller import pull_image
from berth.compute.spec import build_spec
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

Image = tuple[rt.ImageRef, rt.ImageInfo]


class EngineContainer:
    """After ``acquire``: ``container_id``, and ``image``, the image it was made
    from (pulled again when the engine lost it meanwhile)."""

    def __init__(self, deps: AgentDeps, row: Container, image: Image,
                 binds: tuple[str, ...] = ()) -> None:
        self._deps, self._row, self.image, self._binds = deps, row, image, binds
        self.container_id: str | None = None

    def acquire(self) -> None:
        """The engine's refusal (``RuntimeDriverError``), with nothing left in it: a
        container an unclear failure may have made is looked for and removed."""
        self.container_id, self.image = create_in_engine(self._deps, self._row, self.image,
                                                         self._binds)

    def release(self) -> None:
        """``docker rm -f`` (gone already: fine); a failure is logged, and the state
        sync removes the container once the engine answers (its row names none)."""
        if self.container_id is None:
            return
        try:
            self._deps.runtime.delete(self.container_id, force=True)
        except rt.RuntimeNotFound:
            pass
        except rt.RuntimeDriverError as err:
            LOG.warning("could not remove Docker container %s after a failed create: %s",
                        self.container_id, err.msg)


def create_in_engine(deps: AgentDeps, row: Container, image: Image,
                     binds: tuple[str, ...] = ()) -> tuple[str, Image]:
    """docker create; the engine's id, and the image it was created from."""
    try:
        try:
            return deps.runtime.create(build_spec(deps, row, image, binds)), image
        except rt.RuntimeImageNotFound:
            # removed since it was last seen: decide again from what the engine has
            LOG.info("image %s is gone from the engine; looking again", image[0].ref)
            deps.recent_images.forget(image[0].ref)
            image = pull_image(deps, row)
            return deps.runtime.create(build_spec(deps, row, image, binds)), image
    except (rt.RuntimeInvalid, rt.RuntimeImageNotFound):
        raise                       # a clear refusal: the engine created nothing
    except rt.RuntimeDriverError:
        remove_left_by_create(deps, row.uuid)
        raise


def remove_left_by_create(deps: AgentDeps, uuid: str) -> None:
    """After an unclear engine failure of ``docker create`` (a time-out, a dropped
    connection, a 5xx), the engine may have created the container all the same, or
    may still do so: look it up by its name (``zun-<uuid>``) and remove it. When the
    engine does not answer now either, the periodic state sync removes it later (a
    container whose row is a failed create)."""
    name = f"{rt.NAME_PREFIX}{uuid}"
    try:
        found = named_container(deps, uuid)
        if found is None:
            return
        deps.runtime.delete(found.id, force=True)
    except rt.RuntimeDriverError as err:
        LOG.warning("could not look for a Docker container %s left by the failed create "
                    "(%s); the periodic state sync removes it once the engine answers",
                    name, err.msg)
        return
    LOG.warning("removed Docker container %s (%s), which the engine made although its "
                "create failed", found.id[:12], name)


def named_container(deps: AgentDeps, uuid: str) -> rt.RuntimeContainer | None:
    """This host's Docker container named ``zun-<uuid>``, found even when no row
    names it yet (a create interrupted before its write); None when there is none.
    The name is unique on the engine; another berth host sharing this engine could
    only hold it for the same uuid, and then that host owns it."""
    try:
        found = deps.runtime.inspect(f"{rt.NAME_PREFIX}{uuid}")
    except rt.RuntimeNotFound:
        return None
    return found if found.labels.get(rt.LABEL_HOST, deps.host) == deps.host else None


def made_values(row: Container, image: Image, container_id: str) -> dict[str, object]:
    """What a create or rebuild records on the row once its engine container is made:
    its id, the driver that provided the image (as Zun records it), and the image's
    command and entrypoint when the user gave none (Zun saves the image's defaults)."""
    _, info = image
    values: dict[str, object] = {
        "container_id": container_id,
        "image_driver": row.image_driver if row.image_driver == "glance" else "docker"}
    if row.command is None and info.cmd is not None:
        values["command"] = list(info.cmd)
    if row.entrypoint is None and info.entrypoint is not None:
        values["entrypoint"] = list(info.entrypoint)
    return values
