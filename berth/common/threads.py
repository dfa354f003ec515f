"""ElasticThreadPool: a ``concurrent.futures`` executor whose idle threads retire.

The standard library's ThreadPoolExecutor (and futurist's, which oslo.messaging's
threading executor is) keeps every thread it ever started. An agent's pools fill up
during a burst (100 creates start 16 action workers and 64 RPC threads) and then hold
them for the life of the process, each with some resident memory (31 threads retiring
on an agent freed 2.2 MiB, bench P6a). Here a thread that has waited ``idle_timeout`` seconds
without work exits; the next burst starts threads again (start and join of a
thread: ~0.2 ms here).

Accounting is the standard library's: a thread that finishes a job releases one
"idle" token; ``submit`` takes a token (an idle thread will pick the job up) or, when
there is none, starts a thread while below ``max_workers``, or else queues the job
for the next free thread. A thread retires only if it can take a token back, i.e.
only if no submitter is counting on an idle thread to run its job.
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
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
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
            if not self._idle.acquire(blocking=False) and len(self._threads) < self.max_workers:
                thread = threading.Thread(target=self._work, daemon=True,
                                          name=f"{self._prefix}_{next(self._names)}")
                self._threads.add(thread)
                thread.start()
        return future

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_timeout)
            except queue.Empty:
                with self._lock:
                    # Retire only when no submitter took this thread's idle token.
                    if self._idle.acquire(blocking=False):
                        self._threads.discard(me)
                        return
                continue
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
            self._idle.release()

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
                        job[0].cancel()
            self._jobs.put(None)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()
