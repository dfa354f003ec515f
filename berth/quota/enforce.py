"""Quota enforcement: a request that grows a project's usage is refused when
``usage + delta > limit`` for a resource it grows (-1: unlimited).

A check and the write that grows the usage must be one atomic step, or concurrent
requests all pass the check against the same usage (50 concurrent creates under a
quota of 10 made 16 rows). So :meth:`QuotaEnforcer.check` runs inside the writer's
own transaction, on its connection, just before its write: it takes the project's
quota lock (``berth.db.quotas.lock_project``), then reads the limits and the usage,
and the write that follows commits with the lock still held. This holds for any
number of API workers and agents on PostgreSQL, MariaDB and SQLite::

    API create          BEGIN ─► lock project ─► limits, usage ─► INSERT row ─► COMMIT
    agent resize        BEGIN ─► lock project ─► limits, usage ─► UPDATE row ─► COMMIT
    another create               └─ waits ──────────────────────────────────────┘ then reads

A limit is, first found wins: the project's own ``quotas`` row, the quota class
``default``, the ``[quota]`` option. Usage is summed over the project's containers and
capsules (``berth.db.quotas.project_usage``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import Connection

from berth.common import exceptions as exc
from berth.db import quotas as db_quotas

LOG = logging.getLogger(__name__)

RESOURCES = db_quotas.RESOURCES


def overs(limits: Mapping[str, int], usage: Mapping[str, int | float],
          deltas: Mapping[str, int | float]) -> list[str]:
    """The resources that ``deltas`` would take over their limit (pure)."""
    return [r for r in limited_growth(limits, deltas)
            if usage[r] + (deltas.get(r, 0) or 0) > limits[r] + 1e-9]


def limited_growth(limits: Mapping[str, int], deltas: Mapping[str, int | float]
                   ) -> list[str]:
    """The resources that ``deltas`` grow and that have a limit (-1: unlimited)."""
    return [r for r in RESOURCES if (deltas.get(r, 0) or 0) > 0 and limits[r] >= 0]


def over_quota(project_id: str, limits: Mapping[str, int],
               usage: Mapping[str, int | float], deltas: Mapping[str, int | float],
               over: list[str]) -> exc.OverQuota:
    """The 403 for ``over``, saying what is used, what was asked and what to do."""
    detail = "; ".join(f"{r}: {usage[r]:g} in use + {deltas[r]:g} requested > limit "
                       f"{limits[r]}" for r in over)
    LOG.info("project %s over quota: %s", project_id, detail)
    return exc.OverQuota(
        f"Quota exceeded for resources: {over!r}. Project {project_id} has {detail}. "
        f"Delete containers you no longer need or ask for less, or ask an admin to raise "
        f"the quota (zun quota-update).", overs=over)


@dataclass(frozen=True, slots=True)
class QuotaEnforcer:
    """``defaults``: the ``[quota]`` options (containers, memory, cpu, disk)."""

    defaults: Mapping[str, int] = field(default_factory=lambda: dict(
        db_quotas.CONFIG_DEFAULTS))

    def layered(self, *layers: Mapping[str, int]) -> dict[str, int]:
        """The ``[quota]`` defaults with each of ``layers`` over them, in order."""
        out = {r: int(self.defaults.get(r, db_quotas.CONFIG_DEFAULTS[r])) for r in RESOURCES}
        for layer in layers:
            out.update(layer)
        return {r: out[r] for r in RESOURCES}

    def limits_on(self, conn: Connection, project_id: str) -> dict[str, int]:
        return self.layered(*db_quotas.class_and_project_limits_on(
            conn, db_quotas.DEFAULT_CLASS, project_id))

    def check(self, conn: Connection, project_id: str | None,
              deltas: Mapping[str, int | float], *, lock: bool = True,
              limits: Mapping[str, int] | None = None) -> Mapping[str, int] | None:
        """OverQuota (403) when ``deltas`` do not fit in ``project_id``'s quota, read on
        ``conn``. ``lock``: take the project's quota lock first, so that the caller's
        write on ``conn`` that follows is atomic with this check (see the module
        docstring); without it, an early refusal that saves the work before the write.
        ``limits``: the project's limits as an earlier check of the same request read
        them (the lock guards the usage, not the limits), so that they are not read
        again. Returns the limits it went by (None without a project)."""
        if project_id is None:
            return None
        if limits is None:
            limits = self.limits_on(conn, project_id)
        if not limited_growth(limits, deltas):
            return limits   # nothing limited grows: no lock, no need to sum the usage
        if lock:
            db_quotas.lock_project(conn, project_id)
        usage = db_quotas.project_usage_on(conn, project_id)
        over = overs(limits, usage, deltas)
        if over:
            raise over_quota(project_id, limits, usage, deltas, over)
        return limits
