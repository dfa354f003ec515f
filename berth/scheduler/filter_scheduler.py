"""The filter scheduler: every node that passes every enabled filter is a candidate;
the enabled weighers rank the candidates (``berth.scheduler.weighers``: by default
the node with the most free memory and cpu wins, so that containers spread over the
nodes; negative multipliers pack them instead).

Of the nodes of equal weight the first by name is chosen; with ``rng``, as
``berth-api`` builds it, one of them at random instead: API
processes scheduling from the same view would otherwise all choose the same node,
one after the other (a uniform fleet is all ties), and all but one be refused under
its lock (``node_claim``) and schedule again."""

from __future__ import annotations

import heapq
import itertools
import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager

from sqlalchemy import Connection

from berth.common import exceptions as exc
from berth.scheduler import host_state, node_claim
from berth.scheduler import weighers as weighing
from berth.scheduler.base import Filter, HostState, NodeLock, RequestSpec, Selection, Weigher
from berth.scheduler.filters.resource_filter import ResourceFilter
from berth.scheduler.host_cache import HostStateCache

LOG = logging.getLogger(__name__)


#: Runners-up a chosen node is weighed against again under its lock: enough to move
#: a burst off a node others just filled, without weighing the whole fleet (and
#: reading its usage) while the lock is held (bench P15: 1,000 nodes).
RUNNERS_UP_CHECKED = 8
#: The runners-up a Selection carries (``Selection.alternatives``).
ALTERNATIVES = RUNNERS_UP_CHECKED
#: Up to this many nodes every node that passes the filters is weighed; in a larger
#: fleet, a share of them (``nodes_to_weigh``: kube-scheduler's
#: ``minFeasibleNodesToFind`` and ``percentageOfNodesToScore``).
MIN_NODES_WEIGHED = 100


