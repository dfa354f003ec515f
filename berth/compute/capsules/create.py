"""container_create for a capsule (behaviours.md §8): the frame both capsule drivers
share (claim, allocation, volumes, the Error written on failure); the engine's half is
the ``CapsuleEngine``'s ``make`` (``capsules.docker.create``, ``capsules.cri.create``).

Steps, each with its undo on one ExitStack, so that every failure path removes every
engine container the capsule made and releases its claim and its allocation (claim,
allocation and volumes are ``berth.compute.steps``, shared with create and rebuild)::

    task container_creating ──► claim the capsule's sums ──► allocate in Placement
      + the create event                                      (undo: release)
    ──► the members' volumes waited for and attached, a volume that several
        members mount attached once          (undo: made ones removed, the rest detached)
    ──► the engine's half (``deps.capsules.make``): the sandbox (or pod), each init
        container in order to exit 0, then the containers side by side
                                              (undo: everything it made removed)
    ──► the sandbox's state written on the capsule, task cleared

Init containers run once, without a restart policy: the first one that fails puts
the capsule in Error (Zun ran them under ``on-failure:10`` and then gave up on the
``Restarting`` it saw).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.capsules import sandbox_options
from berth.compute.capsules.failure import CapsuleFailed
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage
from berth.compute.states import Status, TaskState
from berth.compute.steps import take
from berth.compute.steps.allocation import Allocation, release_allocation
from berth.compute.steps.claim import Claim
from berth.compute.steps.failures import StepFailed, reason_of
from berth.compute.steps.volumes import Volumes
from berth.db import capsules, containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def create_capsule(deps: AgentDeps, ctx: RequestContext, uuid: str,
                   limits: dict[str, Any] | None = None,
                   clock: Callable[[], float] = time.monotonic) -> None:
    """Create the capsule ``uuid``. A database outage in the middle is ridden out
    (``outage.ride_out``): the create begins again once the database answers, from
    nothing (what the cut-short attempt made is removed first); past the patience, or
    when the flow fails in a way it did not plan for, the capsule and its members end
    in Error saying so, with nothing left in the engine, Placement or the volumes."""
    outage.ride_out(deps, uuid, "capsule create",
                    lambda retry: _attempt(deps, ctx, uuid, clock, retry), ctx=ctx,
                    undo=lambda: abandon(deps, uuid, "create"), container_id=None,
                    addresses={})


#: The tasks a capsule create sets: a retry after an outage takes it back from itself.
_OWN_TASKS = (None, TaskState.CONTAINER_CREATING.value)


def _attempt(deps: AgentDeps, ctx: RequestContext, uuid: str, clock: Callable[[], float],
             retry: bool) -> None:
    try:
        row, event_id = common.begin_task(deps, ctx, uuid, TaskState.CONTAINER_CREATING,
                                          "compute__do_container_create",
                                          expect=Expect(
                                              status=Status.CREATING.value,
                                              task_state=_OWN_TASKS if retry else None))
    except exc.ContainerNotFound:
        LOG.info("capsule was deleted before its creation began; nothing to do")
        return
    except exc.TaskInProgress as err:
        LOG.warning("not creating the capsule: busy or no longer Creating (%s)", err.msg)
        return
    if retry:     # still ours and Creating: start again from nothing
        remove_left_by_create(deps, row)
    LOG.info("creating capsule %s", row.name)
    try:
        with common.recorded(deps, ctx, uuid, "compute__do_container_create",
                             started=event_id):
            _create(deps, ctx, row, clock)
    except exc.BerthError:
        return          # recorded on the action; the row says why


def _create(deps: AgentDeps, ctx: RequestContext, row: Container,
            clock: Callable[[], float]) -> None:
    inits, members = capsules.members_of(deps.db, row.id)
    # The undo runs before errors_written: the Error written is the capsule's last
    # state, with nothing of it left in the engine or in Placement.
    with (common.owned_task(deps, row.uuid, TaskState.CONTAINER_CREATING, held=row) as hold,
          errors_written(deps, row, deps.capsules.name), ExitStack() as undo):
        check_host_ports(deps, row, inits + members)
        take(undo, Claim(deps, row))
        take(undo, Allocation(deps, row))
        volumes = take(undo, Volumes(deps, ctx, [m.uuid for m in inits + members]))
        seen = deps.capsules.make(deps, row, inits, members, volumes.binds(), undo, clock)
        hold.apply_and_end(deps, seen, {"status_reason": None})
        undo.pop_all()
    LOG.info("capsule %s is up: %d init containers, %d containers", row.name, len(inits),
             len(members))


def remove_left_by_create(deps: AgentDeps, row: Container) -> int:
    """What a capsule create that did not finish (cut short by the database, or by the
    agent's death) may have left, removed or released: every engine container of it
    (the sandbox and each member, by the names zun-<uuid>: the rows may not name them
    yet; with the cri driver, its pods by their labels) and their interfaces, its
    Placement allocation, its members' volumes. Idempotent. Returns how many engine
    containers (or pods) were removed."""
    inits, members = capsules.members_of(deps.db, row.id)
    removed = deps.capsules.remove_left(deps, row, [*members, *inits])
    release_allocation(deps, row.uuid)
    if deps.volumes is not None:
        deps.volumes.release_failed(None, [m.uuid for m in (*members, *inits)])
    return removed


def abandon(deps: AgentDeps, uuid: str, what: str) -> None:
    """The undo of a capsule's create or delete given up (``outage.give_up``,
    ``unexpected.settle``, which then write the capsule's Error, without a Docker
    container): every engine container of it removed and what it held released
    (``remove_left_by_create``: a delete had begun to remove them anyway), its members
    in Error first (whoever sees the capsule in Error sees its members in Error too).
    A capsule in Error holds nothing; deleting it again removes the rows."""
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        return
    remove_left_by_create(deps, row)
    status_writes.members_in_error(
        deps.db, row, f"Capsule failed: its {what} was abandoned; the capsule's "
                      f"status_reason says why.",
        {"container_id": None, "addresses": {}, "task_state": None})
    deps.tracker.publish_usage()


@contextmanager
def errors_written(deps: AgentDeps, row: Container, engine: str) -> Iterator[None]:
    """A failed create's Error written on the capsule and its members, saying why."""
    try:
        yield
    except CapsuleFailed as err:
        fail(deps, row, err.msg)
        raise
    except StepFailed as err:
        fail(deps, row, err.reason, placed=not err.clear_host)
        raise err.error from None
    except rt.RuntimeDriverError as err:
        fail(deps, row, f"{engine} could not make the capsule: {err.msg}")
        raise
    except exc.BerthError as err:
        failure = reason_of(err, deps.host)
        if failure is None:
            raise
        fail(deps, row, failure[0], placed=not failure[1])
        raise


