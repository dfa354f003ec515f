"""Talking netlink inside another network namespace, from one thread.

``setns(2)`` with ``CLONE_NEWNET`` moves only the calling thread, and a netlink socket
stays bound to the namespace it was created in. So ``iproute_in(path)`` enters the
namespace, opens a pyroute2 ``IPRoute`` there and comes straight back; the socket then
works from the host's namespace. pyroute2's own ``IPRoute(netns=...)`` forks a child
process for the same thing (and creates the namespace when it is missing), which a
threaded daemon should not do on every request.

A namespace is named by a path: ``/proc/<pid>/ns/net`` or ``/var/run/netns/<name>``
(a bare name means the latter, as ``ip netns`` does).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pyroute2 import IPRoute

from berth.network.base import NetnsNotFound, NetworkDriverError

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
