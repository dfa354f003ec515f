"""Images (api-v1.md §9): pull an image to a node, list the pulled images, remove
one, and search. The API keeps the ``image`` row; the node's agent does the Docker
work (``image_pull``, ``image_delete`` casts) and writes the outcome on the row."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import Request

from berth.api.links import links
from berth.api.schemas import types as T
from berth.api.schemas.resources import IMAGE_PULL
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import images as db_images
from berth.db import nodes
from berth.db.models import Image
from berth.image.reference import parse_image
from berth.policies import enforcer as policy
from berth.runtime.base import ImageRef

LOG = logging.getLogger(__name__)

VIEW_KEYS = ("uuid", "image_id", "repo", "tag", "size", "project_id", "host")


def view(row: Image, request: Request) -> dict[str, Any]:
    """Zun shows ``links`` on image list items too."""
    out: dict[str, Any] = {k: getattr(row, k) for k in VIEW_KEYS}
    out["links"] = links(request, "images", row.uuid)
    return out


def _check_admin(ctx: RequestContext, action: str) -> None:
    """``action``'s rule (admin by default)."""
    policy.authorize(ctx, action)


def _parse_pull(state: ApiState, body: Any) -> tuple[str, str, str]:
    """(repo, tag, host name) of a pull request body."""
    body = IMAGE_PULL.check(body)
    repo = body["repo"]
    ref = parse_image(repo, default_registry=state.settings.default_registry)
    if ref.digest:
        raise T.invalid("repo", repo, "Pulling by digest is not supported by the image API; "
                                      "name a tag instead.")
    tag = ref.tag
    given_tag = body.get("tag")
    if not T.is_none_string(given_tag):
        tag = given_tag
        if ":" in repo.rsplit("/", 1)[-1] and tag != ref.tag:
            raise T.invalid("tag", given_tag, f"The repo already names tag {ref.tag}; "
                                              f"send the tag once.")
        ref = parse_image(f"{ref.repo}:{tag}")
    host = body["host"]
    try:
        node = nodes.get_compute_node(state.db, host)
    except exc.ComputeNodeNotFound:
        raise T.invalid("host", host, "No compute host has this name or uuid; see "
                                      "`zun host-list`.") from None
    return ref.repo, ref.tag, node.hostname


def pull(state: ApiState, ctx: RequestContext, body: Any) -> Image:
    """Insert the row and cast ``image_pull`` to its host; nothing is left behind when
    the host's agent is down."""
    _check_admin(ctx, "image:pull")
    repo, tag, host = _parse_pull(state, body)
    if not state.host_is_up(host):
        raise exc.Conflict(f"The compute agent of host {host} is down; pull the image when "
                           f"it is back (see `zun service-list`).")
    row = db_images.create(state.db, {"repo": repo, "tag": tag, "host": host,
                                      "project_id": ctx.project_id, "user_id": ctx.user_id})
    try:
        state.compute.cast_host(ctx, host, "image_pull", image=db_images.payload(row))
    except exc.BerthError:
        db_images.destroy(state.db, row.uuid)
        raise
    LOG.info("pull of %s:%s asked of host %s (image %s)", repo, tag, host, row.uuid)
    return row


def get(state: ApiState, ctx: RequestContext, uuid: str) -> Image:
    _check_admin(ctx, "image:get_one")
    return db_images.get(state.db, uuid)


def list_(state: ApiState, ctx: RequestContext, *, limit: int, marker: str | None,
          sort_key: str, sort_dir: str) -> list[Image]:
    _check_admin(ctx, "image:get_all")
    return db_images.list_(state.db, limit=limit, marker=marker, sort_key=sort_key,
                           sort_dir=sort_dir)


def delete(state: ApiState, ctx: RequestContext, uuid: str) -> None:
    """Cast ``image_delete`` to the image's host; the agent removes the row after
    ``docker rmi``. A row without a host (never placed) goes at once."""
    _check_admin(ctx, "image:delete")
    row = db_images.get(state.db, uuid)
    if not row.host:
        db_images.destroy(state.db, row.uuid)
        return
    state.compute.cast_host(ctx, row.host, "image_delete", image=db_images.payload(row))
    # This process's creates ask the node again (other API processes in their time).
    if row.repo:
        state.image_checks.forget(row.host, ImageRef(row.repo, row.tag or "latest").ref)
    LOG.info("removal of %s:%s asked of host %s (image %s)", row.repo, row.tag, row.host,
             row.uuid)


def search(state: ApiState, ctx: RequestContext, image: str, image_driver: Any,
           exact_match: Any) -> list[dict[str, Any]]:
    """Ask one live node to search for ``image``; ServiceUnavailable when none is up."""
    policy.authorize(ctx, "image:search")
    limits = state.settings.create_limits
    driver = limits.default_image_driver
    if not T.is_none_string(image_driver):
        driver = T.enum("image_driver", image_driver, limits.image_driver_list)
    exact = False if T.is_none_string(exact_match) else T.strict_bool("exact_match",
                                                                       exact_match)
    T.image_name("image", image)
    parse_image(image)       # a bad name is a 400 here, not on the node
    hosts = sorted(nodes.up_compute_hosts(state.db, state.settings.service_down_time))
    if not hosts:
        raise exc.ServiceUnavailable(
            reason="No compute agent is up to search for images; start berth-compute "
                   "(see `zun service-list`).")
    return state.compute.image_search(ctx, hosts[0], image, driver, exact_match=exact)
