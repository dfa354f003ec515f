"""Pieces every flow uses: the task-state block, action events, refreshing a row
from the engine, and failing a container with a reason."""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import datetime as dt
import logging
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.last_inspected import Mark
from berth.compute.states import CREATE_TASK_STATES, Status
from berth.compute.status_mapping import map_state, should_apply
from berth.db import actions, containers, task_begin
from berth.db.containers import Expect
from berth.db.models import Container
from berth.metrics.catalog import action_name, timed_action
from berth.runtime.base import RuntimeContainer

LOG = logging.getLogger(__name__)

T = TypeVar("T")


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class Recording:
    """What ``recorded`` yields: after a success with ``then``, the id of the next
    event, already started (for ``recorded(..., started=...)``). ``ending``: the
    event's successful end, for the block's last write of the container to make in
    its own statement (``containers.update_(..., ending=...)``; None when the request
    has no action): the block passes it to that write only when nothing after it can
    fail."""

    next_event_id: int | None = None
    ending: actions.EventEnding | None = None


@contextmanager
def recorded(deps: AgentDeps, ctx: RequestContext, uuid: str, event: str,
             finish_action: bool = True, *, then: str | None = None,
             started: int | None = None) -> Iterator[Recording]:
    """Record ``event`` (``compute__do_container_start`` ...) on the action of this
    request: start, then Success or Error with the traceback; then finish the action.
    The exception, if any, goes on. ``then``: on success, start that event in the
    same write that ends this one (a create with run: create, then start);
    ``started``: this event was started so, by the previous ``recorded``. The block
    is also counted and timed as an action (``berth_compute_actions``)."""
    with (timed_action(action_name(event)),
          _recorded(deps, ctx, uuid, event, finish_action, then, started) as recording):
        yield recording


@contextmanager
def _recorded(deps: AgentDeps, ctx: RequestContext, uuid: str, event: str,
              finish_action: bool, then: str | None, started: int | None
              ) -> Iterator[Recording]:
    event_id = started if started is not None else \
        actions.event_start(deps.db, uuid, ctx.request_id, event)
    action_of = (uuid, ctx.request_id) if finish_action else None
    ending = None if event_id is None else actions.EventEnding(event_id, finish_action, then)
    recording = Recording(ending=ending)
    try:
        yield recording
    except BaseException as err:
        trace = "".join(traceback.format_exception(err))
        # (Ended by the block's last write already, the event gets its Error all the
        # same; the next event it started will not run.)
        if ending is not None and ending.next_event_id is not None:
            actions.event_finish(deps.db, ending.next_event_id, error=True, traceback=trace)
        actions.event_finish(deps.db, event_id, error=True, traceback=trace,
                             action_of=action_of)
        raise
    if ending is not None and ending.ended:
        recording.next_event_id = ending.next_event_id
        return
    recording.next_event_id = actions.event_finish(
        deps.db, event_id, error=False, action_of=action_of,
        then=(uuid, ctx.request_id, then) if then is not None else None)


def overlapped(deps: AgentDeps, fn: Callable[..., T], *args: Any) -> cf.Future[T]:
    """Run ``fn(*args)`` on ``deps.overlap`` while this flow goes on (its log lines
    still name the container); the caller must ``result()`` (or ``settle``) it."""
    return deps.overlap.submit(contextvars.copy_context().run, fn, *args)


def settle(future: cf.Future[Any]) -> None:
    """Wait for an overlapped call whose outcome no longer matters (an undo path):
    the engine must be done with the container before it is removed."""
    try:
        future.result()
    except Exception:  # the flow is failing already for its own reason
        LOG.debug("an overlapped call failed during an undo", exc_info=True)


def task_timeout(settings: AgentSettings, task_state: str) -> int:
    """Seconds ``task_state`` may last: ``create_task_timeout`` for the tasks of a
    create (a pull can be long), ``task_state_timeout`` for the others; <= 0: none."""
    if task_state in CREATE_TASK_STATES:
        return settings.create_task_timeout
    return settings.task_state_timeout


def task_deadline(settings: AgentSettings, task_state: str,
                  now: dt.datetime | None = None) -> dt.datetime | None:
    """When ``task_state``, set now, must be over (naive UTC, as the database stores
    times); None when its timeout is disabled."""
    seconds = task_timeout(settings, task_state)
    if seconds <= 0:
        return None
    start = now or now_utc()
    return start.replace(tzinfo=None) + dt.timedelta(seconds=seconds)


