"""The one wording of each failure a resource step meets, as the row's
``status_reason`` says it: what went wrong and what to do. A flow that names itself
puts its name in front (``Rebuild failed: ``); the reason after it is the same in
every flow.

``StepFailed`` is what a step's ``acquire`` raises when the row's reason is not the
error's own text: it carries that reason, the berth error the flow raises once the
Error is written, and whether the node refused the container (its host is cleared, so
that it holds nothing here and may be created elsewhere).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from berth.common import exceptions as exc
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.steps.volumes import VOLUME_ERRORS
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


class StepFailed(Exception):
    """A step's failure with the reason the row gets; ``error`` is raised once the
    Error is written, ``clear_host`` says the node refused the container."""

    def __init__(self, error: exc.BerthError, reason: str, clear_host: bool = True) -> None:
        super().__init__(reason)
        self.error, self.reason, self.clear_host = error, reason, clear_host


def resources_unavailable(host: str, why: str) -> str:
    """The node's claim, or Placement, has no room for the container."""
    return f"ResourcesUnavailable: {why}. Ask for less, or free resources on host {host}."


def placement_unanswered(host: str, why: str) -> str:
    """Placement failed (not a refusal): nothing says the container does not fit."""
    return (f"Placement could not record the container's resources on host {host}: "
            f"{why}. Try again once Placement answers.")


def engine_refused(why: str) -> str:
    """``docker create`` (or the pull before it) failed in the engine."""
    return f"Docker could not create the container: {why}"


def reason_of(err: BaseException, host: str) -> tuple[str, bool] | None:
    """The reason a failed step gives the row, and whether the node refused the
    container (its host cleared); None: not a failure the row records (a flow's
    unplanned failure, which ``flows/unexpected.py`` words)."""
    if isinstance(err, StepFailed):
        return err.reason, err.clear_host
    if isinstance(err, exc.ResourcesUnavailable):
        return resources_unavailable(host, err.msg), True
    if isinstance(err, exc.ImageNotFound):
        return err.msg, False
    if isinstance(err, VOLUME_ERRORS):
        return err.msg, True
    if isinstance(err, rt.RuntimeDriverError):
        return engine_refused(err.msg), True
    return None


#: What ``errors_written`` asks of a failure: the row's reason and whether the node
#: refused the container, or None when the row does not record it.
ReasonOf = Callable[[BaseException, str], "tuple[str, bool] | None"]


@contextmanager
def errors_written(deps: AgentDeps, uuid: str, during: str, *,
                   reason_for: ReasonOf = reason_of, prefix: str = "",
                   keeps_host: bool = False) -> Iterator[None]:
    """Around a flow's ExitStack of steps (outside it, so that its undo has run): a
    failure's Error written with ``prefix`` and the reason ``reason_for`` gives, the
    host cleared when the node refused the container unless ``keeps_host``; then the
    node's usage published without it (a row in Error holds nothing), and the berth
    error a ``StepFailed`` carries raised. ``during`` names the flow in the log line
    of a row removed meanwhile."""
    try:
        yield
    except exc.ContainerNotFound:
        LOG.info("container %s: its row was removed during %s; undone", uuid, during)
        deps.tracker.publish_usage()
        raise
    except Exception as err:
        failure = reason_for(err, deps.host)
        if failure is not None:
            reason, host_cleared = failure
            common.fail(deps, uuid, prefix + reason,
                        **({"host": None} if host_cleared and not keeps_host else {}))
        deps.tracker.publish_usage()      # the claim may be gone with the row's change
        if isinstance(err, StepFailed):
            raise err.error from None
        raise
