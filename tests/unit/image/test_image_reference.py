"""Image reference parsing and pull policy (behaviours.md §1.1, §1.2)."""

from __future__ import annotations

import pytest

from berth.common.exceptions import InvalidParameterValue
from berth.image.reference import normalize_pull_policy, parse_image, pull_decision
from berth.runtime.base import ImageRef

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("nginx", ImageRef("nginx", "latest")),
        ("nginx:1.2", ImageRef("nginx", "1.2")),
        ("library/nginx:1.25-alpine", ImageRef("library/nginx", "1.25-alpine")),
        ("docker.io/library/nginx", ImageRef("docker.io/library/nginx", "latest")),
        ("reg.example:5000/team/app:v1", ImageRef("reg.example:5000/team/app", "v1")),
        ("localhost/app", ImageRef("localhost/app", "latest")),
        ("localhost:5000/app:dev_1", ImageRef("localhost:5000/app", "dev_1")),
        ("127.0.0.1:5000/berth-test/busybox",
         ImageRef("127.0.0.1:5000/berth-test/busybox", "latest")),
        ("my_org/my-app.web__x", ImageRef("my_org/my-app.web__x", "latest")),
        (f"app@{DIGEST}", ImageRef("app", "latest", DIGEST)),
        (f"reg.example/app:v2@{DIGEST}", ImageRef("reg.example/app", "v2", DIGEST)),
    ],
)
def test_parse_image_splits_repo_tag_and_digest(name: str, expected: ImageRef) -> None:
    assert parse_image(name) == expected


def test_parse_image_defaults_tag_to_latest_in_ref() -> None:
    assert parse_image("busybox").ref == "busybox:latest"


def test_parse_image_keeps_digest_and_ref_uses_it() -> None:
    ref = parse_image(f"app:v1@{DIGEST}")
    assert ref.digest == DIGEST
    assert ref.ref == f"app@{DIGEST}"


@pytest.mark.parametrize(
    ("name", "expected_repo"),
    [
        ("nginx", "reg.local/nginx"),
        ("team/app", "reg.local/team/app"),
        ("docker.io/library/nginx", "docker.io/library/nginx"),
        ("other.example/app", "other.example/app"),
        ("localhost/app", "localhost/app"),
    ],
)
def test_parse_image_prefixes_default_registry_only_without_domain(
    name: str, expected_repo: str
) -> None:
    assert parse_image(name, default_registry="reg.local").repo == expected_repo


def test_parse_image_registry_record_domain_wins_over_default_registry() -> None:
    ref = parse_image("app:v1", default_registry="reg.local", registry_domain="rec.example:5000")
    assert ref == ImageRef("rec.example:5000/app", "v1")


def test_parse_image_accepts_maximal_tag() -> None:
    tag = "a" + "b" * 127
    assert parse_image(f"app:{tag}").tag == tag


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("UPPER/case", "lowercase"),
        ("App", "lowercase"),
        ("a:b:c", "tag is written once"),
        ("a//b", "empty path component"),
        ("/app", "empty path component"),
        ("app/", "empty path component"),
        ("app:", "not a valid tag"),
        ("app:-x", "not a valid tag"),
        ("app:.x", "not a valid tag"),
        ("app:" + "a" * 129, "not a valid tag"),
        ("-app", "not a valid path component"),
        ("app-", "not a valid path component"),
        ("a___b", "not a valid path component"),
        ("app@sha256:xyz", "not a valid digest"),
        ("app@", "not a valid digest"),
        ("nginx latest", "whitespace"),
        (" nginx", "whitespace"),
        ("bad_domain.example:port/app", "not a valid registry domain"),
        ("a" * 256, "longer than 255"),
    ],
)
def test_parse_image_rejects_invalid_names_naming_image_and_reason(name: str, why: str) -> None:
    with pytest.raises(InvalidParameterValue) as info:
        parse_image(name)
    message = str(info.value)
    assert why in message
    assert repr(name) in message or name.strip() == ""


def test_parse_image_counts_registry_prefix_in_length_limit() -> None:
    name = "a" * 250
    assert parse_image(name).repo == name
    with pytest.raises(InvalidParameterValue, match="longer than 255"):
        parse_image(name, default_registry="reg.example")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "always"),
        ("", "always"),
        ("always", "always"),
        ("Always", "always"),
        ("ALWAYS", "always"),
        ("ifnotpresent", "ifnotpresent"),
        ("IfNotPresent", "ifnotpresent"),
        ("never", "never"),
        ("Never", "never"),
    ],
)
def test_normalize_pull_policy_lowercases_known_policies(value: str | None, expected: str) -> None:
    assert normalize_pull_policy(value) == expected


@pytest.mark.parametrize("value", ["sometimes", "if-not-present", " always", "pull"])
def test_normalize_pull_policy_rejects_unknown_naming_allowed_values(value: str) -> None:
    with pytest.raises(InvalidParameterValue) as info:
        normalize_pull_policy(value)
    message = str(info.value)
    assert repr(value) in message
    for allowed in ("Always", "IfNotPresent", "Never"):
        assert allowed in message


@pytest.mark.parametrize(
    ("policy", "present", "decision"),
    [
        ("always", True, "pull"),
        ("always", False, "pull"),
        ("ifnotpresent", True, "use_local"),
        ("ifnotpresent", False, "pull"),
        ("never", True, "use_local"),
        ("never", False, "fail"),
        ("bogus", True, "use_local"),
        ("bogus", False, "fail"),
    ],
)
def test_pull_decision_follows_policy_table(policy: str, present: bool, decision: str) -> None:
    assert pull_decision(policy, present) == decision


@pytest.mark.parametrize(
    ("policy", "present", "decision"),
    [(None, True, "pull"), ("", False, "pull"), ("IfNotPresent", True, "use_local"),
     ("Never", False, "fail")],
)
def test_pull_decision_treats_empty_as_always_and_ignores_case(
    policy: str | None, present: bool, decision: str
) -> None:
    assert pull_decision(policy, present) == decision


def test_the_declarations_pattern_accepts_exactly_what_parse_image_does() -> None:
    """REFERENCE_PATTERN (what the API publishes for an image) and parse_image agree on
    200,000 strings built from the characters and pieces that matter."""
    import random
    import re

    from berth.common.exceptions import InvalidParameterValue
    from berth.image.reference import REFERENCE_PATTERN, parse_image

    pattern = re.compile(REFERENCE_PATTERN.replace("$", r"\Z"))   # ECMA "$": the end
    rng = random.Random(17)
    alphabet = "ab0Z.-_:/@ é"
    pieces = ["busybox", "local", "a.b", "A.b", "a_b.c", "localhost", "127.0.0.1:5000",
              "x:1", "latest", "v1.0", "sha256:" + "a" * 64, "__", "--", "Up", "é"]
    for _ in range(200_000):
        if rng.random() < 0.5:
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        else:
            text = "".join(rng.choice(pieces) + rng.choice(["/", ":", "@", "", "."])
                           for _ in range(rng.randint(1, 4)))
        try:
            parse_image(text)
            accepted = True
        except InvalidParameterValue:
            accepted = False
        assert bool(pattern.match(text)) == accepted, text