@dataclass
class TaskHold:
    """A task this flow owns (``owned_task``). Its last write may end the task too
    (``apply_and_end``, ``hand_over``), which saves the separate write that clears it."""

    uuid: str
    task_state: str
    row: Container
    ended: bool = False

    def apply_and_end(self, deps: AgentDeps, seen: RuntimeContainer,
                      extra: dict[str, Any] | None = None, *,
                      inspected: Mark | None = None,
                      event: actions.EventEnding | None = None) -> Container:
        """The engine's state (``apply_runtime_state``, forced) and ``extra``, written
        with the end of the task: one compare-and-swap on the task. When another actor
        took the task over meanwhile, the state is written without touching its task.
        ``event``: an event's end the write may make too (``Recording.ending``)."""
        ending = {**(extra or {}), "task_state": None, "task_deadline": None}
        try:
            row = apply_runtime_state(deps, self.row, seen, force=True, extra=ending,
                                      expect=Expect(task_state=self.task_state),
                                      inspected=inspected, event=event)
        except exc.TaskInProgress:
            LOG.warning("task %s was taken over by another actor", self.task_state)
            self.ended = True
            return apply_runtime_state(deps, self.row, seen, force=True, extra=extra,
                                       inspected=inspected, event=event)
        self.ended = True
        self.row = row
        return row

    def hand_over(self, deps: AgentDeps, task_state: str, values: dict[str, Any], *,
                  event: actions.EventEnding | None = None) -> Container:
        """Write ``values`` and pass straight to the next task of the same flow
        (container_creating -> container_starting) in one compare-and-swap. The new
        task is the caller's to hold next (``owned_task(..., held=row)``). ``event``:
        an event's end the write may make too (``Recording.ending``)."""
        row = containers.update_(deps.db, self.uuid,
                                 {**values, **task_values(deps, task_state)},
                                 expect=Expect(task_state=self.task_state), ending=event)
        self.ended = True
        self.row = row
        return row


def task_values(deps: AgentDeps, task_state: str) -> dict[str, Any]:
    """The values that set ``task_state`` on a row: the task and its deadline."""
    return {"task_state": task_state, "task_deadline": task_deadline(deps.settings, task_state)}


def begin_task(deps: AgentDeps, ctx: RequestContext, uuid: str, task_state: str,
               event: str, *, expect: Expect) -> tuple[Container, int | None]:
    """A flow's first write, one commit: ``task_state`` set when the row meets
    ``expect`` (compare-and-swap: its status, its Docker container when given, and its
    ``task_state``, the tasks it may take over: give None for none), and ``event``
    started on the request's action. Returns the row (for
    ``owned_task(..., held=row)``) and the event's id (for ``recorded(...,
    started=...)``). ContainerNotFound when the row is gone, TaskInProgress when it
    has a task, another status or another Docker container."""
    return task_begin.begin(deps.db, uuid, task_values(deps, task_state), expect=expect,
                            request_id=ctx.request_id, event=event)


def begin_placed_task(deps: AgentDeps, ctx: RequestContext, uuid: str, task_state: str,
                      event: str, *, expect: Expect
                      ) -> tuple[Container, int | None, task_begin.Held | None]:
    """``begin_task`` for a container the API placed on this node, which holds its
    resources in Placement already when it is the embedded one: what it holds there
    is read in the same statement where that can be (PostgreSQL: else None), for the
    allocation step (``steps.allocation.Allocation``'s ``held_now``)."""
    values = task_values(deps, task_state)
    if deps.placement is None or not deps.placement.in_database:
        row, event_id = task_begin.begin(deps.db, uuid, values, expect=expect,
                                         request_id=ctx.request_id, event=event)
        return row, event_id, None
    return task_begin.begin_reading_allocations(deps.db, uuid, values, expect=expect,
                                                request_id=ctx.request_id, event=event)


