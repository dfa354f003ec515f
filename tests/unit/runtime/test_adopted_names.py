"""A container's uuid: berth's label first, else Zun's name ``zun-<uuid>`` (adoption of a
Zun taken over), else none."""

from berth.runtime.base import LABEL_UUID, is_adopted, uuid_of

U = "0c8f2c59-8a4f-4bb4-9d3c-1f2e3d4c5b01"


def test_berths_label_wins() -> None:
    assert uuid_of({LABEL_UUID: "x"}, f"/zun-{U}") == "x"
    assert not is_adopted({LABEL_UUID: "x"}, f"/zun-{U}")


def test_zuns_name_gives_the_uuid_with_or_without_the_slash() -> None:
    assert uuid_of({"app": "a"}, f"/zun-{U}") == U
    assert uuid_of({}, f"zun-{U}") == U
    assert is_adopted({"app": "a"}, f"/zun-{U}")


def test_other_names_are_nobodys() -> None:
    for name in (f"/zun-{U}-x", "/zun-sandbox", f"/other-{U}", "", None, f"/zun-{U.upper()}"):
        assert uuid_of({}, name) is None
        assert not is_adopted({}, name)
