"""The API's memory of recent positive image checks (``[api]enable_image_validation``).

Each create asked the chosen node's agent, by a synchronous RPC call, whether it can
get the image, even when that node had said yes a moment before: at a few hundred
creates a second, that round trip was a fifth of the API's time (bench P15). A yes
is now remembered for ``ttl`` seconds per node, image, driver and registry; a no is
never remembered (the user may push the image and try again at once). The check is
advice anyway: a node that lost the image meanwhile pulls it by the create's policy,
or fails the create saying why, as it does when the check is off.

The memory is long (ten minutes): a spreading scheduler sends each create to another
node, so a node comes round again only after every other node has had its turn,
seconds at 100 nodes, a minute and more at 1,000. With a minute, 2,714 of an API
process's 2,820 creates in a profiled fill of 1,000 nodes asked their node again, a
quarter of its CPU (bench P15). What shortens it: an image removed through this API
process (``forget``).

Concurrent checks of one key make one call (``check``): a burst of creates of one
image on one node asked that node once each, all at once, and each answer made the
agent open an AMQP connection of its own to reply, which it kept (oslo.messaging's
send pool: 9 connections and 2 MiB of an agent's memory after a burst of 100 creates
ten at a time, bench P6a). The others wait for the first one's answer and take its
yes; after a no or a failure each asks on its own, as before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: What a yes is remembered by: the node, the image's reference (``ImageRef.ref``), the
#: image driver and the registry's uuid (None: the default registry).
Key = tuple[str, str, str, str | None]
#: Seconds a node's yes is trusted.
TTL = 600.0
#: Entries kept at most (the oldest go first).
MAX_ENTRIES = 10000


class RecentImageChecks:
    def __init__(self, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[Key, float] = {}
        self._asking: dict[Key, threading.Event] = {}   # set when the answer is in

    def known(self, key: Key) -> bool:
        with self._lock:
            return self._known(key)

    def _known(self, key: Key) -> bool:
        at = self._seen.get(key)
        if at is None:
            return False
        if self._clock() - at >= self._ttl:
            del self._seen[key]
            return False
        return True

    def check(self, key: Key, ask: Callable[[], bool]) -> bool:
        """Whether the node has the image: a remembered yes, or ``ask``'s answer
        (remembered when yes). While one caller asks for ``key``, others wait for its
        answer; a yes is theirs too, after a no or an error each of them asks itself
        (at once, not one after another: a node that does not answer would otherwise
        hold the last of them for every caller's timeout). ``ask``'s errors are
        raised to its caller."""
        with self._lock:
            if self._known(key):
                return True
            answered = self._asking.get(key)
            first = answered is None
            if first:
                answered = self._asking[key] = threading.Event()
        assert answered is not None
        if not first:
            answered.wait()
            if self.known(key):
                return True
            return self._ask(key, ask)
        try:
            return self._ask(key, ask)
        finally:
            with self._lock:
                del self._asking[key]
            answered.set()

    def _ask(self, key: Key, ask: Callable[[], bool]) -> bool:
        yes = ask()
        if yes:
            self.found(key)
        return yes

    def found(self, key: Key) -> None:
        with self._lock:
            if len(self._seen) >= MAX_ENTRIES:
                del self._seen[next(iter(self._seen))]
            self._seen.pop(key, None)
            self._seen[key] = self._clock()

    def forget(self, host: str, ref: str) -> None:
        """Drop what ``host`` said of the image ``ref`` (any driver and registry): it
        was asked to remove it."""
        with self._lock:
            for key in [k for k in self._seen if k[0] == host and k[1] == ref]:
                del self._seen[key]
