"""Folding ``docker pull``'s JSON stream into throttled progress reports."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from berth.runtime.base import PullProgress
from berth.runtime.docker.progress import PullTracker


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


STREAM: list[dict[str, Any]] = [
    {"status": "Pulling from team/app", "id": "v1"},
    {"status": "Already exists", "progressDetail": {}, "id": "aaa"},
    {"status": "Pulling fs layer", "progressDetail": {}, "id": "bbb"},
    {"status": "Pulling fs layer", "progressDetail": {}, "id": "ccc"},
    {"status": "Downloading", "progressDetail": {"current": 1_000_000, "total": 4_000_000},
     "id": "bbb"},
    {"status": "Downloading", "progressDetail": {"current": 500_000, "total": 2_000_000},
     "id": "ccc"},
    {"status": "Download complete", "progressDetail": {}, "id": "bbb"},
    {"status": "Extracting", "progressDetail": {"current": 10, "total": 4_000_000}, "id": "bbb"},
    {"status": "Pull complete", "progressDetail": {}, "id": "bbb"},
]


def test_tracker_aggregates_layers_and_bytes() -> None:
    tracker = PullTracker("reg/team/app:v1", clock=FakeClock())
    for message in STREAM:
        tracker.feed(message)
    progress = tracker.snapshot()
    assert progress == PullProgress(image="reg/team/app:v1", status="Pull complete",
                                    layers_done=2, layers_total=3,
                                    bytes_done=4_500_000, bytes_total=6_000_000)


def test_tracker_reports_at_most_once_per_interval_and_at_finish() -> None:
    clock = FakeClock()
    seen: list[PullProgress] = []
    tracker = PullTracker("app:v1", seen.append, interval=1.0, clock=clock)
    for message in STREAM:  # all within the same instant: only the first reports
        tracker.feed(message)
    assert len(seen) == 1
    clock.now += 0.5
    tracker.feed({"status": "Downloading", "id": "ccc",
                  "progressDetail": {"current": 600_000, "total": 2_000_000}})
    assert len(seen) == 1
    clock.now += 0.6
    tracker.feed({"status": "Download complete", "id": "ccc", "progressDetail": {}})
    assert len(seen) == 2
    final = tracker.finish()
    assert len(seen) == 3
    assert seen[-1] == final
    assert final.bytes_done == final.bytes_total == 6_000_000


def test_tracker_logs_progress_at_info(caplog: pytest.LogCaptureFixture) -> None:
    tracker = PullTracker("local/busybox:latest", clock=FakeClock())
    with caplog.at_level(logging.INFO, logger="berth.runtime.docker.progress"):
        for message in STREAM:
            tracker.feed(message)
        tracker.finish()
    assert "pulling local/busybox:latest: 2/3 layers, 4.5/6.0 MB" in caplog.text


def test_tracker_status_lines_without_layer_do_not_count_as_layers() -> None:
    tracker = PullTracker("app:v1", clock=FakeClock())
    tracker.feed({"status": "Digest: sha256:abc"})
    tracker.feed({"status": "Status: Image is up to date for app:v1"})
    progress = tracker.finish()
    assert progress.layers_total == 0
    assert progress.status == "Status: Image is up to date for app:v1"
