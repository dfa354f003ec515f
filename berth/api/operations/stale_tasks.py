"""Tasks left behind by a dead agent (design.md item 4, the API's half).

An agent fails its own overdue tasks (``compute/periodic/task_deadlines.py``); when the
agent is down nobody would, and the API would refuse every action on the container
(TaskInProgress) for as long as the node stays dead. So show and list check the rows
they are about to return: a row whose task_deadline has passed and whose host's agent
is down is moved to Error with a reason saying what was interrupted.

The write is a compare-and-swap on the task state and the deadline read: if the agent
came back and finished (or restarted) the task meanwhile, nothing is written. The API
never touches Docker, so an interrupted create also forgets its ``container_id``: the
row then looks like any failed create, and the agent's start-up recovery removes a
Docker container such a create may have left.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from typing import Any

from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.compute import status_writes
from berth.compute.states import CREATE_TASK_STATES, Status
from berth.db import containers, nodes
from berth.db.base import utcnow
from berth.db.containers import Expect
from berth.db.models import Container

LOG = logging.getLogger(__name__)


def expire_stale(state: ApiState, rows: Sequence[Any],
                 now: dt.datetime | None = None) -> list[Any]:
    """``rows`` with every stale task failed (the updated rows in their place).
    ``rows``: containers, or rows of ``containers.list_columns`` that include uuid,
    host, task_state and task_deadline."""
    now = now or utcnow()
    overdue = [r for r in rows if _overdue(r, now)]
    if not overdue:
        return list(rows)
    up = nodes.up_compute_hosts(state.db, state.settings.service_down_time)
    fixed = {r.uuid: _expire(state, r) for r in overdue if r.host not in up}
    return [fixed.get(r.uuid, r) for r in rows]


def expire_if_stale(state: ApiState, row: Container, now: dt.datetime | None = None,
                    host_is_up: Callable[[str], bool] | None = None) -> Container:
    """``row``, or its updated self when its task was stale and has been failed."""
    now = now or utcnow()
    if not _overdue(row, now):
        return row
    is_up = host_is_up or state.host_is_up
    if is_up(str(row.host)):
        return row          # the agent is alive: its expire_tasks owns this row
    return _expire(state, row)


def _overdue(row: Container, now: dt.datetime) -> bool:
    return bool(row.task_state and row.host and row.task_deadline is not None
                and row.task_deadline < now)


def stale_reason(row: Container) -> str:
    task = row.task_state
    when = row.task_deadline.strftime("%Y-%m-%d %H:%M:%S") if row.task_deadline else "?"
    text = (f"{task} did not finish by its deadline ({when} UTC) and the compute agent "
            f"of host {row.host} is down; the container is in an unknown state — check "
            f"it when the agent is back and retry")
    if task in CREATE_TASK_STATES:
        return f"Container failed to create correctly: {text}"
    return text


def _expire(state: ApiState, row: Container) -> Container:
    values: dict[str, object] = status_writes.status_values(
        Status.ERROR, was=row.status, uuid=row.uuid, by="stale task", task_state=None,
        task_deadline=None, status_reason=stale_reason(row))
    if row.task_state in CREATE_TASK_STATES:
        values["container_id"] = None
    try:
        new = containers.update_(state.db, row.uuid, values,
                                 expect=Expect(task_state=row.task_state,
                                               task_deadline=row.task_deadline))
    except exc.TaskInProgress:
        # The task ended or was set again meanwhile: show what the row says now.
        return containers.find_by_uuid(state.db, row.uuid) or row
    except exc.ContainerNotFound:
        return row
    LOG.warning("container %s: %s on host %s outlived its deadline while the agent is "
                "down; marked Error", row.uuid, row.task_state, row.host)
    return new
