"""image_search, image_pull and image_delete (rpc-compute.md §2).

The casts are queued on the agent's workers under the key ``image-<uuid>``, so a
delete sent while the pull of the same record still runs waits for it."""

from __future__ import annotations

from berth.common.context import RequestContext
from berth.compute.endpoints import EndpointBase, Wire
from berth.compute.flows import images


def _key(image: Wire) -> str:
    return f"image-{image['uuid']}"


class ImageEndpoints(EndpointBase):
    METHODS = frozenset({"image_search", "image_pull", "image_delete"})

    def image_search(self, context: Wire, image: str, image_driver_name: str | None = None,
                     exact_match: bool = False, registry: Wire | None = None) -> list[Wire]:
        return images.search_image(self._deps, image, bool(exact_match),
                                   image_driver=image_driver_name, registry=registry,
                                   ctx=RequestContext.from_dict(context))

    def image_pull(self, context: Wire, image: Wire) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit(_key(image), images.pull_image_record, self._deps, ctx,
                             str(image["uuid"]))

    def image_delete(self, context: Wire, image: Wire) -> None:
        ctx = RequestContext.from_dict(context)
        self._workers.submit(_key(image), images.delete_image_record, self._deps, ctx,
                             str(image["uuid"]))
