"""berth's JSON rendering: the bytes Starlette's stdlib-based JSONResponse produced,
faster; values orjson refuses still render."""

from __future__ import annotations

import datetime as dt
import json
import types

import pytest

from berth.api.responses import JSONResponse, dumps
from berth.api.views import container_view, format_time


def _stdlib(content: object) -> bytes:
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                      separators=(",", ":")).encode("utf-8")


def test_a_container_view_renders_as_the_stdlib_encoder_did() -> None:
    view = {"uuid": "0b8b0d6e", "name": "wëb", "command": ["sh", "-c", "echo \"hi\"\n"],
            "cpu": 0.1, "memory": "64", "disk": 0, "environment": {"A": "1"},
            "labels": {}, "ports": [80], "interactive": False, "task_state": None,
            "restart_policy": {"Name": "no", "MaximumRetryCount": "0"}}
    assert dumps({"containers": [view], "next": None}) == \
        _stdlib({"containers": [view], "next": None})


def test_an_integer_beyond_64_bits_falls_back_to_the_stdlib() -> None:
    assert dumps({"size": 2**70}) == _stdlib({"size": 2**70})


def test_the_response_carries_the_rendered_body() -> None:
    response = JSONResponse({"a": [1, "é"]}, status_code=202)
    assert response.body == _stdlib({"a": [1, "é"]})
    assert response.headers["content-type"] == "application/json"


def test_times_keep_zuns_format() -> None:
    assert format_time(dt.datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02 03:04:05"
    assert format_time(dt.datetime(2026, 1, 2, 3, 4, 5, 7)) == "2026-01-02 03:04:05.000007"
    aware = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert format_time(aware) == "2026-01-02 03:04:05"
    assert format_time(None) is None


def test_a_view_reads_attributes_that_are_not_in_the_instance_dict() -> None:
    class Lazy(types.SimpleNamespace):
        @property
        def name(self) -> str:      # not in __dict__: read through getattr
            return "from-property"

    row = Lazy(uuid="u1", registry_id=None, environment=None, labels=None, ports=None,
               addresses=None, security_groups=None, created_at=None, updated_at=None)
    view = container_view(row, shown=())  # type: ignore[arg-type]
    assert view["name"] == "from-property"
    assert view["uuid"] == "u1"
    assert view["environment"] == {} and view["ports"] == []


def test_a_lone_surrogate_renders_as_u_fffd_and_is_logged_with_its_uuid(
        caplog: pytest.LogCaptureFixture) -> None:
    good = {"uuid": "good-1", "name": "wëb 😀", "environment": {"A": "1"}}
    bad = {"uuid": "bad-1", "name": "poison", "environment": {"A": "\ud800"}}
    body = json.loads(dumps({"containers": [good, bad], "next": None}))
    assert body["containers"][0] == good
    assert body["containers"][1]["environment"] == {"A": "\ufffd"}
    assert "environment.A of uuid bad-1" in caplog.text
    assert "good-1" not in caplog.text


def test_a_response_with_a_lone_surrogate_is_a_response() -> None:
    response = JSONResponse({"errors": [{"detail": "no container x\udc00"}]})
    assert json.loads(response.body)["errors"][0]["detail"] == "no container x\ufffd"


def test_the_same_rows_field_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    """A list the console polls renders the row again and again."""
    bad = {"uuid": "bad-twice", "labels": {"k": "\udc00"}}
    for _ in range(3):
        dumps({"containers": [bad]})
    assert caplog.text.count("labels.k of uuid bad-twice") == 1
