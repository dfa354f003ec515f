"""PLEG: the agent's container lifecycle event generator (after kubelet's ``pleg/``).

It owns *noticing* what changed in the engine, not acting on it::

    Docker event stream ──► EventWatcher ──┐
                                           ├──► EventQueue (bounded; drops and counts)
    docker ps, every relist_period ─► Relister ┘         │
                                                         ▼
                                        handler (the agent's SyncWorkers, which run
                                        ``compute.flows.sync``: inspect + write)

- :mod:`.events`: :class:`ContainerEvent`, the one value that crosses from here.
- :mod:`.watcher`: follows the engine's event stream; when it ends, asks for a relist and
  reconnects with back-off and ``since`` = the last event seen.
- :mod:`.relist`: lists this host's containers, diffs against the previous snapshot and
  emits the differences; a failed step keeps the old record so the next relist sees the
  change again.
- :mod:`.generator`: the queue, the threads, ``start``/``stop``/``healthy``.
"""

from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.compute.pleg.generator import EventGenerator, EventQueue, PlegSettings
from berth.compute.pleg.relist import ContainerRecord, Relister
from berth.compute.pleg.watcher import Backoff, EventWatcher

__all__ = [
    "Backoff",
    "ContainerEvent",
    "ContainerRecord",
    "EventGenerator",
    "EventQueue",
    "EventSource",
    "EventWatcher",
    "PlegSettings",
    "Relister",
]
