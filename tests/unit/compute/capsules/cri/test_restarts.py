"""The restart decision and back-off of CRI members (pure)."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace
from typing import Any

from berth.compute.capsules.cri.restarts import (
    ATTEMPT,
    STEP,
    Backoff,
    due_at,
    next_step,
    wanted,
)
from berth.runtime import base as rt

T0 = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


def seen(code: int, ran: float = 1.0, **labels: str) -> rt.RuntimeContainer:
    state = rt.ContainerState(status=rt.RunState.EXITED, exit_code=code, started_at=T0,
                              finished_at=T0 + dt.timedelta(seconds=ran))
    return rt.RuntimeContainer(id="c1", name="m", uuid="u", image="i", labels=labels,
                               state=state)


def member(name: str, retries: int = 0) -> Any:
    return SimpleNamespace(restart_policy={"Name": name, "MaximumRetryCount": str(retries)})


def test_always_restarts_any_exit_on_failure_only_a_failure_and_no_never() -> None:
    assert wanted(member("always"), seen(0)) and wanted(member("always"), seen(3))
    assert wanted(member("on-failure"), seen(3)) and not wanted(member("on-failure"), seen(0))
    assert not wanted(member("no"), seen(3))
    assert not wanted(SimpleNamespace(restart_policy=None), seen(3))


def test_on_failure_stops_after_its_maximum_retry_count() -> None:
    assert wanted(member("on-failure", 2), seen(1, **{ATTEMPT: "1"}))
    assert not wanted(member("on-failure", 2), seen(1, **{ATTEMPT: "2"}))


def test_the_delay_doubles_up_to_its_maximum() -> None:
    backoff = Backoff(10, 300)
    assert [backoff.delay(k) for k in range(7)] == [10, 20, 40, 80, 160, 300, 300]


def test_a_short_run_steps_the_back_off_up_and_a_long_one_resets_it() -> None:
    assert next_step(seen(1, ran=5, **{STEP: "3"})) == 4
    assert next_step(seen(1, ran=900, **{STEP: "3"})) == 0


def test_a_member_is_due_after_its_steps_delay_from_its_finish() -> None:
    exited = seen(1, ran=2, **{STEP: "1"})
    assert due_at(exited, Backoff(10, 300)) == T0 + dt.timedelta(seconds=2 + 20)
