"""RecentImages: the images this agent saw present in its engine in the last few
seconds.

A create asks the engine about its image twice within milliseconds: the API's image
validation (``image_search`` with ``exact_match``) and then the create flow's pull
decision. The second answer is the first one again; remembering it for ``ttl``
seconds saves an engine round trip per create (bench P1), and the validations of
creates that follow within ``ttl`` (a burst of creates of one image) answer from it
too. A remembered answer can
be wrong only if the image was removed in between: ``docker create`` then says "No
such image" and the create flow asks the engine again (``forget``) before deciding
to pull. Pull policy ``always`` never reads from here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from berth.runtime.base import ImageInfo

#: Entries beyond which expired ones are dropped on the next ``remember``.
_PRUNE_AT = 256


class RecentImages:
    def __init__(self, ttl: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, ImageInfo]] = {}

    def remember(self, ref: str, info: ImageInfo) -> None:
        now = self._clock()
        with self._lock:
            if len(self._seen) >= _PRUNE_AT:
                self._seen = {k: v for k, v in self._seen.items() if now - v[0] < self._ttl}
            self._seen[ref] = (now, info)

    def get(self, ref: str) -> ImageInfo | None:
        """What the engine said of ``ref`` less than ``ttl`` seconds ago, or None."""
        with self._lock:
            entry = self._seen.get(ref)
            if entry is None:
                return None
            if self._clock() - entry[0] >= self._ttl:
                del self._seen[ref]
                return None
            return entry[1]

    def forget(self, ref: str | None = None) -> None:
        """Drop ``ref`` (every image when None: an image was removed or retagged)."""
        with self._lock:
            if ref is None:
                self._seen.clear()
            else:
                self._seen.pop(ref, None)
