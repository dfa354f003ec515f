"""sync_container_state: the safety net under PLEG, at start-up and every
``[DEFAULT]sync_container_state_interval`` seconds.

Cost per run: this host's rows (one query: never the whole table, as Zun reads),
one ``docker ps --all``, one inspect per container whose listed state disagrees with
its row, and one query for the rows of local containers this host does not hold.

Per row of this host (rules shared with the event path, see ``flows/sync.py``)::

    task_state set, or Creating/Deleting/Deleted,      skipped
      or no Docker container
    listed, "removing"                                 skipped (its destroy follows)
    listed, state agrees with status                   nothing to do
    listed, state disagrees                            inspect, status copied (CAS)
    not listed                                         vanished: Deleted (auto_remove),
                                                       rebuilt (auto_heal), else Error

A Docker container labelled for this host whose row no longer exists, or whose row is
a failed create that does not refer to it, is removed (``docker rm -f``): a forced
delete goes on when the engine does not answer, and drops the row; a create whose
``docker create`` timed out fails, and the engine may make the container later; either
container would otherwise run, unaccounted, until the agent's next start-up recovery.

A Docker container labelled for this host whose row names another host and another
Docker container is a stale copy: the API evacuated the row while this node was down
(``berth.api.evacuation``). It is removed too; the row is not touched.

A local container (labelled ``berth.container.uuid``) whose row names another host
and refers to this very Docker container is taken over: the host is rewritten to
this one, then the row is synced as above. This is for a node that was renamed; so
that two live agents sharing one engine do not take each other's containers, a row
whose host is up (heartbeat within ``service_down_time``) is not taken over, and
neither is a row that refers to another Docker container (an evacuated one: taking
it back would fight the node it was moved to).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from berth.common import exceptions as exc
from berth.common.log import container_context
from berth.compute.deps import AgentDeps
from berth.compute.flows import recovery, sync
from berth.compute.flows.sync import Outcome
from berth.compute.periodic.cleanup import is_unused
from berth.compute.states import Status
from berth.conf.default import SERVICE_DOWN_TIME
from berth.db import containers, nodes
from berth.db.base import utcnow
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: The row status a listed engine state agrees with; other states are always inspected.
LISTED_STATUS: dict[rt.RunState, Status] = {
    rt.RunState.CREATED: Status.CREATED,
    rt.RunState.RUNNING: Status.RUNNING,
    rt.RunState.PAUSED: Status.PAUSED,
    rt.RunState.RESTARTING: Status.RESTARTING,
    rt.RunState.EXITED: Status.STOPPED,
    rt.RunState.DEAD: Status.DEAD,
}


@dataclass(slots=True)
class SyncReport:
    """What one run read and did. ``rows_read`` counts container rows loaded from the
    database (this host's, plus the rows of local containers recorded elsewhere)."""

    rows_read: int = 0
    #: When this host's rows were read (taken before the read; naive UTC), the
    #: earliest task deadline among them, and how many were unused auto_remove rows:
    #: what lets expire_tasks and delete_unused_containers skip their own reads
    #: (``periodic/idle.py``).
    read_at: dt.datetime | None = None
    earliest_deadline: dt.datetime | None = None
    unused: int = 0
    containers_listed: int = 0
    inspected: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    rehomed: int = 0
    orphans_removed: int = 0
    failed: int = 0

    def count(self, outcome: Outcome) -> None:
        self.outcomes[outcome.value] = self.outcomes.get(outcome.value, 0) + 1

    def summary(self) -> str:
        done = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()) if v)
        return (f"{self.rows_read} rows read, {self.containers_listed} containers listed, "
                f"{self.inspected} inspected, {self.rehomed} taken over, "
                f"{self.orphans_removed} without a row removed, {self.failed} failed; "
                f"{done or 'no changes'}")


def needs_inspect(row: Container, seen: rt.RuntimeContainer) -> bool:
    """Whether the listed state disagrees with the row's status (pure)."""
    if seen.state is None:
        return True
    expected = LISTED_STATUS.get(seen.state.status)
    return expected is None or row.status != expected


def takeover_candidates(own_uuids: set[str], listed: Iterable[rt.RuntimeContainer]
                        ) -> set[str]:
    """uuids of local berth containers that are not among this host's rows (pure)."""
    return {c.uuid for c in listed if c.uuid and c.uuid not in own_uuids}


