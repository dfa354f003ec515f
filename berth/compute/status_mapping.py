"""The engine's container state, translated into a row's status (model.md §3.1).

Used after create, by show, and by every sync (PLEG events, relist, the periodic
sync). Pure: it reads a :class:`~berth.runtime.base.ContainerState` and the row's
current status and returns what to write; it never touches a row, so the caller
decides (with :func:`should_apply`) whether to write it at all.

The rules, first match wins (``<age>`` is :func:`age_text`)::

    no state at all          -> Unknown     reason "container state is missing"
    error text, created or   -> row in Error: left unchanged (a failed start; the
      exited                                  row's reason already says why)
    error text               -> Stopped if exited/removing, else the engine's status
                                capitalised (Error when berth does not know it);
                                detail "Exited(<code>) <age> ago (error)", reason = the text
    paused                   -> Paused      "Up <age since start> (paused)"
    restarting               -> Restarting  "Restarting"
    running                  -> Running     "Up <age since start>"
                                (these three clear the reason of a row in Error)
    dead                     -> Dead        "Dead"
    never started            -> Created     "Created"   (row Created, Restarting, Error or
                                                         Rebuilding: left unchanged)
    started, never finished  -> Unknown     reason "unexpected container state"
    started and finished     -> Stopped     "Exited(<code>) <age since finish> ago "
                                            (the trailing space is Zun's; clients see it)

A detail that needs an age is null when the age is zero (or the clock says the time
is in the future), as in Zun; Zun's "Up None" never appears.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from berth.compute.states import Status
from berth.runtime.base import ContainerState, RunState

REASON_STATE_MISSING = "container state is missing"
REASON_UNEXPECTED_STATE = "unexpected container state"

# The row statuses a never-started container does not override: in-flight work that
# the API announced before the agent ran it (Restarting, Rebuilding), a failure whose
# status_reason must stay visible (Error), and Created itself.
_KEEP_WHEN_NEVER_STARTED = frozenset({
    Status.CREATED, Status.RESTARTING, Status.ERROR, Status.REBUILDING,
})

# The engine's states a failed ``docker start`` leaves behind, with its error text:
# "created" when the container never ran, "exited" when it had run before. The text
# stays until a start succeeds, so it says nothing new about a row already in Error.
_FAILED_START_STATES = frozenset({RunState.CREATED, RunState.EXITED})

_UNITS = (("day", 86400), ("hour", 3600), ("min", 60), ("second", 1))


@dataclass(frozen=True, slots=True)
class MappedStatus:
    """What to write to a row after reading the engine's state.

    ``status`` None means "leave the row alone": no column changes (``detail`` and
    ``reason`` are then None and ``reason_set`` False). Otherwise ``status`` and
    ``detail`` are both written (a None detail clears ``status_detail``), and
    ``status_reason`` is written with ``reason`` only when ``reason_set``; Zun keeps
    an earlier reason unless a rule sets one, and so does berth.
    """

    status: Status | None
    detail: str | None = None
    reason: str | None = None
    reason_set: bool = False

    @property
    def unchanged(self) -> bool:
        return self.status is None

    def changes(self) -> dict[str, str | None]:
        """The row's columns to update, by column name; empty when unchanged."""
        if self.status is None:
            return {}
        values: dict[str, str | None] = {
            "status": self.status.value,
            "status_detail": self.detail,
        }
        if self.reason_set:
            values["status_reason"] = self.reason
        return values


UNCHANGED = MappedStatus(status=None)


def should_apply(task_state: str | None, force: bool) -> bool:
    """Whether a mapped state may be written: only when no task is in progress on the
    container (its flow owns the status until it ends), or when ``force`` (the create
    flow, right after its own Docker create)."""
    return force or not task_state


def age_text(since: dt.datetime, now: dt.datetime) -> str | None:
    """``now - since`` in its largest non-zero unit, rounded down: "3 days", "1 hour",
    "5 mins", "1 second". None when under a second, or when ``since`` is after ``now``.

    Zun always says the plural ("1 seconds"); berth says the singular for 1, as the
    Docker CLI does. Naive datetimes are taken as UTC.
    """
    total = int((_utc(now) - _utc(since)).total_seconds())
    if total <= 0:
        return None
    for unit, size in _UNITS:
        count = total // size
        if count:
            return f"{count} {unit}" if count == 1 else f"{count} {unit}s"
    return None  # pragma: no cover - total >= 1 always matches "second"


