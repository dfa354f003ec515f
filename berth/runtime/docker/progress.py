"""Aggregating ``docker pull``'s per-layer JSON stream into one progress figure.

The engine sends one message per layer and step (``Pulling fs layer``, ``Downloading``
with ``progressDetail``, ``Download complete``, ``Extracting``, ``Pull complete`` or
``Already exists``), often dozens a second. :class:`PullTracker` folds them into a
:class:`PullProgress` and reports it at most once per ``interval`` seconds, plus once
at the end, to a callback and to the log.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.runtime.base import PullProgress

LOG = logging.getLogger(__name__)

#: Statuses after which a layer is on disk.
_DONE = frozenset({"pull complete", "already exists"})
#: Statuses after which the layer's bytes are all downloaded.
_DOWNLOADED = frozenset({"download complete", "verifying checksum", "extracting"}) | _DONE


@dataclass
class _Layer:
    status: str = ""
    current: int = 0
    total: int = 0


class PullTracker:
    """Folds one pull's stream messages; not thread-safe (one per pull)."""

    def __init__(
        self,
        image: str,
        callback: Callable[[PullProgress], None] | None = None,
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.image = image
        self._callback = callback
        self._interval = interval
        self._clock = clock
        self._layers: dict[str, _Layer] = {}
        self._status = "starting"
        self._last_report: float | None = None
        self.reports = 0

    def feed(self, message: Mapping[str, Any]) -> None:
        """Account for one stream message and report if the interval has passed."""
        status = str(message.get("status") or "")
        layer_id = message.get("id")
        if status:
            self._status = status
        if layer_id and not status.startswith("Pulling from"):
            self._update_layer(str(layer_id), status, message.get("progressDetail") or {})
        now = self._clock()
        if self._last_report is None or now - self._last_report >= self._interval:
            self._report(now)

    def finish(self) -> PullProgress:
        """Report the final figure (always) and return it."""
        return self._report(self._clock())

    def snapshot(self) -> PullProgress:
        """The progress so far."""
        layers = self._layers.values()
        return PullProgress(
            image=self.image,
            status=self._status,
            layers_done=sum(1 for layer in layers if layer.status in _DONE),
            layers_total=len(self._layers),
            bytes_done=sum(layer.current for layer in layers),
            bytes_total=sum(layer.total for layer in layers),
        )

    def _update_layer(self, layer_id: str, status: str, detail: Mapping[str, Any]) -> None:
        layer = self._layers.setdefault(layer_id, _Layer())
        layer.status = status.lower()
        if layer.status == "downloading":
            layer.total = int(detail.get("total") or layer.total)
            layer.current = int(detail.get("current") or layer.current)
        elif layer.status in _DOWNLOADED:
            layer.current = layer.total

    def _report(self, now: float) -> PullProgress:
        self._last_report = now
        self.reports += 1
        progress = self.snapshot()
        LOG.info(
            "pulling %s: %d/%d layers, %.1f/%.1f MB (%s)",
            progress.image,
            progress.layers_done,
            progress.layers_total,
            progress.bytes_done / 1e6,
            progress.bytes_total / 1e6,
            progress.status,
        )
        if self._callback is not None:
            self._callback(progress)
        return progress
