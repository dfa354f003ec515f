"""Talking netlink inside another network namespace, from one thread.

``setns(2)`` with ``CLONE_NEWNET`` moves only the calling thread, and a netlink socket
stays bound to the namespace it was created in. So ``iproute_in(path)`` enters the
namespace, opens a pyroute2 ``IPRoute`` there and comes straight back; the socket then
works from the host's namespace. pyroute2's own ``IPRoute(netns=...)`` forks a child
process for the same thing (and creates the namespace when it is missing), which a
threaded daemon should not do on every request.

A namespace is named by a path: ``/proc/<pid>/ns/net`` or ``/var/run/netns/<name>``
(a bare name means the latter, as ``ip netns`` does).

The process's own namespace is talked to through ``host_iproute()``: sessions kept
open between requests (``HostSessions``), because opening one costs pyroute2 its own
event loop and socket, about as much CPU as the two or three requests an attach or a
detach makes on the host.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from berth.network.base import NetnsNotFound, NetworkDriverError
from berth.network.netlink import IPRoute, NetlinkError

CLONE_NEWNET = 0x40000000
NETNS_RUN_DIR = "/var/run/netns"

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def netns_path(netns: str) -> str:
    return netns if "/" in netns else os.path.join(NETNS_RUN_DIR, netns)


@dataclass(frozen=True, slots=True)
class NetnsIdentity:
    """(device, inode) of a namespace: a ``/proc/<pid>/ns/net`` path can come to name
    another namespace when the pid is reused, its identity cannot."""

    dev: int
    ino: int

    def __str__(self) -> str:
        return f"{self.dev}:{self.ino}"

    @classmethod
    def parse(cls, text: str) -> NetnsIdentity:
        dev, ino = text.split(":")
        return cls(int(dev), int(ino))


def identity(netns: str) -> NetnsIdentity | None:
    """The namespace's identity, or None when the path names nothing;
    ``NetworkDriverError`` when it cannot be read (a path this process may not see)."""
    try:
        st = os.stat(netns_path(netns))
    except (FileNotFoundError, NotADirectoryError, ProcessLookupError):
        return None
    except OSError as exc:
        raise NetworkDriverError(reason=f"cannot read namespace {netns}: {exc}") from exc
    return NetnsIdentity(st.st_dev, st.st_ino)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def open_fd(netns: str) -> int:
    """An O_RDONLY descriptor of the namespace (the caller closes it)."""
    try:
        return os.open(netns_path(netns), os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError, ProcessLookupError) as exc:
        raise NetnsNotFound(netns=netns) from exc
    except OSError as exc:
        raise NetworkDriverError(reason=f"cannot open namespace {netns}: {exc}") from exc


@contextmanager
def _entered(fd: int, what: str) -> Iterator[None]:
    """This thread inside the namespace ``fd`` for the block, then back in its own
    (``NetworkDriverError`` naming ``what`` when it cannot enter; a thread that cannot
    come back would act in the wrong namespace, so the process aborts)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            _setns(fd)
        except OSError as exc:
            raise NetworkDriverError(reason=f"cannot enter {what}: {exc}") from exc
        try:
            yield
        finally:
            try:
                _setns(own)
            except OSError as exc:
                os.abort()
                raise AssertionError("unreachable") from exc
    finally:
        os.close(own)


def iproute_in(netns: str) -> IPRoute:
    """An ``IPRoute`` whose socket lives in ``netns``; close it when done.
    ``NetnsNotFound`` when the path names no namespace."""
    target = open_fd(netns)
    try:
        with _entered(target, netns):
            return IPRoute()
    finally:
        os.close(target)


def write_sysctl_in(fd: int, key: str, value: str) -> None:
    """Write ``value`` to ``/proc/sys/<key>`` (``net/ipv6/conf/eth0/disable_ipv6``:
    slashes, as an interface name may hold a dot) as the namespace ``fd`` sees it (a
    ``net.*`` setting is per namespace, and ``/proc/sys/net`` shows the one of the
    thread that opens it): this thread enters, opens, and comes back before writing."""
    with _entered(fd, f"a namespace to set {key}"):
        target = os.open("/proc/sys/" + key, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(target, value.encode())
    finally:
        os.close(target)


class HostSessions:
    """Netlink sessions in the process's own namespace, each used by one thread at a
    time and kept for the next request (at most ``idle_at_most`` of them idle). A
    session that leaves with an error other than the kernel's answer (a
    ``NetlinkError``: the socket is sound) is closed, not kept: a request cut short may
    have left its answer unread. pyroute2's ``IPRoute`` joins no multicast group, so an
    idle session gathers nothing. A forked child starts with none (the parent's
    sockets stay the parent's)."""

    def __init__(self, idle_at_most: int = 4) -> None:
        self._idle: list[IPRoute] = []
        self._lock = threading.Lock()
        self._idle_at_most = idle_at_most
        os.register_at_fork(after_in_child=self._idle.clear)

    @contextmanager
    def session(self) -> Iterator[IPRoute]:
        with self._lock:
            ipr = self._idle.pop() if self._idle else None
        if ipr is None:
            ipr = IPRoute()
        try:
            yield ipr
        except NetlinkError:
            self._keep(ipr)
            raise
        except BaseException:
            ipr.close()
            raise
        self._keep(ipr)

    def _keep(self, ipr: IPRoute) -> None:
        with self._lock:
            if len(self._idle) < self._idle_at_most:
                self._idle.append(ipr)
                return
        ipr.close()

    def close(self) -> None:
        """Close the idle sessions (the process keeps working: the next request opens
        one)."""
        with self._lock:
            idle = self._idle[:]
            self._idle.clear()
        for ipr in idle:
            ipr.close()


_HOST = HostSessions()


def host_iproute() -> AbstractContextManager[IPRoute]:
    """A netlink session in the process's own namespace for the block (kept for the
    next block afterwards). Not for a thread inside another namespace (``_entered``):
    a session it opened would live there."""
    return _HOST.session()
