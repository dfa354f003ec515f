"""``GET /dashboard/api/events``: the console's live list, as Server-Sent Events.

The stream speaks for the caller exactly as the list APIs do: ``container:get_all``
to open it, capsules only with ``capsule:get_all``; only the caller's project unless
``all_projects=true``, which needs ``container:get_all_all_projects`` (capsules
follow ``capsule:get_all_all_projects``, as their list); each container rendered by
the list's own view (``berth.api.views.listed_view``, the admin-only keys as
``container:get_one:<key>`` allows), each capsule by the capsule list's.

Events (``data`` is one JSON object)::

    snapshot  {"containers": [view, ...], "capsules": [view, ...]}   first, and again
              after the client fell behind (its queue of batches overflowed)
    changes   {"containers": [view, ...], "capsules": [view, ...],
               "deleted": [uuid, ...]}                                at most once a second
    : ping                                                            every 15 s of quiet

A stream ends when the caller's Keystone token expires (the console reconnects, and
a 401 sends it back to its login). Browsers' ``EventSource`` cannot send
``X-Auth-Token``; the console reads the stream with ``fetch``, so the token travels as
on every other call (and Keystone's middleware checks it before this runs).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from berth.api import microversions as mv
from berth.api.operations import capsules as capsule_ops
from berth.api.responses import dumps
from berth.api.state import ApiState
from berth.api.views import LIST_COLUMNS, listed_view, shown_keys
from berth.common.context import RequestContext
from berth.dashboard.watch import Batch, ChangeWatcher, Subscriber
from berth.db import capsules, containers
from berth.policies import enforcer as policy

PING_EVERY = 15.0
#: Rows a snapshot reads at most of each kind.
SNAPSHOT_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose rows a stream shows and how."""

    ctx: RequestContext
    project_id: str | None           # None: every project
    capsule_project_id: str | None
    shown: tuple[str, ...]
    #: ``capsule:get_all``: without it the stream carries containers only.
    capsules: bool = True
    #: When the caller's token expires (epoch seconds; None: never, as in noauth).
    expires_at: float | None = None

    def sees(self, project_id: str | None, kind: str) -> bool:
        if kind == "capsule" and not self.capsules:
            return False
        wanted = self.project_id if kind == "container" else self.capsule_project_id
        return wanted is None or wanted == project_id


def authorize(ctx: RequestContext, all_projects: bool, expires_at: float | None = None
              ) -> Scope:
    """The caller's scope; PolicyNotAuthorized (403) as the container list raises it.
    Capsules come along when the capsule list would answer the caller too."""
    policy.authorize(ctx, "container:get_all")
    if all_projects:
        policy.authorize(ctx, "container:get_all_all_projects")
    capsules_all = all_projects and policy.allows(ctx, "capsule:get_all_all_projects")
    return Scope(ctx, None if all_projects else ctx.project_id,
                 None if capsules_all else ctx.project_id, shown_keys(ctx),
                 capsules=policy.allows(ctx, "capsule:get_all"), expires_at=expires_at)


def snapshot(state: ApiState, scope: Scope) -> dict[str, Any]:
    """Every container and capsule the scope sees (a worker thread)."""
    rows = containers.list_columns(state.db, LIST_COLUMNS, project_id=scope.project_id,
                                   filters={}, limit=SNAPSHOT_LIMIT)
    caps = containers.list_rows(state.db, project_id=scope.capsule_project_id,
                                limit=SNAPSHOT_LIMIT, container_type=capsules.CAPSULE) \
        if scope.capsules else []
    return {"containers": [listed_view(r, shown=scope.shown) for r in rows],
            "capsules": capsule_ops.list_views(state, caps, ctx=scope.ctx,
                                               version=mv.MAX_VERSION)}


def render(state: ApiState, scope: Scope, batch: Batch) -> dict[str, Any] | None:
    """The part of ``batch`` the scope sees, rendered; None if nothing (a worker thread)."""
    seen = [c for c in batch.changes if scope.sees(c.project_id, c.kind)]
    if not seen:
        return None
    live = [c for c in seen if not c.deleted]
    rows = containers.list_columns_of(state.db, LIST_COLUMNS,
                                      [c.uuid for c in live if c.kind == "container"])
    caps = [r for r in containers.find_by_uuids(
        state.db, [c.uuid for c in live if c.kind == "capsule"])
        if r.container_type == capsules.CAPSULE]
    return {"containers": [listed_view(r, shown=scope.shown) for r in rows],
            "capsules": capsule_ops.list_views(state, caps, ctx=scope.ctx,
                                               version=mv.MAX_VERSION),
            "deleted": [c.uuid for c in seen if c.deleted]}


def event(name: str, data: dict[str, Any]) -> bytes:
    """One Server-Sent Event; ``data`` rendered as the API renders a response (a lone
    surrogate a stored row holds becomes U+FFFD, logged with the row's uuid)."""
    return b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"


async def events(state: ApiState, watcher: ChangeWatcher, scope: Scope
                 ) -> AsyncIterator[bytes]:
    """The stream's body; it ends when the client goes (Starlette cancels it)."""
    sub: Subscriber = watcher.subscribe()
    try:
        await watcher.baseline()
        yield event("snapshot", await anyio.to_thread.run_sync(snapshot, state, scope))
        while True:
            wait = PING_EVERY
            if scope.expires_at is not None:
                left = scope.expires_at - time.time()
                if left <= 0:
                    # The token is no longer good: end here; the console's reconnect
                    # is checked afresh (a 401 sends it back to its login).
                    return
                wait = min(wait, left)
            try:
                batch = await asyncio.wait_for(sub.queue.get(), wait)
            except TimeoutError:
                yield b": ping\n\n"
                continue
            if sub.overflowed:
                sub.overflowed = False
                while not sub.queue.empty():
                    sub.queue.get_nowait()
                yield event("snapshot", await anyio.to_thread.run_sync(snapshot, state,
                                                                       scope))
                continue
            rendered = await anyio.to_thread.run_sync(render, state, scope, batch)
            if rendered is not None:
                yield event("changes", rendered)
    finally:
        watcher.unsubscribe(sub)
