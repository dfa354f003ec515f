"""The image puller: make a container's image present on this node per its pull
policy (``pull_image``), with the credentials of its registry (``registry_of``,
``registry_auth_for``). Used by container create and rebuild, by a Docker capsule's
create and by the CRI capsule engine's image pull (kubelet keeps its puller in
``pkg/kubelet/images`` for the same reason: every flow that starts something pulls).
The pull policy itself is ``berth.image.reference.pull_decision``. A container whose
``image_driver`` is an image store's (glance) gets its image from there
(``berth.compute.store_images``)."""

from __future__ import annotations

import logging

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.store_images import pull_from_store
from berth.db import registries as db_registries
from berth.db.models import Container, Registry
from berth.image.reference import normalize_pull_policy, parse_image, pull_decision
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def pull_image(deps: AgentDeps, row: Container, ctx: RequestContext | None = None
               ) -> tuple[rt.ImageRef, rt.ImageInfo]:
    """Make the image present per the container's pull policy; return it. ``ctx``: the
    request's (an image store is called with its token; its action gets the
    download's event)."""
    settings = deps.settings
    driver = served_by(deps, row)
    if driver != "docker":
        policy = normalize_pull_policy(row.image_pull_policy or settings.default_pull_policy)
        return pull_from_store(deps, deps.image_stores[driver], row.image or "", policy,
                               ctx, getattr(row, "uuid", None))
    registry = registry_of(deps, row)
    image = parse_image(row.image or "", default_registry=settings.default_registry,
                        registry_domain=registry.domain if registry else None)
    policy = normalize_pull_policy(row.image_pull_policy or settings.default_pull_policy)
    info = deps.recent_images.get(image.ref) if policy != "always" else None
    if info is None:
        try:
            info = deps.runtime.inspect_image(image.ref)
            # The next creates of this image within the cache's ttl ask no more.
            deps.recent_images.remember(image.ref, info)
        except rt.RuntimeImageNotFound:
            info = None
    decision = pull_decision(policy, info is not None)
    if decision == "use_local" and info is not None:
        LOG.info("image %s is present locally (pull policy %s)", image.ref, policy)
        return image, info
    if decision == "fail":
        raise exc.ImageNotFound(
            f"Image {image.ref} is not present on host {deps.host} and the pull policy is "
            f"{policy}: pull it first, or create the container with image_pull_policy "
            f"ifnotpresent or always.")
    LOG.info("pulling image %s (pull policy %s)", image.ref, policy)
    deps.recent_images.forget(image.ref)
    try:
        return image, deps.runtime.pull_image(image,
                                              auth=registry_auth_for(deps, image, registry))
    except rt.RuntimeImageNotFound as err:
        raise exc.ImageNotFound(
            f"Image {image.ref} could not be found in its registry ({err.msg}). Check the "
            f"name and tag.") from err
    except rt.RuntimeImagePullFailed as err:
        if info is not None and policy == "always":
            LOG.warning("pull of %s failed (%s); using the local copy", image.ref, err.msg)
            return image, info
        raise exc.ImageNotFound(
            f"Image {image.ref} could not be pulled: {err.msg}. Check that the registry "
            f"is reachable from host {deps.host}, or pull the image there and use "
            f"image_pull_policy ifnotpresent.") from err


def served_by(deps: AgentDeps, row: Container) -> str:
    """The image driver that provides the container's image: its ``image_driver``
    when that is one of this node's image stores (``[DEFAULT]image_driver_list``),
    else docker. A driver the node does not run is a clear ImageNotFound."""
    name = (getattr(row, "image_driver", None) or "docker").lower()
    if name == "docker":
        return name
    if name not in deps.image_stores:
        raise exc.ImageNotFound(
            f"Image {row.image}: image driver {name} is not enabled on host {deps.host} "
            f"(its [DEFAULT]image_driver_list is {', '.join(deps.image_driver_list)}).")
    return name


def registry_of(deps: AgentDeps, row: Container) -> Registry | None:
    """The registry record the container pulls from (its ``registry_id``), if any."""
    if not row.registry_id:
        return None
    registry = db_registries.find_by_id(deps.db, row.registry_id)
    if registry is None:
        LOG.warning("registry %s of the container no longer exists; pulling without it",
                    row.registry_id)
    return registry


def registry_auth_for(deps: AgentDeps, image: rt.ImageRef, registry: Registry | None = None
                      ) -> rt.RegistryAuth | None:
    """Credentials for pulling ``image``: the container's registry record's when it has
    a username and the image lives on that registry (never sent to another one); else
    ``[docker]default_registry_username`` for images on the default registry; else
    none (anonymous, or the node's own docker login)."""
    if registry is not None and registry.username and \
            image.repo.startswith(registry.domain.rstrip("/") + "/"):
        password = ""
        if registry.password:
            try:
                if deps.settings.registry_key is None:
                    raise exc.Invalid("this node has no registry key configured")
                password = db_registries.PasswordCipher(deps.settings.registry_key) \
                    .decrypt(registry.password)
            except exc.Invalid as err:
                raise exc.ImageNotFound(
                    f"Cannot pull {image.ref} with the credentials of registry "
                    f"{registry.uuid}: {err.msg}") from err
        return rt.RegistryAuth(registry.username, password, registry.domain)
    s = deps.settings
    if s.default_registry and s.default_registry_username and \
            image.repo.startswith(s.default_registry + "/"):
        return rt.RegistryAuth(s.default_registry_username, s.default_registry_password or "",
                               s.default_registry)
    return None
