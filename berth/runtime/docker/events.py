"""Following Docker's event stream for berth's containers.

:class:`EventStream` wraps the SDK's ``CancellableStream`` of decoded event dicts and
yields :class:`RuntimeEvent`. Which Docker action means what::

    start                       STARTED
    die                         DIED      the process ended (exit, kill, OOM): the one signal
    pause / unpause             PAUSED / UNPAUSED
    destroy                     REMOVED
    oom, kill, stop             CHANGED   each is followed by "die" if the process ends;
                                          a "kill" with a non-fatal signal ends nothing
    create, rename, update,     CHANGED   worth a re-inspect
    restart, health_status: …
    attach, exec_*, top, …      dropped   read-only actions that change nothing berth
                                          records; a re-inspect for each would be waste

The stream ends silently: when the connection breaks, the engine stops, or
:meth:`EventStream.close` is called from another thread, iteration just stops (no
exception). The caller relists and reconnects with ``since_nano`` = the last
``at_nano`` it saw; the engine's ``since`` is inclusive, so that event comes again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import docker.errors
import requests.exceptions
import urllib3.exceptions

from berth.runtime.base import EventKind, RuntimeEvent, uuid_of
from berth.runtime.docker.convert import from_nano

LOG = logging.getLogger(__name__)

_KINDS: dict[str, EventKind] = {
    "start": EventKind.STARTED,
    "die": EventKind.DIED,
    "pause": EventKind.PAUSED,
    "unpause": EventKind.UNPAUSED,
    "destroy": EventKind.REMOVED,
}

#: Actions that never change a container's configuration or state. A "kill" is a
#: signal sent: when it ends the process a "die" follows, when not nothing changed;
#: its sync would only wait for Docker's post-exit clean-up and keep the die (which
#: says Stopped at once, ``compute.flows.sync``) queued behind it.
_IGNORED = frozenset(
    {"attach", "detach", "resize", "top", "export", "copy", "commit",
     "archive-path", "extract-to-dir", "kill"}
)

#: What a broken or closed stream raises while being read.
_STREAM_ERRORS = (
    OSError,
    ValueError,
    requests.exceptions.RequestException,
    urllib3.exceptions.HTTPError,
    docker.errors.DockerException,
)


def kind_of(action: str) -> EventKind | None:
    """The :class:`EventKind` of a Docker action word, None for actions to drop."""
    base = action.split(":", 1)[0].strip()
    if base in _IGNORED or base.startswith("exec_"):
        return None
    return _KINDS.get(base, EventKind.CHANGED)


def since_param(since_nano: int) -> str:
    """``since_nano`` in the engine's ``since`` syntax: ``"<seconds>.<nanoseconds>"``."""
    seconds, nanos = divmod(since_nano, 1_000_000_000)
    return f"{seconds}.{nanos:09d}"


def event_from_docker(raw: Mapping[str, Any]) -> RuntimeEvent | None:
    """One decoded Docker event as a :class:`RuntimeEvent`; None for events that are not
    about a container or that :func:`kind_of` drops."""
    if raw.get("Type", "container") != "container":
        return None
    action = str(raw.get("Action") or raw.get("status") or "")
    kind = kind_of(action)
    actor = raw.get("Actor") or {}
    container_id = actor.get("ID") or raw.get("id")
    if kind is None or not container_id:
        return None
    attributes = actor.get("Attributes") or {}
    nanos = int(raw.get("timeNano") or int(raw.get("time") or 0) * 1_000_000_000)
    return RuntimeEvent(
        container_id=str(container_id),
        uuid=uuid_of(attributes, attributes.get("name")),
        kind=kind,
        action=action,
        at=from_nano(nanos),
        at_nano=nanos,
        exit_code=_exit_code(attributes) if kind == EventKind.DIED else None,
    )


def _exit_code(attributes: Mapping[str, Any]) -> int | None:
    """A "die" event's ``exitCode`` attribute, None when absent or not a number."""
    try:
        return int(attributes["exitCode"])
    except (KeyError, TypeError, ValueError):
        return None


class EventStream(Iterator[RuntimeEvent]):
    """An open event stream: iterate it in one thread, :meth:`close` it from any other.
    Iteration ends (StopIteration, never an error) when the stream breaks or is closed."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._closed = threading.Event()

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> RuntimeEvent:
        while not self._closed.is_set():
            try:
                raw = next(self._stream)
            except StopIteration:
                break
            except _STREAM_ERRORS as exc:
                if not self._closed.is_set():
                    LOG.info("Docker event stream broke: %s", exc)
                break
            event = event_from_docker(raw) if isinstance(raw, Mapping) else None
            if event is not None and event.uuid is not None:   # berth's or Zun's
                return event
        self.close()
        raise StopIteration

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self) -> None:
        """Stop the stream; a thread blocked in ``next()`` returns. Safe to call twice."""
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._stream.close()
        except (*_STREAM_ERRORS, AttributeError) as exc:  # the engine closed it first
            LOG.debug("closing the Docker event stream: %s", exc)
