"""Engine state -> row status (model.md §3.1), with an injected clock."""

from __future__ import annotations

import datetime as dt

import pytest

from berth.compute.states import Status
from berth.compute.status_mapping import (
    UNCHANGED,
    MappedStatus,
    age_text,
    map_death,
    map_state,
    should_apply,
)
from berth.runtime.base import ContainerState, RunState

UTC = dt.UTC
NOW = dt.datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
ZERO_TIME = dt.datetime(1, 1, 1, tzinfo=UTC)


def ago(**kwargs: float) -> dt.datetime:
    return NOW - dt.timedelta(**kwargs)


def state(status: RunState = RunState.EXITED, **kwargs: object) -> ContainerState:
    return ContainerState(status=status, **kwargs)  # type: ignore[arg-type]


# ---- age_text ---------------------------------------------------------------------

@pytest.mark.parametrize(
    ("delta", "expected"),
    [
        (dt.timedelta(0), None),
        (dt.timedelta(milliseconds=999), None),
        (dt.timedelta(seconds=1), "1 second"),
        (dt.timedelta(seconds=1, milliseconds=900), "1 second"),
        (dt.timedelta(seconds=2), "2 seconds"),
        (dt.timedelta(seconds=59), "59 seconds"),
        (dt.timedelta(minutes=1), "1 min"),
        (dt.timedelta(minutes=1, seconds=59), "1 min"),
        (dt.timedelta(minutes=5), "5 mins"),
        (dt.timedelta(minutes=59, seconds=59), "59 mins"),
        (dt.timedelta(hours=1), "1 hour"),
        (dt.timedelta(hours=3, minutes=20), "3 hours"),
        (dt.timedelta(hours=23, minutes=59), "23 hours"),
        (dt.timedelta(days=1), "1 day"),
        (dt.timedelta(days=2, hours=5), "2 days"),
        (dt.timedelta(days=400), "400 days"),
    ],
)
def test_age_text_uses_largest_unit_singular_for_one(
    delta: dt.timedelta, expected: str | None
) -> None:
    assert age_text(NOW - delta, NOW) == expected


def test_age_text_is_none_for_a_time_in_the_future() -> None:
    assert age_text(NOW + dt.timedelta(seconds=30), NOW) is None


def test_age_text_takes_naive_datetimes_as_utc() -> None:
    naive_since = (NOW - dt.timedelta(hours=2)).replace(tzinfo=None)
    assert age_text(naive_since, NOW) == "2 hours"
    assert age_text(NOW - dt.timedelta(minutes=3), NOW.replace(tzinfo=None)) == "3 mins"


# ---- should_apply -----------------------------------------------------------------

@pytest.mark.parametrize(
    ("task_state", "force", "expected"),
    [
        (None, False, True),
        ("", False, True),
        ("container_stopping", False, False),
        ("container_creating", True, True),
        (None, True, True),
    ],
)
def test_should_apply_only_without_task_or_with_force(
    task_state: str | None, force: bool, expected: bool
) -> None:
    assert should_apply(task_state, force) is expected


# ---- MappedStatus -----------------------------------------------------------------

def test_unchanged_writes_nothing() -> None:
    assert UNCHANGED.unchanged
    assert UNCHANGED.changes() == {}


def test_changes_writes_status_and_detail_and_reason_only_when_set() -> None:
    assert MappedStatus(Status.RUNNING, None).changes() == {
        "status": "Running", "status_detail": None,
    }
    assert MappedStatus(Status.UNKNOWN, None, None, reason_set=True).changes() == {
        "status": "Unknown", "status_detail": None, "status_reason": None,
    }


# ---- map_state: one test per row of §3.1 ------------------------------------------

def test_missing_state_is_unknown_with_reason() -> None:
    mapped = map_state(None, Status.RUNNING, NOW)
    assert mapped == MappedStatus(Status.UNKNOWN, None, "container state is missing", True)


@pytest.mark.parametrize("run_state", [RunState.EXITED, RunState.REMOVING])
def test_error_with_exited_or_removing_is_stopped(run_state: RunState) -> None:
    s = state(run_state, error="oci runtime error", exit_code=127,
              started_at=ago(minutes=4), finished_at=ago(minutes=3))
    mapped = map_state(s, Status.RUNNING, NOW)
    assert mapped == MappedStatus(
        Status.STOPPED, "Exited(127) 3 mins ago (error)", "oci runtime error", True
    )


