"""Riding out a database outage in the middle of a flow (issue 21, R3).

A flow writes the row several times: when the database stops answering between two
writes (a restart, a fail-over, a pool whose connections all hang), the flow's
exception is SQLAlchemy's, not berth's, and the row would keep the task the flow set
until its deadline. :func:`patiently` runs a flow's attempt again once the database
answers, with back-off (tenacity), for at most ``[compute]database_patience`` seconds
(:data:`DATABASE_PATIENCE` by default)::

    attempt 1 ──X (database away) ── 1 s ── attempt 2 ──X── 2 s ── attempt 3 ... ✓
                                                     (4, 8, 8 ... s; 45 s in all)

Each attempt is told whether it is a retry, so that it can first put right what the
cut-short attempt left: take back the task that attempt set (its own, not another
actor's), remove the Docker container it made. When the patience runs out the last
error goes on; :func:`give_up` then writes the Error that says the database was
unreachable, itself patiently (the row cannot say so before the database answers).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy.exc
import tenacity

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.flows import unexpected
from berth.db import containers

LOG = logging.getLogger(__name__)

T = TypeVar("T")

#: How long a flow keeps trying while the database does not answer; past it, the
#: flow ends in Error (or, when even that cannot be written, the task's deadline).
DATABASE_PATIENCE = 45.0
#: Longest wait between two attempts.
MAX_PAUSE = 8.0

#: What SQLAlchemy raises when the database does not answer: the connection failed
#: or was lost (OperationalError, InterfaceError, both DBAPIErrors), or no pooled
#: connection came free in time (TimeoutError).
DATABASE_ERRORS: tuple[type[Exception], ...] = (
    sqlalchemy.exc.OperationalError, sqlalchemy.exc.InterfaceError,
    sqlalchemy.exc.TimeoutError)


def database_away(err: BaseException) -> bool:
    """Whether ``err`` says the database did not answer (rather than refused)."""
    return isinstance(err, DATABASE_ERRORS)


def describe(err: BaseException) -> str:
    """The first line of the driver's message, for a log line or a reason."""
    orig = getattr(err, "orig", None) or err
    return str(orig).splitlines()[0][:200] if str(orig) else type(err).__name__


def patiently(attempt: Callable[[bool], T], *, what: str,
              patience: float = DATABASE_PATIENCE,
              sleep: Callable[[float], None] = time.sleep) -> T:
    """``attempt(retry)``'s result; ``retry`` is False the first time. While it fails
    because the database does not answer, it is called again after a pause, until
    ``patience`` seconds have passed since the first call; then the last error is
    raised. Any other error is raised at once."""
    def log(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        pause = state.next_action.sleep if state.next_action else 0.0
        LOG.warning("the database does not answer (%s); %s again in %.0f s",
                    describe(error) if error else "?", what, pause)

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(database_away),
        stop=tenacity.stop_before_delay(patience),   # never sleeps past it
        wait=tenacity.wait_exponential(multiplier=1, max=MAX_PAUSE),
        sleep=sleep, before_sleep=log, reraise=True)
    for trial in retrying:
        with trial:
            return attempt(trial.retry_state.attempt_number > 1)
    raise AssertionError("unreachable: tenacity either returns or raises")


def give_up(deps: AgentDeps, uuid: str, what: str, err: BaseException, *,
            patience: float = DATABASE_PATIENCE, undo: Callable[[], None] | None = None,
            keep_status: bool = False, **extra: Any) -> str:
    """End the container's ``what`` in Error saying the database was unreachable, its
    task cleared (whoever's it was: no flow of this container runs while this one
    does). Written as soon as the database answers again (within ``MAX_PAUSE``), for
    as long as a task may last (``[compute]task_state_timeout``, at least
    ``patience``); when it stays away beyond that too, logged, and the task's
    deadline fails the row later. ``undo`` (idempotent) runs first, with the write's
    retries: it may need the database too (the embedded Placement is in it).
    ``keep_status``: only the reason is written, for a flow without a task whose undo
    leaves the container as it was, running on (an update). Returns the reason."""
    reason = (f"The database was unreachable for more than {patience:.0f} s during the "
              f"{what} ({describe(err)}); the {what} was abandoned and what it held "
              f"released. Try again once the database answers.")
    LOG.error("%s abandoned: the database did not answer within %.0f s", what, patience)
    def write(_retry: bool) -> None:
        if undo is not None:
            undo()
        values: dict[str, Any] = {"status_reason": reason[:2000], **extra}
        try:
            if keep_status:
                containers.update_(deps.db, uuid, values)
            else:
                status_writes.mark_error(deps.db, uuid, reason[:2000], columns={
                    **extra, "task_state": None, "task_deadline": None})
        except exc.ContainerNotFound:
            LOG.info("container row is gone; nothing to mark")

    try:
        patiently(write, what=f"marking the {what} failed",
                  patience=max(patience, float(deps.settings.task_state_timeout)))
    except DATABASE_ERRORS as again:
        LOG.error("could not record the abandoned %s either (%s); the task's deadline "
                  "fails the container once the database answers", what, describe(again))
    return reason


def ride_out(deps: AgentDeps, uuid: str, what: str, attempt: Callable[[bool], None], *,
             ctx: RequestContext | None = None, undo: Callable[[], None] | None = None,
             **extra: Any) -> None:
    """Run a flow's ``attempt`` :func:`patiently`; when the patience runs out,
    :func:`give_up`: ``undo`` what the flow may hold, and the row in Error with
    ``extra``. Any other error the attempt lets out is the flow failing in a way it
    did not plan for: ``unexpected.settle`` ends it (the row in Error, or as Docker
    reports it; the action of ``ctx`` finished in Error)."""
    patience = deps.settings.database_patience
    try:
        patiently(attempt, what=what, patience=patience)
    except DATABASE_ERRORS as err:
        give_up(deps, uuid, what, err, patience=patience, undo=undo, **extra)
    except Exception as err:  # noqa: BLE001 - the flow's boundary: settled, not left
        unexpected.settle(deps, uuid, what, err, ctx=ctx, undo=undo, **extra)
