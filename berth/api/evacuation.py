"""Evacuation: with ``[compute]evacuate_on_host_down``, the containers of a node whose
compute service is down are recreated on healthy nodes (design.md item 8; Zun has no
such process). Every berth-api process runs the check (``Evacuator``) every
``[DEFAULT]periodic_interval_max`` seconds; the database decides which one moves
each container.

One container's evacuation, in one transaction::

    row still on the dead node, no task, same status and Docker container as read
      and the node's service still down (its last heartbeat re-read)
      and the chosen node still has room (its compute_node row locked, usage re-read)
    ─► host = the new node, status Rebuilding, container_id cleared,
       action "evacuate" with the reason            ─► COMMIT
    ─► cast container_rebuild (run = it was Running) to the new node, whose agent
       claims the resources, moves the Placement allocation to its own provider,
       pulls the image and creates the container there

Split-brain rules (who owns a container, and what each side does):

1. The row's ``host`` is the owner; it changes only by a compare-and-swap on the row
   as it was read (same host, status, Docker container, no task). Several API
   processes evacuating at once therefore move each container exactly once: the
   others' swaps match no row, and they leave it.
2. A node is evacuated only while its service is down, re-checked inside the swap;
   a heartbeat that lands first cancels the move. A node marked forced_down by the
   operator (os-services force-down) counts as down at once: that is the fencing an
   operator gives berth. Forcing down a node whose agent still runs moves its
   containers all the same; that agent removes its copies at its next state sync.
3. A node only ever acts on rows that name it. When it comes back (start-up
   recovery and every state sync), a Docker container labelled for it whose row now
   names another node and another Docker container is a stale copy: it is removed
   (``docker rm -f``), never started again, and the row is never written. It never
   takes a row back (a node takes over a row of a down node only when that row
   refers to the very Docker container it holds: a renamed node).
4. Evacuation cannot tell a dead node from one cut off from the database: such a
   node keeps running its copies (its users may reach them) until it reaches the
   database again and rule 3 removes them. Enable evacuation only where a node
   that stops heartbeating is gone or fenced.
5. Only containers that can be rebuilt from their spec are moved: Created, Running
   and Stopped ones with no task in progress (a task interrupted by the node's
   death is failed by its deadline, ``stale_tasks``); not capsules, not Error rows
   (a failed create holds nothing), not Paused ones. A container no healthy node has
   room for stays where it is, and is tried again at the next check.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from berth.api.operations import placing
from berth.api.operations.cast_deadlines import awaited
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.common.units import memory_mib
from berth.compute import status_writes
from berth.compute.states import Status
from berth.db import actions, nodes
from berth.db import containers as db_containers
from berth.db.base import utcnow
from berth.db.containers import CONTAINER, Expect
from berth.db.models import Container
from berth.network import metadata
from berth.scheduler.base import RequestSpec

LOG = logging.getLogger(__name__)

#: The statuses a container is evacuated from (rule 5).
EVACUABLE = (Status.CREATED.value, Status.RUNNING.value, Status.STOPPED.value)
ACTION = "evacuate"


@dataclass(slots=True)
class EvacuationReport:
    moved: int = 0          # moved by this process (and cast to the new node)
    taken: int = 0          # moved by another process first, or changed meanwhile
    unplaced: int = 0       # no healthy node has room: left for the next check
    failed: int = 0         # moved, but the cast could not be sent: row in Error


def down_hosts(state: ApiState) -> dict[str, dt.datetime | None]:
    """{host: its last heartbeat} of every compute service that is down."""
    down_time = state.settings.service_down_time
    return {svc.host: svc.last_seen_up or svc.updated_at or svc.created_at
            for svc in nodes.list_services(state.db, nodes.COMPUTE_BINARY)
            if not nodes.service_is_up(svc, down_time)}


def evacuable_rows(state: ApiState, hosts: Sequence[str]) -> list[Container]:
    with state.db.reader() as s:
        return list(s.scalars(select(Container).where(
            Container.host.in_(list(hosts)), Container.container_type == CONTAINER,
            Container.task_state.is_(None), Container.status.in_(EVACUABLE))
            .order_by(Container.id)).all())


def evacuate_down_hosts(state: ApiState) -> EvacuationReport:
    """One check: every evacuable container of every down node, moved if a healthy
    node has room (see the module docstring)."""
    report = EvacuationReport()
    down = down_hosts(state)
    if not down:
        return report
    for row in evacuable_rows(state, sorted(down)):
        with container_context(row.uuid):
            try:
                outcome = evacuate(state, row, down[str(row.host)])
            except Exception:  # a loop boundary: this container, then the next
                LOG.exception("could not evacuate this container from host %s", row.host)
                outcome = "failed"
        setattr(report, outcome, getattr(report, outcome) + 1)
    if report.moved or report.failed or report.unplaced:
        LOG.info("evacuation of down hosts %s: %d moved, %d moved by another API process, "
                 "%d without room elsewhere, %d failed", ", ".join(sorted(down)),
                 report.moved, report.taken, report.unplaced, report.failed)
    return report


def _reason(dead: str, last_seen: dt.datetime | None, new_host: str) -> str:
    since = last_seen.strftime("%Y-%m-%d %H:%M:%S UTC") if last_seen else "never"
    return (f"host {dead} is down (last heartbeat {since}); evacuated to {new_host} "
            f"([compute]evacuate_on_host_down)")


def evacuate(state: ApiState, row: Container, last_seen: dt.datetime | None) -> str:
    """Move ``row`` off its down node and cast its rebuild to the new one. Returns
    "moved", "taken" (another process moved it, or it changed), "unplaced" or
    "failed" (the new node could not be told: the row is in Error saying so)."""
    dead = str(row.host)
    spec = RequestSpec(cpu=float(row.cpu or 0.0), memory_mib=memory_mib(row.memory),
                       runtime=row.runtime, disk_gb=int(row.disk or 0))
    ctx = RequestContext.admin()
    down_time = state.settings.service_down_time

    def still_down(conn: Connection) -> None:
        if nodes.compute_service_is_up(conn, dead, down_time):
            raise _StillUp(dead)

    def move(host: str, guard: placing.Guard) -> tuple[Container, str]:
        reason = _reason(dead, last_seen, host)
        return _move(state, ctx, row, host, reason, guard), reason

    try:
        selection = state.scheduler.select_destination(spec)
        selection, (moved, reason) = placing.insert_placed(state, spec, selection,
                                                           still_down, move)
    except exc.NoValidHost as err:
        LOG.warning("cannot evacuate from down host %s yet: %s", dead, err.msg)
        return "unplaced"
    except (exc.TaskInProgress, exc.ContainerNotFound, _StillUp):
        LOG.info("not evacuated: it changed, was moved by another API process, or host "
                 "%s came back", dead)
        return "taken"
    LOG.warning("evacuating: %s", reason)
    try:
        state.compute.cast(ctx, moved, "container_rebuild", run=row.status == Status.RUNNING)
    except exc.BerthError as err:
        LOG.error("evacuated to %s but its agent could not be told: %s", selection.host,
                  err.msg)
        status_writes.mark_error(
            state.db, row.uuid, f"Evacuated from down host {dead} to {selection.host}, whose "
                                f"agent could not be reached ({err.msg}); rebuild it.",
            was=moved.status, columns={"task_deadline": None})
        actions.action_finish(state.db, row.uuid, ctx.request_id, error=True)
        return "failed"
    return "moved"


class _StillUp(Exception):
    """The node's heartbeat came back before the move was written."""


