"""Every metric berth exports, declared once, on prometheus-client's default registry
(so that ``berth serve``, one process, shows the API's and the agent's together).

docs/monitoring.md's table is made from these declarations (tests/docs/metrics_table.py
writes it; the docs tests fail while it differs). Labels take
values from small closed sets only (route *templates*, never raw paths; method names;
a handful of results), so that no client can grow the number of series.

The helpers below are what the seams call; each costs a few microseconds (a lock and
an add per metric), and the request one caches its label children, because it runs
on every API request (bench P1, P5)::

    API middleware      observe_request(method, route, status, seconds)
    flows               timed_action("stop"), create_phase("pull")
    RPC client          timed_rpc("container_show", "call")
    state syncs         count_sync(source, outcome)
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import REGISTRY, Counter, Gauge, Histogram, disable_created_metrics

from berth.common.exceptions import BerthError, RPCError, RPCTimeout
from berth.metrics.queues import QueueDepths

# No ``*_created`` series: they double what a scrape reads and nothing here needs them.
disable_created_metrics()

#: Sub-second work (API requests, relists, RPC): 1 ms to 10 s.
FAST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Work that waits for the engine or a registry (actions, pulls): 10 ms to 10 min.
SLOW_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
                600.0)

# -- API ---------------------------------------------------------------------------

API_REQUESTS = Counter(
    "berth_api_requests", "API requests answered, by method, route template and status.",
    ["method", "route", "status"])
API_REQUEST_SECONDS = Histogram(
    "berth_api_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by method and route "
    "template.", ["method", "route"], buckets=FAST_BUCKETS)

# -- the agent's actions --------------------------------------------------------------

ACTIONS = Counter(
    "berth_compute_actions", "Container actions the agent carried out, by action and "
    "result (success or error).", ["action", "result"])
ACTION_SECONDS = Histogram(
    "berth_compute_action_duration_seconds", "How long the agent's container actions "
    "took, by action.", ["action"], buckets=SLOW_BUCKETS)
CREATE_PHASE_SECONDS = Histogram(
    "berth_compute_create_phase_duration_seconds", "The phases of a create: pull (make "
    "the image present), create (docker create), start (docker start, create with run), "
    "by phase and result (ok or error).", ["phase", "result"], buckets=SLOW_BUCKETS)

# -- PLEG and state syncs ------------------------------------------------------------

PLEG_EVENTS = Counter(
    "berth_pleg_events", "Container events PLEG queued, by source (watch: the engine's "
    "event stream; relist: a difference between two listings).", ["source"])
PLEG_EVENTS_DROPPED = Counter(
    "berth_pleg_events_dropped", "Container events dropped because PLEG's queue was full "
    "(the next relist makes up for them).")
PLEG_EVENT_LAG_SECONDS = Histogram(
    "berth_pleg_event_lag_seconds", "Delay between the engine's time of an event and its "
    "arrival at the agent (events replayed after a reconnect count their whole gap).",
    buckets=FAST_BUCKETS + (30.0, 60.0, 300.0))
PLEG_STREAM_RECONNECTS = Counter(
    "berth_pleg_stream_reconnects", "Times the agent opened the engine's event stream "
    "again after it ended or could not be opened.")
PLEG_STREAM_CONNECTED = Gauge(
    "berth_pleg_stream_connected", "1 while the agent follows the engine's event stream.")
PLEG_RELIST_SECONDS = Histogram(
    "berth_pleg_relist_duration_seconds", "How long one relist (list, diff, queue) took.",
    buckets=FAST_BUCKETS)
PLEG_RELIST_FAILURES = Counter(
    "berth_pleg_relist_failures", "Relists whose listing failed (the engine did not answer).")
STATE_SYNC_CORRECTIONS = Counter(
    "berth_state_sync_corrections", "Rows a state sync changed to match the engine, by what "
    "noticed it (watch, relist, periodic) and outcome (updated, deleted, healed, error).",
    ["source", "outcome"])

# -- queues, periodic tasks, RPC, allocation audit -------------------------------------

QUEUE_DEPTH_HELP = ("Work waiting or running, by queue: actions (containers with an "
                    "action running or queued), state_sync (containers with a sync "
                    "running or waiting), pleg_events (events waiting for dispatch).")
PERIODIC_RUNS = Counter(
    "berth_periodic_task_runs", "Runs of the agent's periodic tasks, by task.", ["task"])
PERIODIC_FAILURES = Counter(
    "berth_periodic_task_failures", "Runs of the agent's periodic tasks that failed, by task.",
    ["task"])
PERIODIC_SECONDS = Histogram(
    "berth_periodic_task_duration_seconds", "How long a periodic task's run took, by task.",
    ["task"], buckets=SLOW_BUCKETS)
RPC_SECONDS = Histogram(
    "berth_rpc_client_duration_seconds", "Time the API's casts and calls to an agent took, "
    "by method, kind (cast or call) and result (ok; refused: the agent answered with an "
    "error; timeout; error: not delivered).", ["method", "kind", "result"],
    buckets=FAST_BUCKETS + (30.0, 60.0))
ALLOCATION_CORRECTIONS = Counter(
    "berth_allocation_audit_corrections", "Placement allocations the audit put right, by "
    "correction (released: nothing holds it; allocated: set to what the row holds).",
    ["correction"])
ALLOCATION_AUDIT_FAILURES = Counter(
    "berth_allocation_audit_failures", "Allocation audits and checks that could not reach "
    "Placement (the next audit tries again).")

# -- helpers ---------------------------------------------------------------------------

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
#: (method, route, status) -> its two label children. Bounded: methods x routes x statuses.
_REQUEST_CHILDREN: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """One answered API request. ``route`` must be a template (or ``unmatched``)."""
    if method not in _METHODS:
        method = "OTHER"
    key = (method, route, status)
    children = _REQUEST_CHILDREN.get(key)
    if children is None:
        children = (API_REQUESTS.labels(method, route, str(status)),
                    API_REQUEST_SECONDS.labels(method, route))
        _REQUEST_CHILDREN[key] = children
    children[0].inc()
    children[1].observe(seconds)


class ActionResult:
    """What :func:`timed_action` yields: call :meth:`fail` on a failure branch that
    returns instead of raising."""

    __slots__ = ("failed",)

    def __init__(self) -> None:
        self.failed = False

    def fail(self) -> None:
        self.failed = True


@contextmanager
def timed_action(action: str) -> Iterator[ActionResult]:
    """Count and time one action; an exception out of the block is an error."""
    result = ActionResult()
    began = time.perf_counter()
    try:
        yield result
    except BaseException:
        result.failed = True
        raise
    finally:
        ACTIONS.labels(action, "error" if result.failed else "success").inc()
        ACTION_SECONDS.labels(action).observe(time.perf_counter() - began)


def action_name(event: str) -> str:
    """The action of a Zun action event: ``compute__do_container_stop`` -> ``stop``,
    ``compute__add_security_group`` -> ``add_security_group``."""
    name = event.removeprefix("compute__")
    return name.removeprefix("do_container_").removeprefix("do_")


@contextmanager
def create_phase(phase: str) -> Iterator[None]:
    """Time one phase of a create (pull, create, start)."""
    began = time.perf_counter()
    result = "error"
    try:
        yield
        result = "ok"
    finally:
        CREATE_PHASE_SECONDS.labels(phase, result).observe(time.perf_counter() - began)


@contextmanager
def timed_rpc(method: str, kind: str) -> Iterator[None]:
    """Time one cast or call to an agent (see RPC_SECONDS for the results)."""
    began = time.perf_counter()
    result = "error"
    try:
        yield
        result = "ok"
    except RPCTimeout:
        result = "timeout"
        raise
    except RPCError:
        raise
    except BerthError:
        result = "refused"
        raise
    finally:
        RPC_SECONDS.labels(method, kind, result).observe(time.perf_counter() - began)


def count_sync(source: str, outcome: str, times: int = 1) -> None:
    """A state sync's outcome; only the ones that changed a row are counted."""
    if outcome in ("updated", "deleted", "healed", "error"):
        STATE_SYNC_CORRECTIONS.labels(source, outcome).inc(times)


def observe_event_lag(engine_at_ns: int, now_ns: int | None = None) -> None:
    """An event the engine timed ``engine_at_ns`` arrived now (never negative: the
    engine's clock may be a little ahead)."""
    now = time.time_ns() if now_ns is None else now_ns
    PLEG_EVENT_LAG_SECONDS.observe(max(0, now - engine_at_ns) / 1e9)


QUEUE_DEPTHS = QueueDepths("berth_compute_queue_depth", QUEUE_DEPTH_HELP,
                           ("actions", "state_sync", "pleg_events"))
REGISTRY.register(QUEUE_DEPTHS)
