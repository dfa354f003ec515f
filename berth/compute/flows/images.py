"""The image API on the agent: image_pull and image_delete (the ``image`` rows of
``POST /v1/images``), and image_search.

image_search with an image store's driver (glance) searches the store
(``berth.image.glance``): by exact name with ``exact_match``, else by substring.

image_search with ``exact_match`` (what the API's image validation asks) answers
whether this node can get the image: present locally, or known to its registry. A
registry that cannot be asked does not make the image unknown: the pull will tell,
with its own error. Without ``exact_match`` it is a keyword search of Docker Hub
through the engine; a node without internet gets a clear 503 at once, not a hang.
"""

from __future__ import annotations

import logging
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.image_puller import registry_auth_for
from berth.db import images as db_images
from berth.db import registries as db_registries
from berth.db.models import Registry
from berth.image.base import ImageStoreError
from berth.image.glance.matching import split_name
from berth.image.reference import has_domain, parse_image
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: Names under these domains are searched on Docker Hub (the engine's index).
HUB_DOMAINS = ("docker.io", "index.docker.io", "registry-1.docker.io")


def _result(name: str, description: str, official: bool = False, automated: bool = False,
            stars: int = 0) -> dict[str, Any]:
    return {"name": name, "description": description, "is_automated": automated,
            "metadata": {"is_official": official, "star_count": stars}}


def _registry(deps: AgentDeps, registry: dict[str, Any] | None) -> Registry | None:
    """The registry record named by the wire argument (its ``id``), if any."""
    if not registry or registry.get("id") is None:
        return None
    return db_registries.find_by_id(deps.db, int(registry["id"]))


def search_image(deps: AgentDeps, image: str, exact_match: bool,
                 image_driver: str | None = None,
                 registry: dict[str, Any] | None = None,
                 ctx: RequestContext | None = None) -> list[dict[str, Any]]:
    if image_driver and image_driver.lower() != "docker":
        return _store_search(deps, image_driver.lower(), image, exact_match, ctx)
    record = _registry(deps, registry)
    ref = parse_image(image, default_registry=deps.settings.default_registry,
                      registry_domain=record.domain if record else None)
    if not exact_match:
        return _keyword_search(deps, image)
    # Seen present seconds ago (the previous create's check, or a pull): the same
    # answer as asking the engine again, which a burst of creates would do once each.
    # A create that then finds the image gone looks again (flows.create).
    if deps.recent_images.get(ref.ref) is not None:
        return [_result(ref.ref, f"present on host {deps.host}")]
    try:
        deps.recent_images.remember(ref.ref, deps.runtime.inspect_image(ref.ref))
        return [_result(ref.ref, f"present on host {deps.host}")]
    except rt.RuntimeImageNotFound:
        pass
    known = deps.runtime.image_exists_in_registry(ref, registry_auth_for(deps, ref, record))
    if known is False:
        LOG.info("image %s is neither on this host nor in its registry", ref.ref)
        return []
    if known is None:
        return [_result(ref.ref, "its registry could not be asked; the pull will tell")]
    return [_result(ref.ref, "available in its registry")]


def _store_search(deps: AgentDeps, driver: str, image: str, exact_match: bool,
                  ctx: RequestContext | None) -> list[dict[str, Any]]:
    """Glance's image records (container_format docker) whose name is ``image`` (or
    contains it without ``exact_match``), as Zun answers them."""
    store = deps.image_stores.get(driver)
    if store is None:
        raise exc.Invalid(f"The image driver {driver} is not enabled on host {deps.host} (its "
                          f"[DEFAULT]image_driver_list is "
                          f"{', '.join(deps.image_driver_list)}).")
    name, tag = split_name(image)
    try:
        found = store.search(ctx, name, tag, exact_match)
    except ImageStoreError as err:
        raise exc.ServiceUnavailable(reason=f"{driver} cannot be searched from host "
                                            f"{deps.host}: {err.msg}") from err
    return [{"id": i.id, "name": i.name, "tags": list(i.tags), "status": i.status,
             "size": i.size, "checksum": i.checksum, "container_format": "docker"}
            for i in found]


def _keyword_search(deps: AgentDeps, image: str) -> list[dict[str, Any]]:
    """Docker Hub's keyword search for the name part of ``image`` (tag ignored)."""
    name = image.split("@", 1)[0]
    domain = name.split("/", 1)[0] if has_domain(name) else None
    if domain is not None and domain not in HUB_DOMAINS:
        raise exc.Invalid(
            f"Keyword search only works on Docker Hub; registry {domain} has no search. "
            f"Search with exact_match=True to check whether {image} exists there.")
    term = name.split("/", 1)[1] if domain else name
    last = term.rsplit("/", 1)
    if ":" in last[-1]:
        term = term[:term.rindex(":")]
    try:
        hits = deps.runtime.search_images(term)
    except rt.RuntimeUnavailable:
        raise
    except rt.RuntimeDriverError as err:
        why = err.kwargs.get("reason") or err.msg
        LOG.warning("Docker Hub search for %s failed: %s", term, why)
        raise exc.ServiceUnavailable(
            reason=f"Docker Hub cannot be searched from host {deps.host}: {why}. The "
                   f"node may have no internet access; search with exact_match=True to "
                   f"check one image on the node and in its registry.") from err
    return [_result(h.name, h.description, h.is_official, h.is_automated, h.star_count)
            for h in hits]


def pull_image_record(deps: AgentDeps, ctx: RequestContext, uuid: str) -> None:
    """Pull the image of an ``image`` row (policy always), then save its Docker id and
    size. A failed pull is logged and leaves ``image_id`` null, as in Zun."""
    row = db_images.find(deps.db, uuid)
    if row is None:
        LOG.info("image record %s was deleted before its pull began", uuid)
        return
    ref = rt.ImageRef(repo=row.repo or "", tag=row.tag or "latest")
    LOG.info("pulling image %s (image record %s)", ref.ref, uuid)
    try:
        info = deps.runtime.pull_image(ref, auth=registry_auth_for(deps, ref))
    except rt.RuntimeImageNotFound as err:
        LOG.error("image %s was not found in its registry (%s); record %s keeps no "
                  "image_id", ref.ref, err.msg, uuid)
        return
    except rt.RuntimeDriverError as err:
        LOG.error("pull of image %s failed (%s); record %s keeps no image_id", ref.ref,
                  err.msg, uuid)
        return
    if db_images.update_(deps.db, uuid, {"image_id": info.id, "size": str(info.size)}) is None:
        LOG.info("image record %s was deleted during its pull", uuid)
        return
    LOG.info("pulled image %s: %s, %d bytes", ref.ref, info.id, info.size)


def delete_image_record(deps: AgentDeps, ctx: RequestContext, uuid: str) -> None:
    """Remove the row's ``repo:tag`` from Docker, then the row. By reference, not by
    image id: another tag of the same image (another record, or an image a container
    runs from) must stay. When Docker refuses (a container uses the image) the row
    stays, since the image does."""
    row = db_images.find(deps.db, uuid)
    if row is None:
        LOG.info("image record %s is already gone", uuid)
        return
    ref = f"{row.repo}:{row.tag or 'latest'}"
    if row.image_id:
        deps.recent_images.forget()
        try:
            deps.runtime.remove_image(ref)
        except rt.RuntimeDriverError as err:
            LOG.error("cannot remove image %s (record %s): %s; the record stays", ref, uuid,
                      err.msg)
            return
    db_images.destroy(deps.db, uuid)
    LOG.info("image record %s (%s) deleted", uuid, ref)
