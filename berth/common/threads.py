"""ElasticThreadPool: a ``concurrent.futures`` executor whose idle threads retire.

The standard library's ThreadPoolExecutor (and futurist's, which oslo.messaging's
threading executor is) keeps every thread it ever started. An agent's pools fill up
during a burst (100 creates start 16 action workers and 64 RPC threads) and then hold
them for the life of the process, each with some resident memory (31 threads retiring
on an agent freed 2.2 MiB, bench P6a). Here a thread that has waited ``idle_timeout`` seconds
without work exits; the next burst starts threads again (start and join of a
thread: ~0.2 ms here).

Accounting, under one lock: ``_unclaimed`` counts the jobs queued and not yet taken
by a thread, ``_waiting`` the threads waiting for a job (a thread just started counts
as waiting). ``submit`` starts a thread when the unclaimed jobs outnumber the waiting
threads and the bound allows; otherwise a waiting thread, or the next thread to finish
its job, takes it. A thread retires only when its wait timed out and no job is
unclaimed.

(The standard library counts idle threads with a semaphore released after every job,
also after a job that was queued at the bound and taken without one; there the count
grows too high but threads never exit, so the excess only delays. Here threads exit:
a stale count made ``submit`` trust an idle thread that had retired, and the job
waited forever. Hence the explicit counts.)
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[cf.Future, Callable[..., Any], tuple, dict]


class ElasticThreadPool(cf.Executor):
    def __init__(self, max_workers: int, thread_name_prefix: str = "worker",
                 idle_timeout: float = 30.0) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.idle_timeout = idle_timeout
        self._prefix = thread_name_prefix
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._unclaimed = 0
        self._waiting = 0
        self._threads: set[threading.Thread] = set()
        self._names = itertools.count()
        self._shutdown = False

    @property
    def num_threads(self) -> int:
        with self._lock:
            return len(self._threads)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> cf.Future[T]:
        future: cf.Future[T] = cf.Future()
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._jobs.put((future, fn, args, kwargs))
            self._unclaimed += 1
            if self._unclaimed > self._waiting and len(self._threads) < self.max_workers:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self._prefix}_{next(self._names)}")
                try:
                    thread.start()
                except BaseException:
                    # The process's thread limit, say: the job stays queued (and
                    # unclaimed) but cancelled, so whichever thread takes it skips it.
                    future.cancel()
                    raise
                self._threads.add(thread)
                self._waiting += 1            # until it takes its first job
        return future

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_timeout)
            except queue.Empty:
                with self._lock:
                    # A job put after the timeout is still unclaimed: stay for it.
                    if self._unclaimed == 0:
                        self._waiting -= 1
                        self._threads.discard(me)
                        return
                continue
            with self._lock:
                self._waiting -= 1
                if job is not None:
                    self._unclaimed -= 1
            if job is None:                     # shutdown: pass the word on
                self._jobs.put(None)
                with self._lock:
                    self._threads.discard(me)
                return
            future, fn, args, kwargs = job
            del job
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as err:  # noqa: BLE001 - handed to the future
                    future.set_exception(err)
                else:
                    future.set_result(result)
                    del result
            del future, fn, args, kwargs
            with self._lock:
                self._waiting += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._shutdown = True
            threads = list(self._threads)
            if cancel_futures:
                while True:
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        break
                    if job is not None:
                        self._unclaimed -= 1
                        job[0].cancel()
            self._jobs.put(None)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
