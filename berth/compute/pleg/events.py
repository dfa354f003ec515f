"""The value PLEG emits: "something happened to this container; look at it again"."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from berth.runtime.base import EventKind

__all__ = ["ContainerEvent", "EventKind", "EventSource"]


class EventSource(enum.StrEnum):
    WATCH = "watch"      # the engine's event stream
    RELIST = "relist"    # a difference between two listings


@dataclass(frozen=True, slots=True)
class ContainerEvent:
    """One change seen on one berth container.

    ``kind`` is a hint for logs and metrics: a sync always re-inspects the container
    its row points at, since events may arrive late, twice, or coalesced. A "die" from
    the stream carries its ``exit_code``, which lets the sync say Stopped before
    Docker answers that inspect (``compute.flows.sync.Death``).
    ``at`` is the PLEG clock (monotonic seconds) when the change was observed.
    """

    uuid: str
    container_id: str
    kind: EventKind
    source: EventSource
    at: float
    action: str = ""     # the engine's own action word, when it came from the stream
    #: The engine's own time for it (ns since the epoch), when it came from the stream.
    engine_at_ns: int | None = None
    #: The state a relist found it in (``last_inspected.state_key``), for a
    #: difference between two listings; None for a container to re-inspect.
    listed: tuple[str, int | None] | None = None
    #: A "die" from the stream: the exit code the engine's event gave.
    exit_code: int | None = None
