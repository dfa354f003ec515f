"""Concurrent writers against one project's quota, as several API workers and agents
make them: each ``Database`` stands for a process of its own (its own engine and
pool), and every writer runs on a thread of its own, released at once by a barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from berth.common import exceptions as exc
from berth.db import containers
from berth.db.engine import Database
from berth.quota import QuotaEnforcer

PROJECT = "race"


def _race(count: int, attempt: Callable[[int], None]) -> tuple[int, int, list[BaseException]]:
    """Run ``attempt(i)`` for ``count`` threads at once: (done, refused, other errors)."""
    barrier = threading.Barrier(count)
    lock = threading.Lock()
    outcome = {"done": 0, "refused": 0}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        barrier.wait()
        try:
            attempt(i)
        except exc.OverQuota:
            with lock:
                outcome["refused"] += 1
            return
        except BaseException as err:  # noqa: BLE001 - reported to the test
            with lock:
                errors.append(err)
            return
        with lock:
            outcome["done"] += 1

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return outcome["done"], outcome["refused"], errors


def race_creates(dbs: Sequence[Database], quota: QuotaEnforcer, count: int
                 ) -> tuple[int, int, list[BaseException]]:
    """``count`` creates of a container (cpu 0.1, memory 16) in PROJECT at once, spread
    over ``dbs``, each checked by ``quota`` in its insert's transaction."""
    deltas = {"containers": 1, "cpu": 0.1, "memory": 16, "disk": 0}

    def create(i: int) -> None:
        containers.create(dbs[i % len(dbs)], {
            "project_id": PROJECT, "cpu": 0.1, "memory": "16", "status": "Creating",
            "name": f"race-{i}"},
            guard=lambda conn: quota.check(conn, PROJECT, deltas))

    return _race(count, create)


def race_growth(dbs: Sequence[Database], quota: QuotaEnforcer, uuids: Sequence[str],
                cpu: float) -> tuple[int, int, list[BaseException]]:
    """Each container of ``uuids`` (cpu 1.0 now) grown to ``cpu`` at once, each update
    checked by ``quota`` in its own transaction (what an agent's resize claim does)."""
    deltas = {"cpu": cpu - 1.0}

    def grow(i: int) -> None:
        containers.update_(dbs[i % len(dbs)], uuids[i], {"cpu": cpu},
                           guard=lambda conn: quota.check(conn, PROJECT, deltas))

    return _race(len(uuids), grow)


def creates_never_exceed(dbs: Sequence[Database], quota: QuotaEnforcer) -> None:
    """50 creates at once under a quota of 10 containers: exactly 10 succeed."""
    from berth.db import quotas as db_quotas

    db_quotas.set_project_limits(dbs[0], PROJECT, {"containers": 10})
    done, refused, errors = race_creates(dbs, quota, 50)
    assert errors == []
    assert (done, refused) == (10, 40)
    assert db_quotas.project_usage(dbs[-1], PROJECT)["containers"] == 10


def growth_never_exceeds(dbs: Sequence[Database], quota: QuotaEnforcer) -> None:
    """12 containers of 1 cpu grown to 2 at once under a quota of 16 cpus: 4 succeed."""
    from berth.db import quotas as db_quotas

    uuids = [containers.create(dbs[0], {"project_id": PROJECT, "cpu": 1.0, "memory": "16",
                                        "status": "Running", "name": f"g{i}"}).uuid
             for i in range(12)]
    db_quotas.set_project_limits(dbs[0], PROJECT, {"cpu": 16})
    done, refused, errors = race_growth(dbs, quota, uuids, 2.0)
    assert errors == [] and (done, refused) == (4, 8)
    assert db_quotas.project_usage(dbs[-1], PROJECT)["cpu"] == 16
