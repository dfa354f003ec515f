"""The create flow's record in Placement (``deps.placement``): the container's
allocation against its node's provider, unless the API wrote it with the row (the
embedded Placement: ``berth.api.operations.placing``), and its release. Shared by
create, rebuild, resize and capsules."""

from __future__ import annotations

import concurrent.futures as cf
import logging

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.db import nodes
from berth.db.models import Container
from berth.placement.base import PlacementError
from berth.placement.requests import container_resources

LOG = logging.getLogger(__name__)


def allocate_overlapped(deps: AgentDeps, row: Container,
                         provider: str | None) -> cf.Future[None] | None:
    """Start recording the container's resources in Placement (``allocate``) beside
    the flow, on ``provider`` when read already; None without Placement.
    the create flow joins it."""
    if deps.placement is None:
        return None
    return common.overlapped(deps, allocate, deps, row, provider, False)


def release_when_answered(deps: AgentDeps, uuid: str, allocation: cf.Future[None] | None,
                           held: bool = False) -> None:
    """Undo of the create's allocation: the one in flight once answered, or the one
    the API made (``held``)."""
    if allocation is None and not held:
        return
    if allocation is not None:
        common.settle(allocation)   # an allocation still in flight would outlive the undo
    release_allocation(deps, uuid)


def held_already(deps: AgentDeps, row: Container) -> tuple[bool, str | None]:
    """Whether the container holds its resources on this node in Placement already
    (the API's placement wrote them with the row: ``EmbeddedPlacement.holds``), and
    the node's provider (None: not read; ``allocate`` reads it, and says what fails)."""
    if deps.placement is None:
        return False, None
    try:
        provider = nodes.provider_uuid_of(deps.db, deps.host)
    except exc.ComputeNodeNotFound:
        return False, None
    resources = container_resources(row.cpu, row.memory, row.disk)
    return deps.placement.holds(row.uuid, provider, resources), provider


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
