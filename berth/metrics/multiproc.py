"""prometheus-client's multiprocess mode for ``berth-api`` with several ``[api]workers``.

Each worker process counts its own requests; a scrape reaches one worker, picked by
the kernel, so a plain ``/metrics`` would show that worker's counters alone. In
multiprocess mode every worker writes its values to memory-mapped files in one
directory (``PROMETHEUS_MULTIPROC_DIR``), and ``/metrics`` answers with the sum over
the files of every worker that has lived in this run (``MultiProcessCollector``)::

    supervisor   enable(dir): empty dir ─► fork workers ─► a worker died: mark_dead(pid)
    worker N     requests ─► counter_<pid>.db, histogram_<pid>.db in dir
    /metrics     registry(): MultiProcessCollector(dir) ─► sums over every <pid> file

The directory is the run's own: emptied when the supervisor starts (files of an
earlier run would add their old counts) and removed when it stops. The value class
is chosen before the first worker forks; the API's metrics all have labels, so their
values are made in the workers, after the switch. prometheus-client's ``process_*``
and ``python_*`` metrics are per process and are not in the multiprocess answer.
"""

from __future__ import annotations

import os
import shutil

from prometheus_client import REGISTRY, CollectorRegistry, multiprocess, values

ENV = "PROMETHEUS_MULTIPROC_DIR"


def enable(directory: str) -> None:
    """Switch this process (and the workers it forks from now on) to multiprocess
    metrics in ``directory``, emptied first."""
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            path = os.path.join(directory, name)
            if os.path.isdir(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
    os.makedirs(directory, exist_ok=True)
    os.environ[ENV] = directory
    values.ValueClass = values.get_value_class()


def enabled() -> bool:
    return bool(os.environ.get(ENV))


def registry() -> CollectorRegistry:
    """What ``/metrics`` renders: every worker's values summed in multiprocess mode,
    else this process's own registry."""
    if not enabled():
        return REGISTRY
    merged = CollectorRegistry()
    multiprocess.MultiProcessCollector(merged)
    return merged


def mark_dead(pid: int) -> None:
    """A worker exited: its live gauges go (its counters keep counting in the sum)."""
    if enabled():
        multiprocess.mark_process_dead(pid)


def remove(directory: str) -> None:
    """The run is over: its files go with it."""
    shutil.rmtree(directory, ignore_errors=True)
