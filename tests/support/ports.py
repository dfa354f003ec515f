"""Loopback ports for the servers a test starts (berth serve, a CNI daemon, a registry).

Binding port 0 and closing the socket gives a port that is free at that instant, and
the kernel may give the same one to the next such ask: CI once saw a ``berth serve``
handed one port for its console proxy and its CNI daemon, so it exited at start and
52 capsule tests errored. The kernel also takes ports of that range (32768-60999) for
every outgoing connection, so a picked port can be taken before its server binds it.

So ports come from below that range, from a band of this process's own (by xdist
worker), in turn (a port comes back only after the band's other 3,000 have been
handed out), and only after a bind shows that nobody holds them.
"""

from __future__ import annotations

import os
import socket
import threading

#: Below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 here).
_FIRST, _LAST = 20000, 32767
#: Fixed ports of the services the suite runs there (RabbitMQ's inter-node port), which
#: may be free for a moment while an outage test has the service stopped.
_RESERVED = frozenset({25672})
_BANDS = 4

_lock = threading.Lock()
_next: int | None = None


def _band_start() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    band = (int(worker) if worker.isdigit() else 0) % _BANDS
    width = (_LAST - _FIRST + 1) // _BANDS
    # Processes of one band (a test and the bench beside it) start at different offsets.
    return _FIRST + band * width + (os.getpid() * 37) % (width // 2)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nobody holds now and that this process has not handed out."""
    global _next
    width = (_LAST - _FIRST + 1) // _BANDS
    with _lock:
        if _next is None:
            _next = _band_start()
        band_first = _FIRST + ((_next - _FIRST) // width) * width
        for _ in range(width):
            port = _next
            _next = band_first + (_next + 1 - band_first) % width
            if port not in _RESERVED and _bindable(port):
                return port
    raise RuntimeError(f"no free loopback port left in {band_first}-{band_first + width - 1}")