def nodes_to_weigh(nodes: int, percentage: int = 0) -> int:
    """How many of ``nodes`` that pass the filters a selection weighs: all of them up
    to ``MIN_NODES_WEIGHED``; above, ``percentage`` of them (0: adapted to the fleet,
    as kube-scheduler does, 50 % less a point for every 125 nodes, at least 5 %), and
    never fewer than ``MIN_NODES_WEIGHED`` (1,000 nodes: 420)."""
    if nodes <= MIN_NODES_WEIGHED or percentage >= 100:
        return nodes
    share = percentage if percentage > 0 else max(5, 50 - nodes // 125)
    return max(MIN_NODES_WEIGHED, nodes * share // 100)


_FITS = ResourceFilter()


def _weight_of(ranked: Sequence[tuple[float, HostState]], host: HostState) -> float:
    return next(w for w, h in ranked if h is host)


class FilterScheduler:
    """``hosts``: the nodes as they are; a :class:`HostStateCache` also learns what
    the room checks read and what this process placed. ``weighed_percentage``: the
    share of the nodes that pass the filters a selection weighs in a fleet of more
    than ``MIN_NODES_WEIGHED`` (``nodes_to_weigh``; ``[scheduler]
    percentage_of_nodes_to_score``)."""

    def __init__(self, hosts: Callable[[], Sequence[HostState]], filters: Sequence[Filter],
                 weighers: Sequence[Weigher] = (), rng: random.Random | None = None,
                 weighed_percentage: int = 0) -> None:
        self._hosts = hosts
        self._rng = rng
        self._weighed_percentage = weighed_percentage
        #: Where the next selection that weighs a share of the nodes begins, without
        #: ``rng`` (with it: at random); each begins where the one before stopped, so
        #: that every node is weighed as often.
        self._next_first = 0
        self._cache = hosts if isinstance(hosts, HostStateCache) else None
        self._filters = list(filters)
        self._weighers = list(weighers)
        self._counts_room = any(isinstance(f, ResourceFilter) for f in self._filters)

    def room_check(self, selection: Selection, spec: RequestSpec, *, best: bool = True,
                   lock: NodeLock | None = None
                   ) -> Callable[[Connection], None]:
        """ResourceFilter's check again, on the node's usage read under its lock
        (``node_claim``); nothing when ResourceFilter is not enabled (then the agent's
        claim and Placement alone refuse a node without room). With ``best`` and
        weighers, also NodeNoLongerBest when the node, as it is now, weighs less than
        another candidate as it is now that still has room (what concurrent requests
        placed since the scheduler's read; a tie keeps the choice); it carries that
        candidate as the next choice."""
        chosen = selection.state
        if not self._counts_room or chosen is None or not chosen.node_uuid:
            return lambda conn: None
        others = (selection.alternatives[:RUNNERS_UP_CHECKED]
                  if best and self._weighers else ())

        def check(conn: Connection) -> None:
            try:
                now = node_claim.fresh_fit(conn, chosen, spec, lock)
            except node_claim.NodeFilledMeanwhile as err:
                self._learn(err.now)
                raise
            self._learn(now)
            if not others:
                return
            # Against the others as they were read first (they have only filled up
            # since, in the common case: if the node still wins, it wins now), then,
            # only if it lost, against the others as they are.
            if self._better_than(now, others, spec) is None:
                return
            fresh = host_state.usages_now(conn, others)
            for host in fresh:
                self._learn(host)
            # Only those that still have room may take the choice over.
            ranked = weighing.weigh(
                [now, *(h for h in fresh if _FITS.passes(h, spec) is None)], spec,
                self._weighers)
            top = ranked[0][0]
            if ranked[0][1] is now or top <= _weight_of(ranked, now) + 1e-9:
                return
            # Of equal weights, one at random (``rng``): the requests that collided on
            # this node must not all move on to the same one.
            tied = [h for w, h in ranked if w >= top - 1e-9]
            best = tied[self._rng.randrange(len(tied))] if self._rng is not None else tied[0]
            raise node_claim.NodeNoLongerBest(chosen.hostname, best.hostname, Selection(
                host=best.hostname, state=best, view=selection.view,
                alternatives=tuple(h for _, h in ranked if h is not best)))

        return check

    def _learn(self, host: HostState | None) -> None:
        if self._cache is not None and host is not None:
            self._cache.learn(host)

    @contextmanager
    def holding(self, selection: Selection, spec: RequestSpec) -> Iterator[None]:
        """While the caller places a container of ``spec`` on ``selection``'s node,
        this process's next choices count it there (``HostStateCache.hold``), so that
        concurrent requests spread instead of all choosing that node."""
        if self._cache is None:
            yield
            return
        self._cache.hold(selection.host, spec)
        try:
            yield
        finally:
            self._cache.release(selection.host, spec)

    def placed(self, selection: Selection, spec: RequestSpec) -> None:
        """The row placing a container of ``spec`` on ``selection``'s node is committed."""
        if self._cache is not None:
            self._cache.placed(selection.host, spec, selection.view)

    def _first_weighed(self, nodes: int) -> int:
        """Where a selection that weighs a share of the ``nodes`` begins."""
        if self._rng is not None:
            return self._rng.randrange(nodes)
        return self._next_first % nodes

    def _better_than(self, chosen: HostState, others: Sequence[HostState],
                     spec: RequestSpec) -> str | None:
        """The host of ``others`` that outweighs ``chosen``, or None."""
        ranked = weighing.weigh([chosen, *others], spec, self._weighers)
        return ranked[0][1].hostname if ranked[0][0] > _weight_of(ranked, chosen) + 1e-9 \
            else None

    def forget_view(self) -> None:
        """Read the nodes afresh at the next request (their services changed)."""
        if self._cache is not None:
            self._cache.invalidate()

    def select_destination(self, spec: RequestSpec, exclude: Mapping[str, str] | None = None
                           ) -> Selection:
        try:
            return self._select(spec, exclude or {})
        except (exc.NoValidHost, exc.RequestedHostNotFound):
            if self._cache is None:
                raise
            # The cached view may be out of date (a service enabled, a node
            # registered since it was read): refuse only on a fresh read.
            self._cache.invalidate()
            return self._select(spec, exclude or {})

    def _select(self, spec: RequestSpec, exclude: Mapping[str, str]) -> Selection:
        view = self._cache.generation if self._cache is not None else -1
        hosts = list(self._hosts())
        if spec.requested_host:
            hosts = [h for h in hosts if h.hostname == spec.requested_host]
            if not hosts:
                raise exc.RequestedHostNotFound(host=spec.requested_host)
        if not hosts:
            raise exc.NoValidHost(
                "There are not enough hosts available: no compute node has registered. "
                "Start berth-compute (or berth serve) on a node.")
        # This loop and the weighing run for every create (bench P15: 1,000 nodes), so
        # they are kept plain: no generator per node, refusals formatted only when the
        # request fails, no full sort of the candidates. In a large fleet they stop
        # once enough nodes passed (``nodes_to_weigh``), the nodes taken in turn from
        # a point that moves on: the choice is the best of those, checked again
        # under the node's lock like any other.
        wanted = nodes_to_weigh(len(hosts), self._weighed_percentage)
        if wanted < len(hosts):
            first = self._first_weighed(len(hosts))
            hosts = hosts[first:] + hosts[:first]
        refused: list[tuple[str, str]] = []
        candidates: list[HostState] = []
        checks = [(f.name, f.passes) for f in self._filters if not f.skips(spec)]
        examined = 0
        for host in hosts:
            examined += 1
            if exclude and host.hostname in exclude:
                refused.append((host.hostname, exclude[host.hostname]))
                continue
            for name, passes in checks:
                why = passes(host, spec)
                if why is not None:
                    refused.append((host.hostname, f"{name}: {why}"))
                    break
            else:
                candidates.append(host)
                if len(candidates) >= wanted:
                    break
        if wanted < len(hosts) and self._rng is None:
            self._next_first = (self._next_first + examined) % len(hosts)
        if not candidates:
            detail = "; ".join(f"{name} ({why})" for name, why in refused)
            LOG.info("no node fits cpu=%g memory=%d MiB: %s", spec.cpu, spec.memory_mib, detail)
            raise exc.NoValidHost(f"There are not enough hosts available. {detail}")
        totals = weighing.weights(candidates, spec, self._weighers)
        top = max(totals)
        tied = [i for i, w in enumerate(totals) if w >= top - 1e-9]
        if self._rng is not None:
            best_at = tied[self._rng.randrange(len(tied))] if len(tied) > 1 else tied[0]
        else:
            best_at = min(tied, key=lambda i: candidates[i].hostname)
        best = candidates[best_at]
        # The runners-up the room check weighs the choice against, best first; of
        # equal weights, with ``rng``, from a point chosen at random (other processes
        # reading the same view must not all fall back on the same few nodes).
        n = len(candidates)
        if self._rng is not None:
            # nlargest keeps the order it was given among equal keys: the ties in turn
            # from ``start`` (one more taken, in case the choice is among them).
            start = self._rng.randrange(n) if n > 1 else 0
            others = [i for i in heapq.nlargest(
                ALTERNATIVES + 1, itertools.chain(range(start, n), range(start)),
                key=totals.__getitem__) if i != best_at][:ALTERNATIVES]
        else:
            others = heapq.nsmallest(ALTERNATIVES, (i for i in range(n) if i != best_at),
                                     key=lambda i: (-totals[i], candidates[i].hostname))
        if others and LOG.isEnabledFor(logging.DEBUG):
            LOG.debug("weighed %d nodes; chose %s=%.3f over %s", len(candidates),
                      best.hostname, totals[best_at],
                      ", ".join(f"{candidates[i].hostname}={totals[i]:.3f}" for i in others))
        return Selection(host=best.hostname, state=best,
                         alternatives=tuple(candidates[i] for i in others), view=view)
