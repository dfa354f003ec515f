"""expire_tasks: no container stays busy forever (design.md item 4).

Every task_state an agent sets carries a deadline (``flows.common.task``). A cast that
was lost, or a flow that died with its thread, would otherwise leave the task set for
good, and the API refuses every action while a task is set. This periodic task of the
owning agent fails such rows: task cleared, status Error with a reason that says what
was interrupted, then the status read again from Docker. (When the agent itself is
down, the API does the same on show and list: ``api/operations/stale_tasks.py``.)

The same pass takes up the rows past a deadline the API wrote with no task, a status
whose cast never came (``lost_casts.py``).

A task whose flow is still running on this agent (its container's worker is busy) is
slow, not lost: it is left alone and logged once. Every write is a compare-and-swap on
the task state and the deadline read, so a task that ended, or was set again, in the
meantime is never clobbered.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

from berth.common import exceptions as exc
from berth.common.log import container_context
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, recovery, sync
from berth.compute.periodic.lost_casts import LostCastRepairer
from berth.compute.states import CREATE_TASK_STATES, Status
from berth.db import containers
from berth.db.base import utcnow
from berth.db.containers import Expect
from berth.db.models import Container

LOG = logging.getLogger(__name__)


class TaskExpirer:
    """The agent's ``expire_tasks`` periodic task (call :meth:`run`)."""

    def __init__(self, deps: AgentDeps, is_busy: Callable[[str], bool] = lambda _: False,
                 clock: Callable[[], dt.datetime] = utcnow,
                 lost_casts: LostCastRepairer | None = None) -> None:
        self._deps = deps
        self._is_busy = is_busy
        self._clock = clock        # naive UTC, as the database stores times
        self._lost_casts = lost_casts
        self._reported_busy: set[tuple[str, dt.datetime | None]] = set()

    def run(self) -> int:
        """Fail every overdue task of this host, and hand each past deadline without a
        task (a lost cast) to ``lost_casts``; return how many tasks were failed and
        lost requests taken up. One query serves both."""
        now = self._clock()
        done = 0
        past = containers.list_past_deadline(self._deps.db, now, host=self._deps.host)
        self._reported_busy &= {(row.uuid, row.task_deadline) for row in past}
        for row in past:
            with container_context(row.uuid):
                try:
                    if row.task_state:
                        done += self._expire(row)
                    elif self._lost_casts is not None:
                        done += self._lost_casts.repair(row)
                except Exception:  # a loop boundary: log this row, go on with the next
                    LOG.exception("could not end what is past its deadline (task %s, "
                                  "status %s)", row.task_state, row.status)
        return done

    def _expire(self, row: Container) -> int:
        if self._is_busy(row.uuid):
            key = (row.uuid, row.task_deadline)
            if key not in self._reported_busy:
                self._reported_busy.add(key)
                LOG.warning("%s is past its deadline (%s UTC) but still running on this "
                            "agent; leaving it to finish", row.task_state, row.task_deadline)
            return 0
        task = str(row.task_state)
        seconds = common.task_timeout(self._deps.settings, task)
        if task in CREATE_TASK_STATES:
            reason = (f"{recovery.FAILED_CREATE_REASON}: {task} did not finish within "
                      f"{seconds} s (the agent may have lost the request). Delete this "
                      f"container and create it again.")
            return int(recovery.fail_interrupted_create(
                self._deps, row, reason, deadline=row.task_deadline))
        try:
            status_writes.mark_error(
                self._deps.db, row.uuid, overdue_reason(task, seconds), was=row.status,
                columns={"task_state": None, "task_deadline": None},
                expect=Expect(task_state=task, task_deadline=row.task_deadline))
        except exc.TaskInProgress:
            LOG.info("%s ended or was set again meanwhile; nothing to expire", task)
            return 0
        except exc.ContainerNotFound:
            return 0
        LOG.warning("%s did not finish within %d s: task cleared, marked Error; reading "
                    "its state from Docker", task, seconds)
        seen = sync.refresh(self._deps, row.uuid)
        if seen.status != Status.ERROR and seen.status_reason is None:
            # Docker shows the container live, which clears an Error's reason; the
            # lost action still wants saying.
            try:
                containers.update_(self._deps.db, row.uuid, {
                    "status_reason": overdue_reason(task, seconds, seen.status)},
                    expect=Expect(task_state=None, status=seen.status))
            except (exc.TaskInProgress, exc.ContainerNotFound):
                pass
        return 1


def overdue_reason(task: str, seconds: int, status: str | None = None) -> str:
    """The status_reason of a row whose task ``task`` outlived its ``seconds``; with
    ``status``, what Docker showed of the container afterwards."""
    lost = f"{task} did not finish within {seconds} s (the agent may have lost the request)"
    if status is None:
        return f"{lost}; the container is in an unknown state — check it and retry"
    return f"{lost}; Docker shows the container {status}: retry the action if it is still wanted"
