"""The filter scheduler: every node that passes every enabled filter is a candidate;
the one with the most free memory wins (then the most free cpu, then the name), so
containers spread over the nodes."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from berth.common import exceptions as exc
from berth.scheduler.base import Filter, HostState, RequestSpec, Selection

LOG = logging.getLogger(__name__)


class FilterScheduler:
    def __init__(self, hosts: Callable[[], Sequence[HostState]], filters: Sequence[Filter]
                 ) -> None:
        self._hosts = hosts
        self._filters = list(filters)

    def select_destination(self, spec: RequestSpec) -> Selection:
        hosts = list(self._hosts())
        if spec.requested_host:
            hosts = [h for h in hosts if h.hostname == spec.requested_host]
            if not hosts:
                raise exc.RequestedHostNotFound(host=spec.requested_host)
        if not hosts:
            raise exc.NoValidHost(
                "There are not enough hosts available: no compute node has registered. "
                "Start berth-compute (or berth serve) on a node.")
        refused: list[str] = []
        candidates: list[HostState] = []
        for host in hosts:
            why = next((f"{f.name}: {r}" for f in self._filters
                        if (r := f.passes(host, spec)) is not None), None)
            if why is None:
                candidates.append(host)
            else:
                refused.append(f"{host.hostname} ({why})")
        if not candidates:
            detail = "; ".join(refused)
            LOG.info("no node fits cpu=%g memory=%d MiB: %s", spec.cpu, spec.memory_mib, detail)
            raise exc.NoValidHost(f"There are not enough hosts available. {detail}")
        best = max(candidates, key=lambda h: (h.free_memory_mib, h.free_cpu, h.hostname))
        return Selection(host=best.hostname)
