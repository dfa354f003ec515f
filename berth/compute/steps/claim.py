"""The claim step: the container's cpu and memory checked against this node's free
capacity and recorded, under the node's lock (``ResourceTracker.claim``).

A claim is the row itself (``berth.compute.claims``): a row placed on the node holds
its share until it reaches Error or Deleted. So ``release`` has nothing to write: the
Error that ends a failed flow, written after the undo, releases the claim (with the
host cleared when the node refused the container), and the flow then publishes the
node's usage without it.
"""

from __future__ import annotations

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.steps.failures import StepFailed, resources_unavailable
from berth.db.models import Container


class Claim:
    """``held``: the API's placing checked the node and recorded the container there
    already (with its allocation, embedded Placement), so the claim only publishes
    the node's usage."""

    def __init__(self, deps: AgentDeps, row: Container, *, held: bool = False) -> None:
        self._deps, self._row, self._held = deps, row, held

    def acquire(self) -> None:
        """StepFailed (ResourcesUnavailable, host cleared) when it does not fit."""
        deps, row = self._deps, self._row
        if self._held:
            deps.tracker.publish_usage_soon()
            return
        try:
            deps.tracker.claim(row.uuid, row.cpu, row.memory, placed=row.host == deps.host)
        except exc.ResourcesUnavailable as err:
            raise StepFailed(err, resources_unavailable(deps.host, err.msg)) from err

    def release(self) -> None:
        """Nothing to undo here: the failed flow's Error write releases the claim."""
