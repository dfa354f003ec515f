"""A flow that fails in a way it did not plan for (issue 21).

Each flow handles the failures it expects (berth's own errors, the database going
away: ``outage.py``) and ends with the row saying what happened. Anything else (a
bug, an engine answer berth cannot read, a library error the driver did not
translate) used to go up to the container's worker, which logged it, and the row
kept what the flow had written last. ``owned_task`` cleared the task, but a status
written before the work (Restarting or Rebuilding by the API, Deleting by the API,
Creating at create, Rebuilding by the rebuild itself) stayed, now with no task and
so no deadline: nothing ever fixed it, since the syncs leave Creating, Deleting and
rows without a Docker container alone, and keep Restarting and Rebuilding while the
container never ran.

:func:`settle` is the flow's last word in that case, on the container's worker (no
other flow of the container runs meanwhile)::

    row gone                                      nothing (a delete got there)
    a transitional status (TRANSITIONAL) or a     ``undo`` (what the flow may hold),
      task left set                               then Error "The <what> failed
                                                  unexpectedly (<error>) ...", task
                                                  cleared; then the status Docker
                                                  reports, when it has the container
                                                  and reports it live or stopped
    any other status (a pause that failed         the status Docker reports
      unexpectedly on a Running container)        (Zun's rule: a failed action
                                                  leaves the status as it was)

and in every case the request's action is finished in Error (the event the flow
had begun records the traceback: ``common.recorded``). Every write is a compare-
and-swap on the status and task read, so an action the API accepted meanwhile (a
forced delete) wins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.states import Status
from berth.db import actions, containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: Statuses that announce work under way: written before the work (by the API or by
#: the flow) and replaced by its outcome. A row left in one of them, with no task,
#: would stay so for good.
TRANSITIONAL = frozenset({Status.CREATING, Status.RESTARTING, Status.REBUILDING,
                          Status.DELETING})


def must_fail(status: str | None, task_state: str | None) -> bool:
    """Whether a row the flow left so must go to Error (pure): it announces work that
    will not happen now, or still holds a task no flow runs."""
    return status in TRANSITIONAL or task_state is not None


def reason_for(what: str, err: BaseException) -> str:
    """The status_reason of a row whose ``what`` failed with ``err`` (pure)."""
    text = str(err).splitlines()[0][:300] if str(err) else ""
    error = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return (f"The {what} failed unexpectedly ({error}); it was abandoned and what it "
            f"held released. Check the agent's log, then retry the {what} or delete "
            f"the container.")


def settle(deps: AgentDeps, uuid: str, what: str, err: BaseException, *,
           ctx: RequestContext | None = None, undo: Callable[[], None] | None = None,
           **extra: Any) -> None:
    """End the flow ``what`` that raised ``err`` (see the module docstring). ``undo``
    (idempotent) runs before a row is failed; ``extra`` goes into that write
    (``container_id=None`` when the undo removed the Docker container). Errors of
    its own are logged: it runs at the flow's boundary."""
    LOG.error("%s failed unexpectedly", what, exc_info=err)
    try:
        if ctx is not None:
            actions.action_finish(deps.db, uuid, ctx.request_id, error=True)
        row = containers.find_by_uuid(deps.db, uuid)
        if row is None:
            return
        if must_fail(row.status, row.task_state):
            row = _fail(deps, row, what, err, undo, extra)
        if row is not None:
            _follow_engine(deps, row, reason_for(what, err))
    except Exception:  # the flow's boundary: nothing above can say more
        LOG.exception("could not record the failed %s; the container's row may say "
                      "%s until the next action", what, "what it did")


def _fail(deps: AgentDeps, row: Container, what: str, err: BaseException,
          undo: Callable[[], None] | None, extra: dict[str, Any]) -> Container | None:
    if undo is not None:
        try:
            undo()
        except Exception:  # the row must still say Error
            LOG.exception("could not undo what the failed %s held", what)
            extra = {k: v for k, v in extra.items() if k != "container_id"}
    try:
        return status_writes.mark_error(
            deps.db, row.uuid, reason_for(what, err)[:2000], was=row.status,
            columns={"task_state": None, "task_deadline": None, **extra},
            expect=Expect(status=row.status, task_state=row.task_state))
    except (exc.TaskInProgress, exc.ContainerNotFound) as moved:
        LOG.info("the row moved on meanwhile (%s); left as it is", moved.msg)
        return None


def _follow_engine(deps: AgentDeps, row: Container, reason: str) -> None:
    """The row as Docker reports it, when it has the container; a row in Error that
    Docker shows live keeps saying what failed."""
    if not row.container_id or row.task_state:
        return
    try:
        seen = deps.runtime.inspect(row.container_id)
    except rt.RuntimeDriverError as err:
        LOG.warning("could not read the container's state after the failure: %s", err.msg)
        return
    try:
        new = common.apply_runtime_state(deps, row, seen, expect=Expect.as_read(row))
        if row.status == Status.ERROR and new.status != Status.ERROR \
                and new.status_reason is None:
            containers.update_(deps.db, row.uuid, {"status_reason": reason[:2000]},
                               expect=Expect(task_state=None, status=new.status))
    except (exc.TaskInProgress, exc.ContainerNotFound) as moved:
        LOG.info("the row moved on meanwhile (%s); left as it is", moved.msg)