@pytest.mark.parametrize(
    ("run_state", "expected"),
    [
        (RunState.CREATED, Status.CREATED),
        (RunState.RUNNING, Status.RUNNING),
        (RunState.PAUSED, Status.PAUSED),
        (RunState.RESTARTING, Status.RESTARTING),
        (RunState.DEAD, Status.DEAD),
        (RunState.UNKNOWN, Status.ERROR),
    ],
)
def test_error_with_other_status_keeps_it_capitalised_or_is_error(
    run_state: RunState, expected: Status
) -> None:
    s = state(run_state, error="boom", exit_code=1, finished_at=ago(days=2))
    mapped = map_state(s, Status.CREATING, NOW)
    assert mapped.status is expected
    assert mapped.detail == "Exited(1) 2 days ago (error)"
    assert (mapped.reason, mapped.reason_set) == ("boom", True)


@pytest.mark.parametrize(
    "s",
    [
        # a first start that failed: the container never ran
        state(RunState.CREATED, error="exec: \"/no/such\": no such file", exit_code=127),
        # a start of a container that had run before
        state(RunState.EXITED, error="exec failed", exit_code=127,
              started_at=ago(hours=1), finished_at=ago(minutes=50)),
    ],
)
def test_a_failed_start_leaves_a_row_in_error_unchanged(s: ContainerState) -> None:
    assert map_state(s, Status.ERROR, NOW) is UNCHANGED


@pytest.mark.parametrize(("run_state", "expected"), [
    (RunState.DEAD, Status.DEAD), (RunState.RESTARTING, Status.RESTARTING),
])
def test_other_engine_states_with_an_error_text_still_move_a_row_in_error(
        run_state: RunState, expected: Status) -> None:
    mapped = map_state(state(run_state, error="boom"), Status.ERROR, NOW)
    assert (mapped.status, mapped.reason) == (expected, "boom")


def test_error_wins_over_running_flag() -> None:
    s = state(RunState.RUNNING, running=True, error="boom", started_at=ago(hours=1))
    assert map_state(s, Status.RUNNING, NOW).reason == "boom"


@pytest.mark.parametrize("finished_at", [None, ZERO_TIME, NOW])
def test_error_detail_is_null_without_an_age(finished_at: dt.datetime | None) -> None:
    s = state(RunState.EXITED, error="boom", exit_code=1, finished_at=finished_at)
    mapped = map_state(s, Status.RUNNING, NOW)
    assert (mapped.status, mapped.detail) == (Status.STOPPED, None)


def test_paused_is_paused_with_uptime() -> None:
    s = state(RunState.PAUSED, running=True, paused=True, started_at=ago(minutes=5))
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(Status.PAUSED, "Up 5 mins (paused)")


def test_paused_with_zero_age_has_null_detail() -> None:
    s = state(RunState.PAUSED, running=True, paused=True, started_at=NOW)
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(Status.PAUSED, None)


def test_restarting_is_restarting() -> None:
    s = state(RunState.RESTARTING, restarting=True, running=True, started_at=ago(hours=1))
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(Status.RESTARTING, "Restarting")


@pytest.mark.parametrize(
    ("started", "detail"),
    [
        (ago(seconds=1), "Up 1 second"),
        (ago(seconds=42), "Up 42 seconds"),
        (ago(hours=3, minutes=1), "Up 3 hours"),
        (ago(days=1, hours=23), "Up 1 day"),
    ],
)
def test_running_is_running_with_uptime(started: dt.datetime, detail: str) -> None:
    s = state(RunState.RUNNING, running=True, started_at=started)
    assert map_state(s, Status.CREATED, NOW) == MappedStatus(Status.RUNNING, detail)


@pytest.mark.parametrize("started_at", [None, ZERO_TIME, NOW, NOW + dt.timedelta(seconds=5)])
def test_running_without_an_age_has_null_detail(started_at: dt.datetime | None) -> None:
    s = state(RunState.RUNNING, running=True, started_at=started_at)
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(Status.RUNNING, None)


@pytest.mark.parametrize("s", [
    state(RunState.RUNNING, running=True, started_at=ago(seconds=3)),
    state(RunState.PAUSED, running=True, paused=True, started_at=ago(seconds=3)),
    state(RunState.RESTARTING, restarting=True, running=True, started_at=ago(seconds=3)),
])
def test_a_live_container_clears_the_reason_of_a_row_in_error(s: ContainerState) -> None:
    """Issue 24 item 6: a start that timed out set Error "could not start"; the
    container then really started. The reason no longer says anything true."""
    mapped = map_state(s, Status.ERROR, NOW)
    assert mapped.changes()["status_reason"] is None
    assert "status_reason" not in map_state(s, Status.STOPPED, NOW).changes()


def test_dead_is_dead() -> None:
    s = state(RunState.DEAD, dead=True, started_at=ago(hours=1), finished_at=ago(minutes=1))
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(Status.DEAD, "Dead")


