from __future__ import annotations

import logging

import pytest

from berth.cni.sync import AttachmentSyncer


def test_a_failing_pass_is_logged_once_and_its_recovery_once(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    results: list[object] = [RuntimeError("netlink"), RuntimeError("netlink"), 0, 2]

    def sync() -> int:
        value = results.pop(0)
        if isinstance(value, Exception):
            raise value
        return int(value)  # type: ignore[call-overload]

    syncer = AttachmentSyncer(sync, interval=60, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="berth.cni.sync"):
        for _ in range(4):
            syncer.run_once()
            now[0] += 60
    messages = [r.getMessage() for r in caplog.records]
    assert sum("failed" in m for m in messages) == 1
    assert sum("works again" in m for m in messages) == 1
    assert any("removed 2" in m for m in messages)
    assert syncer.healthy()  # the last pass (at 180 s) succeeded 60 s ago
    now[0] = 300.0
    assert not syncer.healthy()  # two intervals without a good pass


def test_stop_is_safe_twice_and_before_start() -> None:
    syncer = AttachmentSyncer(lambda: 0, interval=0.01)
    syncer.stop()
    syncer = AttachmentSyncer(lambda: 0, interval=0.01)
    syncer.start()
    syncer.stop()
    syncer.stop()
