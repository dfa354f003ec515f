"""Which Glance images a container's ``image`` means (Zun's rules,
behaviours.md §1.4): only ``container_format = docker`` records; a UUID is an id; a
name matches exactly (create, pull, validation) or as a substring (search without
``exact_match``); a tag, when given, keeps the images carrying it, except that a lone
match without any tags is kept."""

from __future__ import annotations

import re
from collections.abc import Iterable

from berth.common import exceptions as exc
from berth.image.base import StoredImage

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?"
                   r"[0-9a-fA-F]{12}$")


def is_image_id(ident: str) -> bool:
    return bool(_UUID.match(ident))


def split_name(image: str) -> tuple[str, str | None]:
    """``name[:tag]`` -> (name, tag or None). A Glance name may hold slashes and a
    registry-like prefix; only a last ``:`` after the last ``/`` is a tag."""
    head, sep, tail = image.rpartition(":")
    if sep and "/" not in tail and head:
        return head, tail
    return image, None


def matching(images: Iterable[StoredImage], ident: str, tag: str | None,
             exact: bool) -> list[StoredImage]:
    found = [i for i in images if (i.name == ident if exact else ident in i.name)]
    if tag and found:
        if len(found) == 1:
            if found[0].tags and tag not in found[0].tags:
                found = []
        else:
            found = [i for i in found if tag in i.tags]
    return found


def only_one(found: list[StoredImage], ident: str) -> StoredImage:
    if not found:
        raise exc.ImageNotFound(
            f"Image {ident} could not be found in Glance (among its images of "
            f"container_format docker). Check the name or use the Glance image id.")
    if len(found) > 1:
        raise exc.Conflict(
            f"Multiple images exist with same name {ident} in Glance "
            f"({', '.join(i.id for i in found)}). Please use the image id instead.")
    return found[0]
