"""``[api]workers``: berth-api as several worker processes on one listening socket.

The parent binds the socket, then forks the workers; each worker builds its own
database engine, RPC transport and application after the fork (a connection pool or
a broker connection must never be shared across a fork) and serves with uvicorn on
the inherited socket, where the kernel hands each new connection to one of them. The
workers share nothing but the database and the broker, so one node's API scales with
its cores; every check that must hold across workers (quota, a node's room) is made
in the database (``berth.quota``, ``berth.scheduler.node_claim``).

The parent only supervises: SIGTERM or SIGINT stops every worker (each finishes its
requests: uvicorn's graceful shutdown) and the parent exits 0. A worker that dies on
its own is started again after ``RESTART_DELAY``, unless workers keep dying (more than
``MAX_RESTARTS`` within ``RESTART_WINDOW`` seconds): then the parent stops the others
and exits 1, so that the service manager sees the failure instead of a restart loop.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from types import FrameType

from berth.metrics import multiproc

LOG = logging.getLogger(__name__)

MAX_RESTARTS = 5
RESTART_WINDOW = 60.0
#: Seconds before a worker that died is started again.
RESTART_DELAY = 1.0


def listen(host: str, port: int) -> socket.socket:
    """The API's listening socket, bound before any worker starts (so that a port in
    use fails the command at once, not in every worker)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class Supervisor:
    """Forks ``count`` workers running ``serve(index)`` (whose return value is the
    worker's exit status) and keeps them running until stopped."""

    def __init__(self, count: int, serve: Callable[[int], int]) -> None:
        self._count = count
        self._serve = serve
        self._workers: dict[int, int] = {}     # pid -> worker index
        self._stopping = False
        self._restarts: list[float] = []

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self._stop) for sig in (signal.SIGTERM,
                                                                    signal.SIGINT)}
        try:
            for index in range(self._count):
                self._start(index)
            return self._supervise()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _start(self, index: int) -> None:
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:                               # the worker
            status = 1
            try:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(sig, signal.SIG_DFL)
                _stop_with_parent(parent)
                status = self._serve(index)
            except BaseException:   # the worker's last word, whatever it is
                LOG.exception("berth-api worker %d failed", index)
            finally:
                logging.shutdown()
                os._exit(status)
        self._workers[pid] = index
        LOG.info("berth-api worker %d started (pid %d)", index, pid)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        if not self._stopping:
            LOG.info("berth-api stopping its %d workers (%s)", len(self._workers),
                     signal.Signals(signum).name)
        self._stopping = True
        for pid in list(self._workers):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def _supervise(self) -> int:
        failed = False
        while self._workers:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            index = self._workers.pop(pid, None)
            if index is None:
                continue
            multiproc.mark_dead(pid)
            code = os.waitstatus_to_exitcode(status)
            if self._stopping:
                LOG.info("berth-api worker %d (pid %d) stopped (%d)", index, pid, code)
                continue
            LOG.error("berth-api worker %d (pid %d) exited on its own with %d", index, pid,
                      code)
            now = time.monotonic()
            self._restarts = [t for t in self._restarts if now - t < RESTART_WINDOW] + [now]
            if len(self._restarts) > MAX_RESTARTS:
                LOG.error("berth-api workers died %d times within %g s; stopping the others "
                          "(see the errors above)", len(self._restarts), RESTART_WINDOW)
                failed = True
                self._stop(signal.SIGTERM, None)
                continue
            time.sleep(RESTART_DELAY)
            if not self._stopping:
                self._start(index)
        return 1 if failed else 0


_PR_SET_PDEATHSIG = 1


def _stop_with_parent(parent: int) -> None:
    """Have the kernel send this worker SIGTERM when the supervisor dies, even by
    SIGKILL (Linux's PR_SET_PDEATHSIG), so that no worker goes on holding the port
    alone; exit at once if the supervisor is already gone."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        return              # not Linux: the service manager stops the workers
    if os.getppid() != parent:
        os._exit(0)