def map_state(
    state: ContainerState | None, current: Status | str, now: dt.datetime
) -> MappedStatus:
    """Translate the engine's ``state`` for a row whose status is ``current``.

    ``now`` is the caller's clock (injected so the ages are testable). See the module
    docstring for the rules.
    """
    if state is None:
        return MappedStatus(Status.UNKNOWN, None, REASON_STATE_MISSING, reason_set=True)

    started = _real_time(state.started_at)
    finished = _real_time(state.finished_at)
    exit_code = 0 if state.exit_code is None else state.exit_code

    if state.error:
        if current == Status.ERROR and state.status in _FAILED_START_STATES:
            # The Error a failed start left (with its reason) stays until the user
            # acts or the engine really changes (a start that works clears the text).
            return UNCHANGED
        detail = _exited(exit_code, finished, now, "(error)")
        return MappedStatus(_status_with_error(state.status), detail, state.error, True)
    # A row in Error whose container turns out to live (a start that timed out, then
    # really started) no longer fails: the Error's reason would only mislead.
    recovered = current == Status.ERROR
    if state.paused:
        return MappedStatus(Status.PAUSED, _up(started, now, " (paused)"), None, recovered)
    if state.restarting:
        return MappedStatus(Status.RESTARTING, "Restarting", None, recovered)
    if state.running:
        return MappedStatus(Status.RUNNING, _up(started, now, ""), None, recovered)
    if state.dead:
        return MappedStatus(Status.DEAD, "Dead")
    if started is None:
        # Zun defines only Creating -> Created and the kept statuses; berth also says
        # Created for any other row whose container exists but never ran (e.g. one
        # recreated behind berth's back), since that is what the engine reports.
        if current in _KEEP_WHEN_NEVER_STARTED:
            return UNCHANGED
        return MappedStatus(Status.CREATED, "Created")
    if finished is None:
        return MappedStatus(Status.UNKNOWN, None, REASON_UNEXPECTED_STATE, reason_set=True)

    detail = _exited(exit_code, finished, now, "")
    if state.oom_killed:
        reason = f"OOMKilled: the container ran out of memory (exit {exit_code})"
        return MappedStatus(Status.STOPPED, detail, reason, reason_set=True)
    return MappedStatus(Status.STOPPED, detail)


def map_death(exit_code: int, finished: dt.datetime, now: dt.datetime) -> MappedStatus:
    """What an engine's "die" event says before the container can be inspected:
    Stopped, its detail from the exit code and time the event gave. The inspect that
    follows adds what only it knows (OOMKilled, an error text)."""
    return MappedStatus(Status.STOPPED, _exited(exit_code, _real_time(finished), now, ""))


def _status_with_error(run_state: RunState) -> Status:
    """The status of a container whose state carries an error text.

    exited/removing mean it stopped; another engine word is kept, capitalised, when
    it names a berth status. ``RunState.UNKNOWN`` is berth's stand-in for a word it
    did not recognise, which Zun turns into Error, so berth does too.
    """
    if run_state in (RunState.EXITED, RunState.REMOVING):
        return Status.STOPPED
    if run_state == RunState.UNKNOWN:
        return Status.ERROR
    try:
        return Status(run_state.value.capitalize())
    except ValueError:
        return Status.ERROR


def _up(started: dt.datetime | None, now: dt.datetime, suffix: str) -> str | None:
    age = age_text(started, now) if started is not None else None
    return None if age is None else f"Up {age}{suffix}"


def _exited(
    code: int, finished: dt.datetime | None, now: dt.datetime, suffix: str
) -> str | None:
    age = age_text(finished, now) if finished is not None else None
    return None if age is None else f"Exited({code}) {age} ago {suffix}"


def _real_time(value: dt.datetime | None) -> dt.datetime | None:
    """None for "never": no time, or the engine's zero time (year 1) slipping through."""
    if value is None or value.year <= 1:
        return None
    return value


def _utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value
