"""image_search (and, with the image API, image_pull and image_delete)."""

from __future__ import annotations

from berth.compute.endpoints import EndpointBase, Wire
from berth.compute.flows import images


class ImageEndpoints(EndpointBase):
    METHODS = frozenset({"image_search"})

    def image_search(self, context: Wire, image: str, image_driver_name: str | None = None,
                     exact_match: bool = False, registry: Wire | None = None) -> list[Wire]:
        return images.search_image(self._deps, image, bool(exact_match))
