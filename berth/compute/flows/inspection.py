"""The read-only calls: logs, top, stats (rpc-compute.md §3, behaviours.md §6.3-§6.5).

They answer the API synchronously, run in the RPC thread without the container's
worker queue (as Zun's calls run without its lock), and change the row only when the
engine has lost the container (then it becomes Error, or Deleted for auto_remove, and
the caller gets a 409). :func:`stats_view` is the pure conversion of one engine
reading into Zun's stats keys.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.flows import lifecycle
from berth.compute.states import Status
from berth.db import containers
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.inspection_types import StatsSample

LOG = logging.getLogger(__name__)

MIB = 1024 * 1024


def created_row(deps: AgentDeps, uuid: str) -> tuple[Container, str]:
    """The row and its Docker id; UncreatedContainer (400) when it has no Docker
    container (its create failed or has not run yet)."""
    row = containers.get_by_uuid(deps.db, uuid)
    if not row.container_id:
        raise exc.UncreatedContainer(uuid=uuid)
    return row, row.container_id


def engine_words(err: rt.RuntimeDriverError) -> str:
    """The engine's own message, without berth's prefix ("No such container: ")."""
    return str(err.kwargs.get("reason") or err.msg)


def container_gone(deps: AgentDeps, container_id: str) -> bool:
    """Whether the engine no longer has the container (an archive 404 may instead
    mean that the path is missing)."""
    try:
        deps.runtime.inspect(container_id)
    except rt.RuntimeNotFound:
        return True
    return False


def gone_error(deps: AgentDeps, row: Container, err: rt.RuntimeDriverError) -> exc.Conflict:
    """Mark a container the engine lost (unless a task owns the row or it is already
    marked) and return the 409 to raise."""
    current = containers.find_by_uuid(deps.db, row.uuid)
    if current is not None and current.task_state is None \
            and current.status not in (Status.DELETED, Status.ERROR):
        lifecycle.vanished(deps, current)
    return exc.Conflict(
        f"Container {row.uuid} has no Docker container any more ({err.msg}); it was "
        f"removed outside berth. Rebuild or delete it.")


@contextmanager
def engine_call(deps: AgentDeps, row: Container) -> Iterator[None]:
    """Turn "no such container" from the engine into the 409 of :func:`gone_error`."""
    try:
        yield
    except rt.RuntimeNotFound as err:
        raise gone_error(deps, row, err) from err


def container_logs(deps: AgentDeps, uuid: str, *, stdout: bool, stderr: bool,
                   timestamps: bool, tail: int | None, since: float | None) -> str:
    """The container's output as one string (``tail`` None = all lines)."""
    row, container_id = created_row(deps, uuid)
    member = deps.capsules.member_console(row)
    if member is not None:          # a member the capsule engine runs
        return member.logs(deps, row, stdout=stdout, stderr=stderr, timestamps=timestamps,
                           tail=tail, since=since)
    with engine_call(deps, row):
        return deps.runtime.logs(container_id, stdout=stdout, stderr=stderr,
                                 timestamps=timestamps, tail=tail, since=since)


def container_top(deps: AgentDeps, uuid: str, ps_args: str | None) -> dict[str, Any]:
    """``{"Titles": [...], "Processes": [[...], ...]}`` as Docker gives it."""
    row, container_id = created_row(deps, uuid)
    try:
        with engine_call(deps, row):
            table = deps.runtime.top(container_id, ps_args)
    except rt.RuntimeDriverError as err:
        if ps_args is None or type(err) is not rt.RuntimeDriverError:
            raise
        # The engine answers 500 (the generic error) with ps's complaint when ps
        # refuses the arguments; "not running" (409) and the rest keep their meaning.
        raise exc.InvalidParameterValue(
            err=f"Invalid input for field 'ps_args'. Value: '{ps_args}'. ps refused it: "
                f"{engine_words(err)}. Give ps options such as 'aux' or '-o pid,comm'.") from err
    return {"Titles": list(table.titles), "Processes": [list(p) for p in table.processes]}


def container_stats(deps: AgentDeps, uuid: str) -> dict[str, Any]:
    """One stats reading in Zun's keys (behaviours.md §6.5)."""
    row, container_id = created_row(deps, uuid)
    with engine_call(deps, row):
        sample = deps.runtime.stats(container_id)
    return stats_view(row.name or row.uuid, sample)


def cpu_percent(sample: StatsSample) -> float:
    """CPU use over the last reading interval, as ``docker stats`` prints it: the
    container's CPU time delta over the node's CPU time delta, times the online CPUs,
    in percent (so 200 = two CPUs busy). 0 when either delta is not positive.

    Zun divided the cumulative totals (no delta, no CPU count), which reports the
    container's average since the node booted, not its current use.
    """
    cpu_delta = sample.cpu_total - sample.precpu_total
    system_delta = sample.system_total - sample.presystem_total
    if cpu_delta <= 0 or system_delta <= 0:
        return 0.0
    return cpu_delta / system_delta * max(sample.online_cpus, 1) * 100.0


def memory_used(sample: StatsSample) -> int:
    """Usage without the droppable page cache (the Docker CLI's rule)."""
    if 0 < sample.mem_inactive_file < sample.mem_usage:
        return sample.mem_usage - sample.mem_inactive_file
    return sample.mem_usage


def stats_view(name: str, sample: StatsSample) -> dict[str, Any]:
    """Zun's stats keys: floats, except the two "<in>/<out>" byte strings."""
    used = memory_used(sample)
    limit = sample.mem_limit
    return {
        "CONTAINER": name,
        "CPU %": cpu_percent(sample),
        "MEM USAGE(MiB)": used / MIB,
        "MEM LIMIT(MiB)": limit / MIB,
        "MEM %": used / limit * 100.0 if limit > 0 else 0.0,
        "BLOCK I/O(B)": f"{sample.block_read}/{sample.block_write}",
        "NET I/O(B)": f"{sample.net_rx}/{sample.net_tx}",
    }
