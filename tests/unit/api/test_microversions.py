"""Microversion parsing and negotiation (api-v1.md §3)."""

from __future__ import annotations

import pytest

from berth.api import microversions as mv
from berth.api.microversions import APIVersion, negotiate
from berth.common.exceptions import NotAcceptable


@pytest.mark.parametrize("text, expected", [
    ("1.1", APIVersion(1, 1)), ("1.40", APIVersion(1, 40)), (" 1.20 ", APIVersion(1, 20)),
    ("2.0", APIVersion(2, 0)), ("1.010", APIVersion(1, 10)),
])
def test_parse(text: str, expected: APIVersion) -> None:
    assert APIVersion.parse(text) == expected


@pytest.mark.parametrize("text", ["", "1", "1.", ".1", "1.x", "a.b", "1.2.3", "-1.2", "1.-2",
                                  "latest", "v1.2"])
def test_parse_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError):
        APIVersion.parse(text)


def test_versions_order_numerically_not_as_text() -> None:
    assert APIVersion(1, 9) < APIVersion(1, 10) < APIVersion(1, 40) < APIVersion(2, 0)
    assert APIVersion(1, 12) >= APIVersion(1, 12)
    assert str(APIVersion(1, 40)) == "1.40"
    assert APIVersion(1, 12).at_least("1.12") and APIVersion(1, 12).at_least("1.9")
    assert not APIVersion(1, 11).at_least("1.12")


def test_bounds() -> None:
    assert (mv.MIN_VERSION, mv.MAX_VERSION) == (APIVersion(1, 1), APIVersion(1, 40))


@pytest.mark.parametrize("header", [None, "", "   "])
def test_no_header_means_the_minimum(header: str | None) -> None:
    assert negotiate(header) == APIVersion(1, 1)


@pytest.mark.parametrize("header, expected", [
    ("container 1.20", APIVersion(1, 20)),
    ("container 1.1", APIVersion(1, 1)),
    ("container 1.40", APIVersion(1, 40)),
    ("container latest", APIVersion(1, 40)),
    ("container LATEST", APIVersion(1, 40)),
    ("Container 1.12", APIVersion(1, 12)),
    ("  container   1.5  ", APIVersion(1, 5)),
    ("compute 2.1, container 1.7", APIVersion(1, 7)),
])
def test_accepted_headers(header: str, expected: APIVersion) -> None:
    assert negotiate(header) == expected


@pytest.mark.parametrize("header", [
    "container", "container 1", "container 1.x", "container 1.2 extra", "1.20",
    "compute 2.1", "containers 1.2", "container v1.2",
])
def test_malformed_or_foreign_headers_are_406(header: str) -> None:
    with pytest.raises(NotAcceptable) as info:
        negotiate(header)
    assert mv.HEADER in info.value.msg
    assert "title" not in info.value.kwargs


@pytest.mark.parametrize("header", ["container 1.0", "container 1.41", "container 1.99",
                                    "container 2.1", "container 0.9"])
def test_out_of_range_is_406_saying_what_is_supported(header: str) -> None:
    with pytest.raises(NotAcceptable) as info:
        negotiate(header)
    assert info.value.kwargs["title"] == "Requested microversion is unsupported"
    assert "1.1 to 1.40" in info.value.msg


def test_the_published_header_admits_the_empty_value_only_where_the_default_is_in_range(
        ) -> None:
    from_the_first = mv.Availability("POST /v1/containers/{id}/rename", "1.1", "1.13")
    later = mv.Availability("POST /v1/containers/{id}/rebuild", "1.20")
    optional, required = from_the_first.header(), later.header()
    assert optional["required"] is False and required["required"] is True
    enum_optional = optional["schema"]["enum"]            # type: ignore[index]
    enum_required = required["schema"]["enum"]            # type: ignore[index]
    assert enum_optional[:2] == ["", "container 1.1"] and "" not in enum_required
    # What the enum admits, negotiate accepts inside the range; the empty value as none.
    assert negotiate("") == mv.MIN_VERSION
    assert all(mv.APIVersion(1, 1) <= negotiate(v) <= mv.APIVersion(1, 13)
               for v in enum_optional)
