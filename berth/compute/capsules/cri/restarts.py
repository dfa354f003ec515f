"""Members' restart policies on a CRI runtime, which restarts nothing itself (the
docker driver leaves it to Docker's restart policy). The capsule's ``restartPolicy``
is each member's ``restart_policy`` (``always``, ``on-failure``, ``no``: the API's
translation of Always, OnFailure, Never); init containers never restart.

A member that exited is seen by the relist within a second. When its policy starts it
again, it waits out a back-off, as kubelet does::

    exited (attempt n, back-off step k) ── policy says no ──► Stopped (the status
        │                                                     rules decide the capsule)
        ├── finished_at + delay(k) not reached ──► the row shows Restarting
        └── reached ──► a new CRI container, attempt n+1, in the same pod (same
            spec, same log file, appended to), started; the exited one removed;
            the row names the new one (Running)

    delay(k) = min(restart_backoff_initial * 2**k, restart_backoff_max)
    k+1 after a member that ran less than RESET seconds, else 0 again

Attempt and step live in the CRI container's labels, so that an agent restarted in the
middle of a back-off finds them again (nothing is kept in memory). ``on-failure``
with a ``MaximumRetryCount`` above 0 stops after that many restarts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
from typing import Any

from berth.compute.capsules.cri import create as cri_create
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.states import Status
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)

ATTEMPT = "berth.restart.attempt"
STEP = "berth.restart.backoff-step"
#: A member that ran this long before exiting restarts after the first delay again.
RESET = 600.0


@dataclasses.dataclass(frozen=True, slots=True)
class Backoff:
    initial: float = 10.0
    maximum: float = 300.0

    def delay(self, step: int) -> float:
        return float(min(self.initial * 2 ** min(step, 30), self.maximum))


def wanted(member: Container, seen: rt.RuntimeContainer) -> bool:
    """Whether the member's policy starts it again after this exit."""
    policy = member.restart_policy or {}
    name = str(policy.get("Name") or "no")
    code = seen.state.exit_code if seen.state is not None else None
    if name == "always":
        return True
    if name != "on-failure" or code == 0:
        return False
    limit = int(policy.get("MaximumRetryCount") or 0)
    return limit <= 0 or _label(seen, ATTEMPT) < limit


def _label(seen: rt.RuntimeContainer, key: str) -> int:
    try:
        return int(seen.labels.get(key) or 0)
    except ValueError:
        return 0


def next_step(seen: rt.RuntimeContainer) -> int:
    state = seen.state
    ran = (state.finished_at - state.started_at).total_seconds() \
        if state is not None and state.finished_at and state.started_at else 0.0
    return 0 if ran >= RESET else _label(seen, STEP) + 1


def due_at(seen: rt.RuntimeContainer, backoff: Backoff) -> dt.datetime | None:
    """When the member may start again (None: it never finished, so at once)."""
    finished = seen.state.finished_at if seen.state is not None else None
    if finished is None:
        return None
    return finished + dt.timedelta(seconds=backoff.delay(_label(seen, STEP)))


def handle(deps: AgentDeps, pods: PodRuntime, capsule: Container, member: Container,
           seen: rt.RuntimeContainer, backoff: Backoff, now: dt.datetime) -> Container:
    """The exited member ``seen`` restarted, or shown Restarting until it is due."""
    due = due_at(seen, backoff)
    if due is not None and now < due:
        waiting = dataclasses.replace(seen, state=rt.ContainerState(
            status=rt.RunState.RESTARTING, restarting=True,
            exit_code=seen.state.exit_code if seen.state else None,
            started_at=seen.state.started_at if seen.state else None,
            finished_at=seen.state.finished_at if seen.state else None))
        if member.status != Status.RESTARTING:
            LOG.info("member %s exited (%s); restarting it in %.0f s (back-off)",
                     member.name, seen.state.exit_code if seen.state else "?",
                     (due - now).total_seconds())
        return common.apply_runtime_state(deps, member, waiting,
                                          expect=Expect.as_read(member))
    attempt = _label(seen, ATTEMPT) + 1
    labels = {ATTEMPT: str(attempt), STEP: str(next_step(seen))}
    new_id = cri_create.restart_member(deps, pods, capsule, member, attempt, labels)
    try:
        pods.remove_member(seen.id)
    except rt.RuntimeDriverError as err:   # the next relist's sweep of the pod retries
        LOG.warning("member %s: could not remove its exited CRI container %s: %s",
                    member.name, seen.id[:12], err.msg)
    LOG.info("member %s restarted by its policy %s (attempt %d, CRI container %s)",
             member.name, (member.restart_policy or {}).get("Name"), attempt, new_id[:12])
    extra: dict[str, Any] = {"container_id": new_id}
    return common.apply_runtime_state(deps, member, pods.member(new_id), extra=extra,
                                      expect=Expect.as_read(member))