@pytest.mark.parametrize("started_at", [None, ZERO_TIME])
def test_never_started_creating_row_becomes_created(started_at: dt.datetime | None) -> None:
    s = state(RunState.CREATED, started_at=started_at, finished_at=started_at)
    assert map_state(s, Status.CREATING, NOW) == MappedStatus(Status.CREATED, "Created")
    assert map_state(s, "Creating", NOW) == MappedStatus(Status.CREATED, "Created")


@pytest.mark.parametrize(
    "current", [Status.CREATED, Status.RESTARTING, Status.ERROR, Status.REBUILDING, "Error"]
)
def test_never_started_keeps_created_restarting_error_rebuilding(current: str) -> None:
    s = state(RunState.CREATED, started_at=ZERO_TIME, finished_at=ZERO_TIME)
    assert map_state(s, current, NOW) is UNCHANGED


@pytest.mark.parametrize(
    "current", [Status.RUNNING, Status.STOPPED, Status.UNKNOWN, Status.DEAD]
)
def test_never_started_other_rows_become_created(current: Status) -> None:
    s = state(RunState.CREATED)
    assert map_state(s, current, NOW) == MappedStatus(Status.CREATED, "Created")


@pytest.mark.parametrize("finished_at", [None, ZERO_TIME])
def test_started_but_not_finished_nor_running_is_unknown(
    finished_at: dt.datetime | None,
) -> None:
    s = state(RunState.EXITED, started_at=ago(minutes=2), finished_at=finished_at)
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(
        Status.UNKNOWN, None, "unexpected container state", True
    )


@pytest.mark.parametrize(
    ("finished", "code", "detail"),
    [
        (ago(days=2), 0, "Exited(0) 2 days ago "),
        (ago(minutes=1), 137, "Exited(137) 1 min ago "),
        (ago(seconds=8), 2, "Exited(2) 8 seconds ago "),
        (ago(hours=1), None, "Exited(0) 1 hour ago "),
    ],
)
def test_started_and_finished_is_stopped_with_trailing_space(
    finished: dt.datetime, code: int | None, detail: str
) -> None:
    s = state(RunState.EXITED, exit_code=code, started_at=ago(days=3), finished_at=finished)
    mapped = map_state(s, Status.RUNNING, NOW)
    assert mapped == MappedStatus(Status.STOPPED, detail)
    assert mapped.detail is not None and mapped.detail.endswith("ago ")
    assert not mapped.reason_set  # Zun keeps an earlier status_reason


def test_stopped_just_now_has_null_detail() -> None:
    s = state(RunState.EXITED, exit_code=0, started_at=ago(seconds=5), finished_at=NOW)
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(Status.STOPPED, None)


def test_oom_killed_sets_a_reason() -> None:
    s = state(RunState.EXITED, oom_killed=True, exit_code=137,
              started_at=ago(minutes=10), finished_at=ago(minutes=2))
    assert map_state(s, Status.RUNNING, NOW) == MappedStatus(
        Status.STOPPED,
        "Exited(137) 2 mins ago ",
        "OOMKilled: the container ran out of memory (exit 137)",
        True,
    )


def test_error_text_wins_over_oom_reason() -> None:
    s = state(RunState.EXITED, oom_killed=True, error="boom", exit_code=137,
              finished_at=ago(minutes=2))
    assert map_state(s, Status.RUNNING, NOW).reason == "boom"


@pytest.mark.parametrize(
    "s",
    [
        state(RunState.RUNNING, running=True, started_at=ago(hours=1)),
        state(RunState.PAUSED, running=True, paused=True, started_at=ago(hours=1)),
        state(RunState.RESTARTING, restarting=True),
        state(RunState.DEAD, dead=True),
        state(RunState.CREATED),
    ],
)
def test_ordinary_states_leave_status_reason_alone(s: ContainerState) -> None:
    mapped = map_state(s, Status.CREATING, NOW)
    assert not mapped.reason_set
    assert "status_reason" not in mapped.changes()


def test_a_death_is_stopped_with_its_exit_code_as_the_inspect_would_say() -> None:
    finished = NOW - dt.timedelta(seconds=3)
    inspected = ContainerState(status=RunState.EXITED, exit_code=137,
                               started_at=NOW - dt.timedelta(hours=1), finished_at=finished)
    assert map_death(137, finished, NOW) == map_state(inspected, Status.RUNNING, NOW)
    assert map_death(137, finished, NOW) == MappedStatus(Status.STOPPED,
                                                         "Exited(137) 3 seconds ago ")
    assert map_death(0, NOW, NOW) == MappedStatus(Status.STOPPED, None)
