"""logs, top, stats, archives, commit: RPC calls (rpc-compute.md §2), each answering
the API with JSON-able data.

The read-only calls and the archive copies run in the RPC thread, not on the
container's worker (Zun's calls do not take the container lock either), so ``logs``
still answers while a slow action runs. ``container_commit`` changes the status
(Paused while committing), so it runs on the container's worker, after the actions
queued before it, and the call waits for it.

Argument values arrive as the API normalised them (api/operations/inspection.py);
the coercions here only accept the same values in the shapes another Zun-speaking
sender would use (numeric strings, ``"all"``, ``"None"``).
"""

from __future__ import annotations

from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute.endpoints import EndpointBase, Wire, uuid_of
from berth.compute.flows import archives, commit, inspection


def _tail(value: Any) -> int | None:
    """None for all lines, else a count of lines."""
    if value is None or value in ("all", "None"):
        return None
    if isinstance(value, bool):
        raise exc.InvalidParameterValue(err=f"Invalid tail {value!r}: a number of lines or 'all'.")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise exc.InvalidParameterValue(
            err=f"Invalid tail {value!r}: a number of lines or 'all'.") from None
    if number < 0:
        raise exc.InvalidParameterValue(err=f"Invalid tail {value!r}: it must be 0 or more.")
    return number


def _since(value: Any) -> float | None:
    """Epoch seconds, or None for the whole log."""
    if value is None or value == "None":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise exc.InvalidParameterValue(
            err=f"Invalid since {value!r}: epoch seconds expected.") from None


class InspectionEndpoints(EndpointBase):
    METHODS = frozenset({"container_logs", "container_top", "container_stats",
                         "container_get_archive", "container_put_archive",
                         "container_commit"})

    def container_logs(self, context: Wire, container: Wire, stdout: bool = True,
                       stderr: bool = True, timestamps: bool = False, tail: Any = "all",
                       since: Any = None) -> str:
        with container_context(uuid_of(container)):
            return inspection.container_logs(
                self._deps, uuid_of(container), stdout=bool(stdout), stderr=bool(stderr),
                timestamps=bool(timestamps), tail=_tail(tail), since=_since(since))

    def container_top(self, context: Wire, container: Wire, ps_args: str | None = None
                      ) -> Wire:
        args = None if ps_args in (None, "None", "") else str(ps_args)
        with container_context(uuid_of(container)):
            return inspection.container_top(self._deps, uuid_of(container), args)

    def container_stats(self, context: Wire, container: Wire) -> Wire:
        with container_context(uuid_of(container)):
            return inspection.container_stats(self._deps, uuid_of(container))

    def container_get_archive(self, context: Wire, container: Wire, path: str,
                              encode_data: bool = True) -> list[Any]:
        with container_context(uuid_of(container)):
            return archives.container_get_archive(self._deps, uuid_of(container), str(path),
                                                  bool(encode_data))

    def container_put_archive(self, context: Wire, container: Wire, path: str, data: Any,
                              decode_data: bool = True) -> None:
        with container_context(uuid_of(container)):
            archives.container_put_archive(self._deps, uuid_of(container), str(path), data,
                                           bool(decode_data))

    def container_commit(self, context: Wire, container: Wire, repository: str,
                         tag: str | None = None) -> Wire:
        ctx = RequestContext.from_dict(context)
        uuid = uuid_of(container)
        tag = "latest" if tag in (None, "None", "") else str(tag)
        result: Wire = self._in_turn(uuid, "commit", commit.container_commit, self._deps,
                                     ctx, uuid, str(repository), tag)
        return result