def check_host_ports(deps: AgentDeps, row: Container, members: list[Container]) -> None:
    """The members' host ports are free of this node's other capsules."""
    taken = sandbox_options.taken_host_ports(deps.db, deps.host, row,
                                             sandbox_options.published_ports(members))
    if taken:
        raise CapsuleFailed(reason="Host port " + ", ".join(
            f"{p.host_port}/{p.protocol} (published by capsule {name})"
            for p, name in sorted(taken.items(), key=lambda i: i[0].host_port))
            + f" on host {deps.host}: choose another hostPort, or delete that capsule.")


def fail(deps: AgentDeps, row: Container, reason: str, placed: bool = True) -> None:
    """The capsule and its members in Error, saying why (``placed``: False when the
    node refused it, which clears its host as for a container); the node's usage
    published without it (a row in Error holds nothing)."""
    # Its sandbox is gone: a row still naming it would read as removed behind berth's back.
    # The members first: whoever sees the capsule in Error sees its members in Error too.
    status_writes.members_in_error(deps.db, row, f"Capsule failed: {reason}"[:2000],
                                   {"container_id": None, "addresses": {}})
    common.fail(deps, row.uuid, reason, container_id=None, addresses={},
                **({} if placed else {"host": None}))
    deps.tracker.publish_usage()
