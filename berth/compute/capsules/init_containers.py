"""Waiting for a capsule's init container to exit, on either engine (``inspect`` is
the engine's): the capsule goes on after exit 0 and fails naming the init container
otherwise, or after ``[DEFAULT]init_container_timeout``."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable

from berth.compute.capsules.failure import CapsuleFailed
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.states import TaskState
from berth.db import containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def wait_for_init(deps: AgentDeps, row: Container, member: Container,
                  clock: Callable[[], float],
                  inspect: Callable[[str], rt.RuntimeContainer]) -> None:
    """Until the init container exits: 0 goes on, anything else fails the capsule, as
    does running past ``init_container_timeout``. Polls ``inspect`` (the engine's) at
    0.1 s, backing off to 2 s."""
    timeout = deps.settings.init_container_timeout
    _extend_deadline(deps, row, timeout)
    deadline = clock() + timeout
    interval = 0.1
    fresh = containers.get_by_uuid(deps.db, member.uuid)
    while True:
        seen = inspect(fresh.container_id or "")
        state = seen.state
        if state is not None and not state.running and not state.restarting \
                and state.status != rt.RunState.CREATED:
            common.apply_runtime_state(deps, fresh, seen, force=True)
            if state.exit_code == 0:
                LOG.info("init container %s finished (exit 0)", member.name)
                return
            raise CapsuleFailed(reason=f"The init container {member.name} failed (exit "
                                       f"{state.exit_code}{_detail(state)}); the capsule "
                                       f"does not start. Its logs say why.")
        if clock() >= deadline:
            raise CapsuleFailed(reason=f"The init container {member.name} was still running "
                                       f"after {timeout} s ([DEFAULT]init_container_timeout).")
        time.sleep(interval)
        interval = min(interval * 2, 2.0)


def _detail(state: rt.ContainerState) -> str:
    return ", OOMKilled" if state.oom_killed else (f", {state.error}" if state.error else "")


def _extend_deadline(deps: AgentDeps, row: Container, seconds: int) -> None:
    """An init container may run longer than a create's task deadline allows."""
    deadline = common.task_deadline(deps.settings, TaskState.CONTAINER_CREATING)
    if deadline is None:
        return
    deadline += dt.timedelta(seconds=seconds)
    containers.update_(deps.db, row.uuid, {"task_deadline": deadline},
                       expect=Expect(task_state=TaskState.CONTAINER_CREATING))
