"""An idle agent's periodic tasks skip their database round trip unless something
may have changed (``periodic/idle.py``): the rules, with a clock of the test's own."""

from __future__ import annotations

import datetime as dt

import pytest

from berth.compute.periodic.idle import AuditGate, CleanupGate, expiry_due, read_max_age
from berth.compute.periodic.sync_state import SyncReport
from berth.placement.base import PlacementError

T0 = dt.datetime(2026, 12, 4, 8, 0, 0)


def _sync(read_at: dt.datetime | None = T0, deadline: dt.datetime | None = None,
          unused: int = 0) -> SyncReport:
    return SyncReport(read_at=read_at, earliest_deadline=deadline, unused=unused)


def test_expiry_reads_without_a_sync_read_or_once_a_seen_deadline_passed() -> None:
    assert expiry_due(None, T0, 90)
    assert expiry_due(_sync(read_at=None), T0, 90)
    later = T0 + dt.timedelta(seconds=30)
    assert not expiry_due(_sync(), later, 90)
    assert not expiry_due(_sync(deadline=later + dt.timedelta(seconds=1)), later, 90)
    assert expiry_due(_sync(deadline=later), later, 90)


def test_expiry_reads_when_the_sync_read_is_older_than_max_age() -> None:
    assert not expiry_due(_sync(), T0 + dt.timedelta(seconds=89), 90)
    assert expiry_due(_sync(), T0 + dt.timedelta(seconds=90), 90)


@pytest.mark.parametrize(("sync", "interval", "age"), [
    (60, 60, 90.0),      # the defaults: a sync on time is always fresh enough
    (600, 2, 20.0),      # a sync much rarer than the other tasks: 10 intervals
    (-1, 60, 0.0),       # no sync: every run reads
])
def test_the_max_age_follows_the_syncs_spacing(sync: int, interval: int, age: float) -> None:
    assert read_max_age(sync, interval, 10) == age


def test_cleanup_runs_at_start_then_only_after_a_change_or_an_unused_row() -> None:
    gate = CleanupGate()
    assert gate.take()
    assert not gate.take()
    gate.synced(_sync(unused=0))
    assert not gate.take()
    gate.synced(_sync(unused=2))
    assert gate.take()
    gate.changed()
    assert gate.take()
    assert not gate.take()


class _Placement:
    """Raises PlacementError from ``fail`` (a pure-logic stand-in for the ledger)."""

    name = "ledger"

    def ok(self) -> int:
        return 1

    def fail(self) -> None:
        raise PlacementError("down")


def test_the_audit_runs_at_start_after_a_placement_failure_and_every_full_period() -> None:
    now = [0.0]
    gate = AuditGate(600, clock=lambda: now[0])
    watched = gate.watch(_Placement())
    assert gate.take()
    now[0] = 60
    assert not gate.take()
    assert watched.ok() == 1 and watched.name == "ledger"
    assert not gate.take()
    with pytest.raises(PlacementError):
        watched.fail()
    assert gate.take()
    now[0] = 120
    assert not gate.take()
    now[0] = 720
    assert gate.take()
