"""The deadline of a status the API writes before it casts (design.md item 4).

A create writes its row (Creating), and a reboot, a rebuild, an evacuation and a delete
change the row's status on the API side (Restarting, Rebuilding, Deleting); then they
cast to the node's agent. The agent's
flow takes the row with a task of its own, whose deadline replaces this one, and
clears both when it ends. A cast that never arrives (the broker lost it, or the
agent's consumer died holding it) would leave the row in that status with nothing to
move it on; so the API writes, with the status, a ``task_deadline`` and no
``task_state``: a request on its way. The owning agent repairs a row whose such
deadline has passed (``compute/periodic/lost_casts.py``); the state syncs leave the
row alone until then (``compute/flows/sync.skip_reason``).

The deadline is ``[compute]task_state_timeout`` away, as long as any task may last:
the cast may wait behind the container's earlier work in its agent.

The status and the request's action record are one commit (``written_with_actions``):
a database that goes away between two commits would leave the status written without
the cast that moves it on (a 503 for the user, and the row Deleting until the
deadline) — seen in the database-outage test (R3).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from berth.api.state import ApiSettings, ApiState
from berth.common.context import RequestContext
from berth.db import actions, containers
from berth.db.base import utcnow
from berth.db.containers import Expect
from berth.db.models import Container


def awaited(settings: ApiSettings, values: dict[str, Any],
            now: dt.datetime | None = None) -> dict[str, Any]:
    """``values`` (a status change) with the deadline of the cast that follows; None
    when ``[compute]task_state_timeout`` is 0 or less (no deadline, as for tasks)."""
    seconds = settings.task_state_timeout
    deadline = None if seconds <= 0 else (now or utcnow()) + dt.timedelta(seconds=seconds)
    return {**values, "task_deadline": deadline}


def written_with_actions(state: ApiState, ctx: RequestContext, uuid: str,
                         values: dict[str, Any], recorded: tuple[str, ...],
                         expect: Expect = containers.ANYTHING) -> Container:
    """``values`` (a status change, given its deadline here) written to the row and
    the request's ``recorded`` actions begun, in one transaction; ``expect`` as
    ``containers.update_``'s (a compare-and-swap). Returns the row as written."""
    row, _ = containers.update_with(
        state.db, uuid, awaited(state.settings, values),
        lambda s: s.add_all([actions.new_action(ctx, uuid, name) for name in recorded]),
        expect=expect)
    return row
