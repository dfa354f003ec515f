"""The allocation step: the container's resources recorded in Placement
(``deps.placement``) against its node's provider, consumer = the container's uuid,
and released again on failure; ``allocate`` and ``release_allocation`` are also what
resize, recovery and a cut-short create use directly.

Without Placement the step does nothing. With the embedded Placement the API may have
written the allocation with the row (``berth.api.operations.placing``): the step then
finds it held and takes it over, so that a failure releases it all the same (a row in
Error holds nothing).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
from collections.abc import Callable

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.steps.failures import StepFailed, placement_unanswered, resources_unavailable
from berth.db import nodes
from berth.db.models import Container
from berth.db.task_begin import Held
from berth.placement.base import AllocationFailed, PlacementError, holds_exactly
from berth.placement.requests import container_resources

LOG = logging.getLogger(__name__)


class Allocation:
    """``overlapped`` (create): ``acquire`` only begins the allocation beside the
    flow, which ``join``s it where a refusal must stop it; and when the row was
    placed here by the API, asks once whether it holds the allocation already
    (``held``; the claim is then done too). Otherwise ``acquire`` allocates and
    answers before it returns, unless the container holds it already."""

    def __init__(self, deps: AgentDeps, row: Container, *, overlapped: bool = False,
                 held_now: Held | None = None) -> None:
        self._deps, self._row, self._overlapped = deps, row, overlapped
        #: What the container held in Placement as its flow began (read with the
        #: flow's first write: ``common.begin_placed_task``); None: not read.
        self._held_now = held_now
        self._began = False
        self._future: cf.Future[None] | None = None
        self.held = False

    def acquire(self) -> None:
        """StepFailed: ResourcesUnavailable when the resources do not fit (the host
        cleared), Placement's failure when it does not answer."""
        deps, row = self._deps, self._row
        if deps.placement is None:
            return
        self._began = True
        if not self._overlapped:
            _joined(deps, lambda: allocate(deps, row))
            return
        held, provider = (held_already(deps, row, self._held_now) if row.host == deps.host
                          else (False, None))
        if held:
            self.held = True
            return
        self._future = common.overlapped(deps, allocate, deps, row, provider, False)

    def answered(self) -> bool:
        """Whether ``join`` would return at once."""
        return self._future is None or self._future.done()

    def join(self) -> None:
        """Wait for the allocation begun by ``acquire`` (again: free); StepFailed as
        ``acquire``'s."""
        future = self._future
        if future is not None:
            _joined(self._deps, future.result)

    def release(self) -> None:
        """The container's allocation removed: the one in flight once answered, or
        the one found held. Idempotent; a Placement failure is logged."""
        if not self._began:
            return
        if self._future is not None:
            common.settle(self._future)   # an allocation in flight would outlive the undo
        release_allocation(self._deps, self._row.uuid)


def _joined(deps: AgentDeps, wait: Callable[[], object]) -> None:
    """``wait`` for the allocation, its failure worded for the row."""
    try:
        wait()
    except AllocationFailed as err:
        raise StepFailed(exc.ResourcesUnavailable(reason=err.msg),
                         resources_unavailable(deps.host, err.msg)) from err
    except (PlacementError, exc.ComputeNodeNotFound) as err:
        raise StepFailed(err, placement_unanswered(deps.host, err.msg)) from err


def held_already(deps: AgentDeps, row: Container, held_now: Held | None = None
                 ) -> tuple[bool, str | None]:
    """Whether the container holds its resources on this node in Placement already
    (the API's placement wrote them with the row: ``EmbeddedPlacement.holds``), and
    the node's provider (None: not read; ``allocate`` reads it, and says what fails).
    The provider asked about is the one remembered from an earlier create
    (``deps.provider``); when it does not hold them, the node's row is read again,
    and that provider is the one asked and returned. ``held_now``: what the container
    holds, read already (with the flow's first write): Placement is not asked."""
    if deps.placement is None:
        return False, None
    placement = deps.placement
    resources = container_resources(row.cpu, row.memory, row.disk)

    def holds(provider: str) -> bool:
        return (holds_exactly(held_now, provider, resources) if held_now is not None
                else placement.holds(row.uuid, provider, resources))

    try:
        provider, remembered = deps.provider.known(deps.db, deps.host)
        if holds(provider):
            return True, provider
        if not remembered:
            return False, provider
        fresh = deps.provider.reread(deps.db, deps.host)
    except exc.ComputeNodeNotFound:
        deps.provider.forget()
        return False, None
    if fresh != provider and holds(fresh):
        return True, fresh
    return False, fresh


def allocate(deps: AgentDeps, row: Container, provider: str | None = None,
             check_held: bool = True) -> None:
    """Record the container's resources in Placement against this node's provider
    (consumer = the container's uuid), unless it holds them there already (asked
    unless ``check_held`` is False: the caller asked). AllocationFailed when they do
    not fit."""
    assert deps.placement is not None
    resources = container_resources(row.cpu, row.memory, row.disk)
    provider = provider or nodes.provider_uuid_of(deps.db, deps.host)
    # The API wrote it with the row when it placed the container here (embedded
    # Placement: berth.api.operations.placing): one read instead of the allocation.
    if check_held and deps.placement.holds(row.uuid, provider, resources):
        return
    deps.placement.allocate(row.uuid, provider, resources, row.project_id, row.user_id)


def release_allocation(deps: AgentDeps, uuid: str) -> None:
    """Undo of ``allocate`` (idempotent). A failure is logged: deleting the
    container releases the allocation again."""
    if deps.placement is None:
        return
    try:
        deps.placement.remove_allocation(uuid)
    except PlacementError as err:
        LOG.error("could not release the Placement allocation after a failed create "
                  "(%s); deleting the container releases it", err.msg)
