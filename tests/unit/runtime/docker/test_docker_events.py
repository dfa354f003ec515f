"""Mapping Docker events to RuntimeEvent, and the stream's silent end."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pytest

from berth.runtime.base import LABEL_UUID, EventKind
from berth.runtime.docker.events import EventStream, event_from_docker, kind_of, since_param


def docker_event(action: str, **extra: Any) -> dict[str, Any]:
    event = {
        "status": action, "id": "cid", "Type": "container", "Action": action,
        "Actor": {"ID": "cid", "Attributes": {LABEL_UUID: "u-1", "name": "zun-u-1"}},
        "scope": "local", "time": 1_700_000_000, "timeNano": 1_700_000_000_123_456_789,
    }
    event.update(extra)
    return event


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        ("start", EventKind.STARTED),
        ("die", EventKind.DIED),
        ("pause", EventKind.PAUSED),
        ("unpause", EventKind.UNPAUSED),
        ("destroy", EventKind.REMOVED),
        ("oom", EventKind.CHANGED),
        ("stop", EventKind.CHANGED),
        ("create", EventKind.CHANGED),
        ("rename", EventKind.CHANGED),
        ("update", EventKind.CHANGED),
        ("restart", EventKind.CHANGED),
        ("health_status: unhealthy", EventKind.CHANGED),
        ("something-new", EventKind.CHANGED),
    ],
)
def test_kind_of_maps_actions(action: str, kind: EventKind) -> None:
    assert kind_of(action) is kind


@pytest.mark.parametrize(
    "action", ["attach", "resize", "top", "exec_create: sh -c true", "exec_start: sh", "exec_die",
               "archive-path", "extract-to-dir", "commit", "export", "kill"],
)
def test_kind_of_drops_read_only_actions(action: str) -> None:
    assert kind_of(action) is None


def test_event_from_docker_reads_uuid_and_time() -> None:
    event = event_from_docker(docker_event("die", Actor={
        "ID": "cid", "Attributes": {LABEL_UUID: "u-1", "exitCode": "137"}}))
    assert event is not None
    assert (event.container_id, event.uuid, event.kind, event.action) == (
        "cid", "u-1", EventKind.DIED, "die")
    assert event.at_nano == 1_700_000_000_123_456_789
    assert event.at == dt.datetime(2023, 11, 14, 22, 13, 20, 123456, dt.UTC)
    assert event.exit_code == 137


@pytest.mark.parametrize("action,attributes", [
    ("die", {}), ("die", {"exitCode": "x"}), ("start", {"exitCode": "9"}),
])
def test_only_a_die_with_a_numeric_exit_code_carries_one(action: str,
                                                         attributes: dict[str, str]) -> None:
    event = event_from_docker(docker_event(action, Actor={
        "ID": "cid", "Attributes": {LABEL_UUID: "u-1", **attributes}}))
    assert event is not None and event.exit_code is None


def test_event_from_docker_ignores_other_types_and_falls_back_to_seconds() -> None:
    assert event_from_docker(docker_event("start", Type="network")) is None
    event = event_from_docker(docker_event("start", timeNano=None))
    assert event is not None and event.at_nano == 1_700_000_000_000_000_000


def test_since_param_is_seconds_dot_nanoseconds() -> None:
    assert since_param(1_700_000_000_000_000_042) == "1700000000.000000042"


class FakeStream:
    def __init__(self, items: list[Any], error: Exception | None = None) -> None:
        self._items: Iterator[Any] = iter(items)
        self._error = error
        self.closed = 0

    def __next__(self) -> Any:
        try:
            return next(self._items)
        except StopIteration:
            if self._error is not None:
                raise self._error from None
            raise

    def close(self) -> None:
        self.closed += 1


def test_event_stream_yields_mapped_events_and_skips_dropped() -> None:
    fake = FakeStream([docker_event("create"), docker_event("attach"), docker_event("start")])
    kinds = [event.kind for event in EventStream(fake)]
    assert kinds == [EventKind.CHANGED, EventKind.STARTED]
    assert fake.closed == 1


@pytest.mark.parametrize("error", [OSError("reset"), ValueError("closed file")])
def test_event_stream_ends_silently_when_stream_breaks(error: Exception) -> None:
    stream = EventStream(FakeStream([docker_event("start")], error))
    assert [event.kind for event in stream] == [EventKind.STARTED]
    assert stream.closed


def test_event_stream_close_is_idempotent_and_stops_iteration() -> None:
    fake = FakeStream([docker_event("start")])
    stream = EventStream(fake)
    stream.close()
    stream.close()
    assert fake.closed == 1
    assert list(stream) == []
