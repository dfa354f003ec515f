"""The resource steps the flows that make a container share (create, capsule create,
rebuild): one module per resource, each a ``Step`` whose ``acquire`` takes the
resource and whose ``release`` gives it back, composed by each flow on one
``contextlib.ExitStack`` so that a failure at any step undoes, in reverse, what the
steps before it acquired::

    with ExitStack() as undo:
        take(undo, Claim(deps, row))          # claim.py: the node's cpu and memory
        take(undo, Allocation(deps, row))     # allocation.py: the record in Placement
        take(undo, Volumes(deps, ctx, [uuid]))   # volumes.py: waited for, attached
        take(undo, EngineContainer(...))      # engine_container.py: docker create
        ...
        undo.pop_all()                        # made: nothing to undo

The contract every step keeps (as Nomad's allocation-runner hooks do):

- ``release`` is idempotent and safe without ``acquire``, or after an ``acquire``
  that failed half-way: ``take`` registers it before acquiring, so a step that
  fails is undone too.
- ``release`` never raises a berth error: what it cannot give back now is logged
  with what gives it back later (a delete, the start-up reconciliation, the state
  sync). The ExitStack runs every release even if one raises all the same.
- ``acquire`` raises ``failures.StepFailed`` with the one reason the row gets for
  that failure (``failures.py`` holds every wording), or a failure the flow maps
  with ``failures.reason_of``.

The network reservation (create with run) and the image pull are not steps here:
only create reserves networks before the start (``flows/network_step.py``), and a
pull holds nothing to give back (``compute/image_puller.py``).
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Protocol, TypeVar


class Step(Protocol):
    """One resource a flow takes and, on failure, gives back."""

    def acquire(self) -> None:
        """Take the resource; ``failures.StepFailed`` (or a failure
        ``failures.reason_of`` words) when it cannot be had."""

    def release(self) -> None:
        """Give back what ``acquire`` took. Idempotent, safe without ``acquire`` or
        after a failed one, and raises no berth error (a failure is logged)."""


S = TypeVar("S", bound=Step)


def take(undo: ExitStack, step: S) -> S:
    """Acquire ``step`` with its release registered on ``undo`` first, so that a
    failure in ``acquire`` itself, or in any later step, releases it."""
    undo.callback(step.release)
    step.acquire()
    return step
