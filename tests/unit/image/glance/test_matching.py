"""Which Glance records a container's image means (Zun's rules, behaviours.md §1.4)."""

from __future__ import annotations

import pytest

from berth.common import exceptions as exc
from berth.image.base import StoredImage
from berth.image.glance.matching import is_image_id, matching, only_one, split_name

A = StoredImage(id="1", name="cirros", tags=("v1",))
B = StoredImage(id="2", name="cirros-big", tags=("v2",))
C = StoredImage(id="3", name="cirros", tags=())


def test_a_name_matches_exactly_or_as_a_substring() -> None:
    assert matching([A, B], "cirros", None, exact=True) == [A]
    assert matching([A, B], "irro", None, exact=False) == [A, B]
    assert matching([A, B], "irro", None, exact=True) == []


def test_a_tag_keeps_the_images_carrying_it_but_a_lone_untagged_match_stays() -> None:
    assert matching([A, B], "cirros", "v2", exact=False) == [B]
    assert matching([A], "cirros", "v9", exact=True) == []
    assert matching([C], "cirros", "v9", exact=True) == [C]
    assert matching([A, C], "cirros", "v1", exact=True) == [A]


def test_only_one_names_the_image_or_the_ambiguity() -> None:
    assert only_one([A], "cirros") is A
    with pytest.raises(exc.ImageNotFound, match="nosuch could not be found in Glance"):
        only_one([], "nosuch")
    with pytest.raises(exc.Conflict, match="Multiple images .* use the image id"):
        only_one([A, C], "cirros")


@pytest.mark.parametrize(("text", "expected"), [
    ("cirros", ("cirros", None)), ("cirros:v1", ("cirros", "v1")),
    ("127.0.0.1:5000/team/app", ("127.0.0.1:5000/team/app", None)),
    ("127.0.0.1:5000/team/app:2", ("127.0.0.1:5000/team/app", "2"))])
def test_split_name_takes_only_a_last_tag(text: str, expected: tuple[str, str | None]) -> None:
    assert split_name(text) == expected


def test_ids_are_uuids() -> None:
    assert is_image_id("0f9e73f2-b878-4afa-9805-16107af9e372")
    assert is_image_id("0f9e73f2b8784afa980516107af9e372")
    assert not is_image_id("cirros")
