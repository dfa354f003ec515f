"""The JSON columns' reader on SQLite (berth.db.engine._json_loads): orjson for speed,
the stdlib where orjson would read a text differently."""

from __future__ import annotations

import json
import math

import pytest

from berth.db.engine import _json_loads


@pytest.mark.parametrize("text", [
    '{"A": "1", "B": "x y"}', '["sh", "-c", "sleep 1"]', '{"Name": "always", "N": 3}',
    '[1.5, -2, true, null]', '{"k": "\\u00e9\\n"}', '"\\ud800"',
])
def test_reads_as_the_stdlib_does(text: str) -> None:
    assert _json_loads(text) == json.loads(text)


def test_empty_texts_are_fresh_objects() -> None:
    first, second = _json_loads("{}"), _json_loads("{}")
    assert first == {} and first is not second
    assert _json_loads("[]") == [] and _json_loads("null") is None


def test_a_long_integer_stays_an_integer() -> None:
    value = _json_loads('{"id": 123456789012345678901234567890}')["id"]
    assert value == 123456789012345678901234567890 and isinstance(value, int)


def test_nan_and_infinity_are_read_as_the_stdlib_reads_them() -> None:
    assert math.isnan(_json_loads("NaN"))
    assert _json_loads("[Infinity]") == [math.inf]