def _move(state: ApiState, ctx: RequestContext, row: Container, host: str, reason: str,
          guard: placing.Guard) -> Container:
    """The swap of the module docstring: ``row``, as read, onto ``host``, with its
    action; ``guard`` (the node still down, the new node's room) runs first."""
    values: dict[str, object] = awaited(state.settings, status_writes.status_values(
        Status.REBUILDING, was=row.status, uuid=row.uuid, by="evacuation", host=host,
        container_id=None, status_reason=reason, updated_at=utcnow()))
    meta = row.cni_metadata
    if meta and metadata.pid_of(meta):
        # The plug was into a process of the dead node: the new node plugs afresh.
        values["cni_metadata"] = metadata.unplugged(meta)

    def record(s: Session) -> None:
        action = actions.new_action(ctx, row.uuid, ACTION)
        action.message = reason[:255]
        s.add(action)

    moved, _ = db_containers.update_with(
        state.db, row.uuid, values, record, expect=Expect.as_read(row), guard=guard)
    return moved


class Evacuator:
    """Runs ``evacuate_down_hosts`` every ``interval`` seconds on a thread of its own
    until ``stop()``."""

    def __init__(self, state: ApiState, interval: float) -> None:
        self._state = state
        self._interval = interval
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        LOG.info("evacuation of down hosts is on: checking every %g s", self._interval)
        self._thread = threading.Thread(target=self._loop, name="evacuator", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(30)

    def _loop(self) -> None:
        while not self._stopping.wait(self._interval):
            try:
                evacuate_down_hosts(self._state)
            except Exception:  # the loop must survive a database outage
                LOG.exception("evacuation check failed; the next one tries again")
