"""``AttachmentSyncer``: the daemon's sync pass on a timer (Zun's ``sync_containers``).

Every ``interval`` seconds it runs ``CniService.sync`` (attachments whose namespace is
gone, orphan veths, missing rules). A failing pass is logged once, and its recovery
once, so a broken host does not fill the log every minute.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger(__name__)


class AttachmentSyncer:
    def __init__(self, sync: Callable[[], int], interval: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, name: str = "CNI sync pass",
                 did: str = "removed %d leftover(s)") -> None:
        self._sync, self.interval, self._clock = sync, interval, clock
        #: What the logs call the pass, and say of what a pass did.
        self.name, self.did = name, did
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = False
        self.last_success: float | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.name.replace(" ", "-"),
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Safe to call twice, and before ``start``."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=10)

    @property
    def failing(self) -> bool:
        return self._failing

    def healthy(self) -> bool:
        """A pass succeeded within two intervals."""
        return (self.last_success is not None
                and self._clock() - self.last_success < 2 * self.interval)

    def run_once(self) -> None:
        try:
            removed = self._sync()
        except Exception:  # the loop outlives one bad pass
            if not self._failing:
                LOG.exception("%s failed; retrying every %s s", self.name, self.interval)
            self._failing = True
            return
        if self._failing:
            LOG.info("%s works again", self.name)
        self._failing = False
        self.last_success = self._clock()
        if removed:
            LOG.info("%s " + self.did, self.name, removed)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.run_once()
