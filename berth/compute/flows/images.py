"""image_search on the agent. With ``exact_match`` (what the API's image validation
asks) it answers whether this node can get the image: present locally, or known to
its registry. A registry that cannot be asked does not make the image unknown: the
pull will tell, with its own error."""

from __future__ import annotations

import logging
from typing import Any

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.flows.create import registry_auth_for
from berth.image.reference import parse_image
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def _result(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "is_automated": False,
            "metadata": {"is_official": False, "star_count": 0}}


def search_image(deps: AgentDeps, image: str, exact_match: bool) -> list[dict[str, Any]]:
    if not exact_match:
        raise exc.Invalid("Searching registries by keyword is not supported yet; search "
                          "with exact_match to check one image.")
    ref = parse_image(image, default_registry=deps.settings.default_registry)
    try:
        deps.runtime.inspect_image(ref.ref)
        return [_result(ref.ref, f"present on host {deps.host}")]
    except rt.RuntimeImageNotFound:
        pass
    known = deps.runtime.image_exists_in_registry(ref, registry_auth_for(deps, ref))
    if known is False:
        LOG.info("image %s is neither on this host nor in its registry", ref.ref)
        return []
    if known is None:
        return [_result(ref.ref, "its registry could not be asked; the pull will tell")]
    return [_result(ref.ref, "available in its registry")]
