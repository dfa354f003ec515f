"""berth.api.body: request bodies bounded in size and depth before they are decoded
(issue 24 item 2: 100,000 nested arrays made the stdlib decoder raise RecursionError,
answered 500)."""

from __future__ import annotations

import json
import random

import pytest

from berth.api import body
from berth.common import exceptions as exc
from berth.common import unstorable


def depth_of(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    return 0


def random_value(rng: random.Random, depth: int) -> object:
    if depth == 0 or rng.random() < 0.2:
        return rng.choice([1, "a[b", "]}{", 'q\\"[', None, True, 2.5, "\\\\", ""])
    if rng.random() < 0.5:
        return [random_value(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}[": random_value(rng, depth - 1) for i in range(rng.randint(0, 3))}


def test_too_deep_agrees_with_the_decoded_depth_on_random_bodies() -> None:
    rng = random.Random(24)
    for _ in range(3000):
        value = random_value(rng, rng.randint(0, 12))
        raw = json.dumps(value).encode()
        limit = rng.randint(0, 8)
        assert body.too_deep(raw, limit) == (depth_of(value) > limit), (raw, limit)


def test_brackets_inside_strings_do_not_count() -> None:
    raw = json.dumps({"name": "[" * 5000 + "{" * 5000, "x": '\\"[[[['}).encode()
    assert not body.too_deep(raw)
    assert body.decode(raw)["name"].startswith("[[[")


@pytest.mark.parametrize("raw", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"name": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b"[" * 100_000,                       # unbalanced too: still refused, cheaply
])
def test_deep_bodies_are_refused_before_decoding(raw: bytes) -> None:
    with pytest.raises(exc.Invalid) as err:
        body.decode(raw)
    assert "levels deep" in err.value.msg


def test_a_body_at_the_depth_limit_decodes() -> None:
    raw = b"[" * body.MAX_DEPTH + b"]" * body.MAX_DEPTH
    assert depth_of(body.decode(raw)) == body.MAX_DEPTH
    with pytest.raises(exc.Invalid):
        body.decode(b"[" + raw + b"]")


@pytest.mark.parametrize("raw", [b"{", b"not json", b"\xff\xfe", b'{"a": 1,}'])
def test_bodies_that_are_not_json_are_invalid(raw: bytes) -> None:
    with pytest.raises(exc.Invalid) as err:
        body.decode(raw)
    assert err.value.msg == "The request body is not valid JSON."


@pytest.mark.parametrize(("raw", "field"), [
    (b'{"environment": {"A": "\\ud800"}}', "environment.A"),
    (b'{"labels": {"\\udc00": "v"}}', "labels.\\udc00"),
    (b'{"command": ["sh", "-c", "a\\u0000"]}', "command[2]"),
    (b'{"spec": {"containers": [{"workingDir": "\\uDFFF"}]}}',
     "spec.containers[0].workingDir"),
    (b'["\\u0000"]', "[0]"),
])
def test_a_nul_or_lone_surrogate_anywhere_is_a_400_naming_its_field(
        raw: bytes, field: str) -> None:
    with pytest.raises(exc.InvalidParameterValue) as refused:
        body.decode(raw)
    assert f"Invalid input for field '{field}'" in str(refused.value)
    assert "\\u" in str(refused.value)                       # the value, escaped
    assert unstorable.UNSTORABLE.search(str(refused.value)) is None


@pytest.mark.parametrize("raw", ['{"n": "é 日本 😀"}'.encode(), b'{"n": "\\ud83d\\ude00"}',
                                 b'{"n": "\\\\ud800 \\\\u0000"}', b'{"n": "\\u00e9"}'])
def test_other_characters_and_escapes_decode(raw: bytes) -> None:
    assert body.decode(raw) == json.loads(raw)


def test_a_binary_field_may_carry_nul_but_not_a_lone_surrogate() -> None:
    """put_archive's ``data`` before API 1.25: a tar archive as text has NULs."""
    assert body.decode(b'{"data": "a\\u0000b"}', binary=("data",)) == {"data": "a\x00b"}
    with pytest.raises(exc.InvalidParameterValue, match="field 'data'"):
        body.decode(b'{"data": "a\\ud800"}', binary=("data",))
    with pytest.raises(exc.InvalidParameterValue, match="field 'path'"):
        body.decode(b'{"data": "a\\u0000", "path": "/t\\u0000"}', binary=("data",))
    with pytest.raises(exc.InvalidParameterValue, match="field 'other'"):
        body.decode(b'{"other": "a\\u0000"}', binary=("data",))
