"""``PortStatusPoller``: Zun's ``poll_vif_status``, one Neutron request per node.

While at least one VIF waits to become ACTIVE, the poller lists the ports bound to
this host once a tick (one ``GET /v2.0/ports?binding:host_id=<host>``, however many
VIFs wait) and wakes each waiter whose port is ACTIVE. With no waiter it makes no
request. A failed listing is logged once (and its recovery once); the waiters keep
waiting, and time out as they would on a port that never comes up.

A tick is ``interval`` (Zun's second), except while a VIF has waited less than
``quick_window`` seconds: then ``quick_interval``. The OVS agent binds a plugged
port within a second or two, and a one-second tick made every create wait half a
second on average past that (bench P14); a port still DOWN after the window is
waiting on something slow, and is asked about once a second as in Zun.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger(__name__)

ACTIVE = "ACTIVE"


class PortStatusPoller:
    def __init__(self, list_statuses: Callable[[], dict[str, str]], interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, quick_interval: float = 0.2,
                 quick_window: float = 5.0) -> None:
        self._list, self.interval, self._clock = list_statuses, interval, clock
        self.quick_interval, self.quick_window = min(quick_interval, interval), quick_window
        self._cond = threading.Condition()
        self._waiting: dict[str, threading.Event] = {}
        self._since: dict[str, float] = {}     # when each waiter began
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._failing = False
        #: Listings made (the tests and the bench read it).
        self.requests = 0

    def wait_active(self, port_id: str, timeout: float) -> bool:
        """Whether the port became ACTIVE within ``timeout`` seconds."""
        event = threading.Event()
        with self._cond:
            self._waiting[port_id] = event
            self._since[port_id] = self._clock()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="vif-status",
                                                daemon=True)
                self._thread.start()
            self._cond.notify_all()
        try:
            return event.wait(timeout)
        finally:
            with self._cond:
                if self._waiting.get(port_id) is event:
                    del self._waiting[port_id]
                    del self._since[port_id]

    def tick(self, now: float) -> float:
        """The time to the next listing: quick while a waiter is new (the lock held)."""
        youngest = max(self._since.values(), default=None)
        if youngest is not None and now - youngest < self.quick_window:
            return self.quick_interval
        return self.interval

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def poll_once(self) -> None:
        with self._cond:
            if not self._waiting:
                return
        try:
            statuses = self._list()
        except Exception as err:  # noqa: BLE001 - the loop outlives one failed listing
            if not self._failing:
                LOG.error("cannot read port statuses from Neutron (%s); retrying every "
                          "%s s while interfaces wait", err, self.interval)
            self._failing = True
            return
        finally:
            self.requests += 1
        if self._failing:
            LOG.info("Neutron answers the port status poll again")
        self._failing = False
        with self._cond:
            for port_id, event in self._waiting.items():
                if statuses.get(port_id) == ACTIVE:
                    event.set()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._waiting and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
            started = self._clock()
            self.poll_once()
            with self._cond:   # new waiters wait for the next tick: one listing a tick
                while not self._stopped:
                    rest = self.tick(started) - (self._clock() - started)
                    if rest <= 0:
                        break
                    self._cond.wait(rest)