def orphans(host: str, listed: Iterable[rt.RuntimeContainer], candidates: set[str],
            reachable: set[str]) -> list[rt.RuntimeContainer]:
    """Among the ``candidates`` (local containers not among this host's rows), those
    labelled for ``host`` whose row cannot reach them (``reachable``: the rows that
    can) (pure). Containers of other hosts may belong to another berth sharing the
    engine."""
    return [c for c in listed if c.uuid in candidates and c.uuid not in reachable
            and c.labels.get(rt.LABEL_HOST) == host]


def sync_container_state(deps: AgentDeps,
                         service_down_time: int = SERVICE_DOWN_TIME) -> SyncReport:
    """One run (see the module docstring). One row's failure is logged and counted,
    and the run goes on; a failed ``docker ps`` fails the run (nothing is written)."""
    report = SyncReport(read_at=utcnow())
    rows = containers.list_by_host(deps.db, deps.host)
    report.rows_read = len(rows)
    report.earliest_deadline = min((r.task_deadline for r in rows if r.task_deadline),
                                   default=None)
    report.unused = sum(1 for r in rows if is_unused(r))
    listed = deps.runtime.list()
    report.containers_listed = len(listed)
    by_id = {c.id: c for c in listed}
    candidates = takeover_candidates({r.uuid for r in rows}, listed)
    found = containers.find_by_uuids(deps.db, candidates) if candidates else []
    report.rows_read += len(found)
    rows += _take_over(deps, found, set(by_id), service_down_time, report)
    # A failed create's row reaches no Docker container: one the engine made after
    # the create gave up on it (a time-out) is an orphan, as at start-up recovery;
    # so does a row evacuated elsewhere, from this node's stale copy.
    local_id = {c.uuid: c.id for c in listed if c.uuid}
    reachable = {r.uuid for r in found if not recovery.create_undone(r, deps.host)
                 and not recovery.evacuated_copy(r, local_id.get(r.uuid, ""), deps.host)}
    report.orphans_removed = recovery.remove_unreachable(
        deps, orphans(deps.host, listed, candidates, reachable))
    for row in rows:
        with container_context(row.uuid):
            try:
                report.count(_sync_row(deps, row, by_id, report))
            except rt.RuntimeUnavailable as err:
                # The engine went away between the listing and this row's inspect (a
                # restart): one line, not a traceback; the next run retries.
                report.failed += 1
                LOG.warning("state sync of this container: %s; next run retries", err.msg)
            except Exception:
                report.failed += 1
                LOG.exception("state sync of this container failed; next run retries")
    level = logging.INFO if report.outcomes.keys() - {"skipped", "unchanged"} \
        or report.failed or report.rehomed or report.orphans_removed else logging.DEBUG
    LOG.log(level, "sync_container_state on %s: %s", deps.host, report.summary())
    return report


def _sync_row(deps: AgentDeps, row: Container, by_id: dict[str, rt.RuntimeContainer],
              report: SyncReport) -> Outcome:
    if sync.skip_reason(row, deps.host, deps.capsules.runs_member(row)) is not None:
        return Outcome.SKIPPED
    assert row.container_id is not None
    seen = by_id.get(row.container_id)
    if seen is None:
        return sync.handle_vanished(deps, row)
    if seen.state is not None and seen.state.status == rt.RunState.REMOVING:
        return Outcome.REMOVING
    if not needs_inspect(row, seen):
        return Outcome.UNCHANGED
    report.inspected += 1
    try:
        full = deps.runtime.inspect(row.container_id)
    except rt.RuntimeNotFound:          # removed between the listing and now
        return sync.handle_vanished(deps, row)
    return sync.apply_seen(deps, row, full)


def _take_over(deps: AgentDeps, found: list[Container], local_ids: set[str],
               service_down_time: int, report: SyncReport) -> list[Container]:
    """Rewrite ``host`` on rows of local containers (``found``) recorded on a host
    that is down and referring to a Docker container of this engine (``local_ids``);
    return them (as written)."""
    if not found:
        return []
    up = nodes.up_compute_hosts(deps.db, service_down_time) - {deps.host}
    taken: list[Container] = []
    for row in found:
        if row.host is None or row.host == deps.host or row.host in up \
                or row.status in sync.SKIPPED_STATUSES:
            continue     # no host: a failed create, which start-up recovery cleans up
        if row.container_id not in local_ids:
            continue     # it moved on to another Docker container: not ours to take
        with container_context(row.uuid):
            try:
                taken.append(containers.update_(deps.db, row.uuid, {"host": deps.host},
                                                expect=containers.NO_TASK))
            except (exc.TaskInProgress, exc.ContainerNotFound):
                continue
            LOG.warning("its Docker container is on this host but its row said host %s; "
                        "host rewritten to %s", row.host, deps.host)
            report.rehomed += 1
    return taken
