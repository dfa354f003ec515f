"""A request the API cast to this agent that never came (part of ``expire_tasks``).

The API writes Creating (the new row), Restarting, Rebuilding or Deleting itself, with a
deadline and no task, then casts (``api/operations/cast_deadlines.py``); the flow the cast starts replaces
the deadline with its task's. A cast the broker lost, or that died with the agent's
consumer, would leave the row there for good: the state syncs leave such rows alone,
and only the agent's start-up recovery used to take them up.
The owning agent's ``expire_tasks`` pass (every 30 s) does, as the user asked, for
each row of this host with no task and a deadline past::

    a flow of its container queued or running    left alone (the cast may be behind it)
    Deleting                                     deleted, with force (as at recovery)
    Restarting                                   rebooted (the default stop timeout)
    Rebuilding                                   rebuilt from the row's image, and
                                                 started iff its Docker container runs
    Creating                                     Error saying the create never came
                                                 (what it may have left removed, its
                                                 claim and allocation released): the
                                                 request's networks and volumes are
                                                 not in the row, so it cannot be redone
    any other status                             deadline cleared (nothing is awaited)

The flow is queued on the container's worker like a cast's, and records its events
under the request's own action (its latest unfinished one of that kind), so
``openstack appcontainer action show`` tells what happened to the request. A cast that
was only slow and arrives afterwards finds that action finished and does nothing
(:func:`unless_done`, around the reboot and rebuild endpoints' flows; a delete of a
gone row does nothing anyway). The deadline, ``[compute]task_state_timeout``, is long
so that only lost casts reach it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.capsules import delete as capsule_delete
from berth.compute.capsules import recovery as capsule_recovery
from berth.compute.deps import AgentDeps
from berth.compute.flows import actions as action_flows
from berth.compute.flows import delete, rebuild, recovery
from berth.compute.states import Status
from berth.db import actions, containers
from berth.db.capsules import CAPSULE
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: The API's action names of a reboot's request and of a rebuild's.
REBOOT_ACTIONS = ("reboot",)
REBUILD_ACTIONS = ("rebuild", "evacuate")
#: The actions whose request a status stands for.
_REQUESTED_BY: dict[str, tuple[str, ...]] = {
    Status.DELETING.value: ("delete",),
    Status.RESTARTING.value: REBOOT_ACTIONS,
    Status.REBUILDING.value: REBUILD_ACTIONS,
}

Submit = Callable[..., None]


class LostCastRepairer:
    """What ``expire_tasks`` (``task_deadlines.TaskExpirer``, whose one query finds
    these rows too) does with a row past its deadline without a task: :meth:`repair`.
    ``submit`` queues a flow on a container's worker (``ContainerWorkers.
    submit_flow``), ``busy`` says whether one is queued or running."""

    def __init__(self, deps: AgentDeps, submit: Submit, busy: Callable[[str], bool]) -> None:
        self._deps = deps
        self._submit = submit
        self._busy = busy

    def repair(self, row: Container) -> int:
        """Take up ``row``'s lost request (see the module docstring); 1 when a flow was
        queued for it."""
        if self._busy(row.uuid):
            return 0
        if row.status == Status.CREATING:
            return self._fail_create(row)
        requested = _REQUESTED_BY.get(str(row.status))
        if requested is None:
            try:
                containers.update_(self._deps.db, row.uuid, {"task_deadline": None},
                                   expect=Expect(task_state=None, status=row.status,
                                                 task_deadline=row.task_deadline))
            except (exc.TaskInProgress, exc.ContainerNotFound):
                pass
            return 0
        ctx = RequestContext.admin(_request_of(self._deps, row.uuid, requested))
        LOG.warning("the %s request for it has not reached this agent by its deadline "
                    "(%s UTC): the cast was lost; doing it now", requested[0],
                    row.task_deadline)
        flow, kwargs = self._flow(row)
        self._submit(row.uuid, flow, self._deps, ctx, row.uuid, **kwargs)
        return 1

    def _fail_create(self, row: Container) -> int:
        LOG.warning("the create request for it has not reached this agent by its deadline "
                    "(%s UTC): the cast was lost; marking it Error", row.task_deadline)
        what = "capsule" if row.container_type == CAPSULE else "container"
        reason = (f"{what.capitalize()} failed to create correctly: the create request did "
                  f"not reach the compute agent of host {self._deps.host} by its deadline "
                  f"({row.task_deadline} UTC; the message was lost). Delete this {what} "
                  f"and create it again.")
        if row.container_type == CAPSULE:
            done = capsule_recovery.fail_create(
                self._deps, row, reason,
                expect=Expect(task_state=None, task_deadline=row.task_deadline))
        else:
            done = recovery.fail_interrupted_create(self._deps, row, reason,
                                                    deadline=row.task_deadline)
        if done:
            actions.action_finish(self._deps.db, row.uuid,
                                  _request_of(self._deps, row.uuid, ("create",)), error=True)
        return int(done)

    def _flow(self, row: Container) -> tuple[Callable[..., Any], dict[str, Any]]:
        if row.status == Status.DELETING:
            if row.container_type == CAPSULE:
                return capsule_delete.delete_capsule, {"force": True}
            return delete.delete_container, {"force": True}
        if row.status == Status.RESTARTING:
            return action_flows.reboot_container, {
                "timeout": self._deps.settings.stop_timeout_default}
        return rebuild.rebuild_container, {"run": self._runs(row)}

    def _runs(self, row: Container) -> bool:
        """Whether the rebuilt container starts: as the API decides when the request
        does not say, by whether it ran; with no Docker container to ask (an
        evacuation, a rebuild after a failed one), not started: start it after."""
        if not row.container_id:
            return False
        try:
            seen = self._deps.runtime.inspect(row.container_id)
        except rt.RuntimeDriverError:
            return False
        return seen.state is not None and seen.state.status == rt.RunState.RUNNING


def _request_of(deps: AgentDeps, uuid: str, names: tuple[str, ...]) -> str | None:
    """The request id of the container's latest unfinished action named in ``names``."""
    for action in actions.list_actions(deps.db, uuid):
        if action.action in names and action.finish_time is None:
            return action.request_id
    return None


def unless_done(flow: Callable[..., Any], names: tuple[str, ...]) -> Callable[..., None]:
    """``flow(deps, ctx, uuid, ...)``, a cast's, unless the request's action (named in
    ``names``) is already finished: the agent took the cast for lost at its deadline
    and did the request itself (:class:`LostCastRepairer`), and this is the cast
    arriving late. Checked on the container's worker, so behind a repair queued
    before it. A request the API's cast failed for is finished too (in Error, its
    status put back): not done either."""
    @functools.wraps(flow)
    def run(deps: AgentDeps, ctx: RequestContext, uuid: str, *args: Any, **kwargs: Any
            ) -> None:
        if ctx.request_id and actions.is_finished(deps.db, uuid, ctx.request_id, names):
            LOG.warning("the %s request %s arrived after it was done (its cast was taken "
                        "for lost at the deadline); not doing it again", names[0],
                        ctx.request_id)
            return
        flow(deps, ctx, uuid, *args, **kwargs)
    return run
