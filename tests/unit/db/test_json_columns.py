"""The JSON columns' reader (berth.db.engine._json_loads), as SQLite's and MariaDB's
drivers hand it a text (str) and psycopg does (bytes): orjson for speed, the stdlib
where orjson would read a text differently."""

from __future__ import annotations

import json
import math

import pytest

from berth.db.engine import _json_loads


@pytest.mark.parametrize("text", [
    '{"A": "1", "B": "x y"}', '["sh", "-c", "sleep 1"]', '{"Name": "always", "N": 3}',
    '[1.5, -2, true, null]', '{"k": "\\u00e9\\n"}', '"\\ud800"',
])
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_reads_as_the_stdlib_does(text: str, as_bytes: bool) -> None:
    assert _json_loads(text.encode() if as_bytes else text) == json.loads(text)


@pytest.mark.parametrize("kind", [str, bytes])
def test_empty_texts_are_fresh_objects(kind: type) -> None:
    def of(text: str) -> str | bytes:
        return text if kind is str else text.encode()

    first, second = _json_loads(of("{}")), _json_loads(of("{}"))
    assert first == {} and first is not second
    assert _json_loads(of("[]")) == [] and _json_loads(of("null")) is None


@pytest.mark.parametrize("kind", [str, bytes])
def test_a_long_integer_stays_an_integer(kind: type) -> None:
    text = '{"id": 123456789012345678901234567890}'
    value = _json_loads(text if kind is str else text.encode())["id"]
    assert value == 123456789012345678901234567890 and isinstance(value, int)


@pytest.mark.parametrize("kind", [str, bytes])
def test_nan_and_infinity_are_read_as_the_stdlib_reads_them(kind: type) -> None:
    def of(text: str) -> str | bytes:
        return text if kind is str else text.encode()

    assert math.isnan(_json_loads(of("NaN")))
    assert _json_loads(of("[Infinity]")) == [math.inf]