@contextmanager
def owned_task(deps: AgentDeps, uuid: str, task_state: str, *, steal: bool = False,
               held: Container | None = None, retaking: bool = False
               ) -> Iterator[TaskHold]:
    """Own the container's task for the block: set ``task_state`` only if none is set
    (compare-and-swap; ``steal`` takes it over whatever it is), clear it at the end,
    whatever happens, unless the block's last write ended it. TaskInProgress when
    another task holds it. ``held``: the row whose write already set ``task_state``
    (``TaskHold.hand_over``): nothing to set. ``retaking``: an attempt after one the
    database cut short (``outage.patiently``) takes back ``task_state`` if that
    attempt left it set.

    The task carries a deadline (``task_deadline``): if the agent dies or the work is
    lost, the agent's ``expire_tasks`` (or the API, when the agent is down) fails the
    container after it instead of leaving it busy forever."""
    if held is not None and held.task_state == task_state:
        row = held
    else:
        expected = containers.ANY if steal else (None, task_state) if retaking else None
        row = containers.update_(deps.db, uuid, task_values(deps, task_state),
                                 expect=Expect(task_state=expected))
    hold = TaskHold(uuid, task_state, row)
    try:
        yield hold
    finally:
        if not hold.ended:
            try:
                containers.update_(deps.db, uuid, {"task_state": None, "task_deadline": None},
                                   expect=Expect(task_state=task_state))
            except exc.ContainerNotFound:
                pass          # the flow removed the row (delete)
            except exc.TaskInProgress:
                LOG.warning("task %s was taken over by another actor", task_state)


@contextmanager
def task(deps: AgentDeps, uuid: str, task_state: str, *, steal: bool = False,
         retaking: bool = False) -> Iterator[Container]:
    """``owned_task`` for a block that needs only the row."""
    with owned_task(deps, uuid, task_state, steal=steal, retaking=retaking) as hold:
        yield hold.row


def fail(deps: AgentDeps, uuid: str, reason: str, **extra: Any) -> None:
    """Mark the container Error with ``reason`` (what went wrong, what to do)."""
    LOG.error("container failed: %s", reason)
    try:
        status_writes.mark_error(deps.db, uuid, reason[:2000], columns=extra)
    except exc.ContainerNotFound:
        LOG.info("container row is gone; nothing to mark")


def apply_runtime_state(deps: AgentDeps, row: Container, seen: RuntimeContainer,
                        force: bool = False, extra: dict[str, Any] | None = None, *,
                        expect: Expect = containers.ANYTHING,
                        inspected: Mark | None = None,
                        event: actions.EventEnding | None = None) -> Container:
    """Copy what the engine says into the row (model.md §3.1): status and detail
    (unless a task runs and not ``force``), hostname when unset, ports, runtime.
    ``expect`` makes the write a compare-and-swap (TaskInProgress when the row moved
    on since it was read): the state syncs pass ``Expect.as_read`` of the row they
    judged, the Docker container they inspected among its values.
    ``inspected``: when the inspect that said ``seen`` began; once the row holds its
    answer, ``deps.last_inspected`` records it (PLEG skips the events it covers).
    ``event``: an event's end the write may make too (``Recording.ending``)."""
    new = _write_runtime_state(deps, row, seen, force, extra, expect, event)
    if inspected is not None:
        deps.last_inspected.record(row.uuid, inspected, seen.state)
    return new


def _write_runtime_state(deps: AgentDeps, row: Container, seen: RuntimeContainer,
                         force: bool, extra: dict[str, Any] | None, expect: Expect,
                         event: actions.EventEnding | None) -> Container:
    values: dict[str, Any] = dict(extra or {})
    if should_apply(row.task_state, force):
        mapped = map_state(seen.state, row.status or Status.CREATING, now_utc())
        values.update(mapped.changes())
    if row.hostname is None and seen.hostname:
        values["hostname"] = seen.hostname[:63]
    if list(seen.ports) != list(row.ports or []):
        values["ports"] = list(seen.ports)
    if seen.runtime and seen.runtime != row.runtime:
        values["runtime"] = seen.runtime
    changed = {k: v for k, v in values.items() if getattr(row, k) != v}
    if not changed:
        return row
    status_writes.engine_state(row, changed)
    if "status" in changed:
        LOG.info("status %s -> %s (%s)", row.status, changed["status"],
                 changed.get("status_detail") or values.get("status_detail") or "")
    return containers.update_(deps.db, row.uuid, changed, expect=expect, ending=event)


def require_created(row: Container) -> str:
    """The row's Docker id; UncreatedContainer when it has none yet."""
    if not row.container_id:
        raise exc.UncreatedContainer(uuid=row.uuid)
    return row.container_id
