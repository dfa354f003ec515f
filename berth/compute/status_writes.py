"""Every write of a row's ``status`` (containers, capsules and their members; the
agent's flows and the API's), named by what it does, each checked against the one
table of moves, ``states.TRANSITIONS``. "Who can put a row in Error?" is a grep for
``mark_error``; a raw ``{"status": ...}`` anywhere else fails
``tests/unit/compute/test_status_writes.py``.

A move outside the table is logged (a warning naming the row, the move and the write)
and made anyway, not refused: Zun refuses none of its row writes (its agent writes
Error wherever a flow fails, its sync copies whatever Docker says), and a refused
write would leave a row in a status Zun would never show, such as Creating for ever.
The table holds every move berth's flows make; a logged move is a bug to fix.

``was`` is the status the writer read (None: it read none, and the move is not
checked; ``NEW_ROW``: the row is being inserted). A compare-and-swap on one status
(``Expect.status``) is the status read.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from berth.compute.states import Status, transition_allowed
from berth.db import capsules, containers
from berth.db.containers import ANYTHING, Expect
from berth.db.engine import Database
from berth.db.models import Container

LOG = logging.getLogger(__name__)

#: ``was`` of a row being inserted (its first status).
NEW_ROW = "(new row)"


def check(uuid: str | None, was: str | None, to: str, by: str) -> bool:
    """Whether moving ``uuid`` from ``was`` to ``to`` is in the table; a move that is
    not is logged. ``by``: which write moves it, for the log."""
    if was is None or transition_allowed(None if was == NEW_ROW else was, to):
        return True
    LOG.warning("container %s moved from %s to %s by %s: a move outside "
                "berth.compute.states.TRANSITIONS (written anyway, as Zun would)",
                uuid, was if was != NEW_ROW else "nothing (a new row)", to, by)
    return False


def status_values(to: str, *, was: str | None, uuid: str | None, by: str,
                  **columns: Any) -> dict[str, Any]:
    """The columns of a write that moves ``uuid`` to ``to`` (a ``Status``; checked) along with
    ``columns``, for a writer that adds its own (an insert, a task hand-over, an
    action record in the same commit). ``uuid`` is None for a row not made yet."""
    check(uuid, was, to, by)
    return {"status": str(to), **columns}


def _expected_status(was: str | None, expect: Expect) -> str | None:
    wanted = expect.status
    return was if wanted is containers.ANY or not isinstance(wanted, str) else wanted


def write(db: Database, uuid: str, to: Status, *, was: str | None, by: str,
          columns: Mapping[str, Any] | None = None,
          expect: Expect = ANYTHING) -> Container:
    """Move ``uuid`` to ``to`` with ``columns`` (``containers.update_``; ``expect``: its
    compare-and-swap)."""
    check(uuid, _expected_status(was, expect), to, by)
    return containers.update_(db, uuid, {"status": to.value, **(columns or {})},
                              expect=expect)


def mark_error(db: Database, uuid: str, reason: str, *, was: str | None = None,
               columns: Mapping[str, Any] | None = None,
               expect: Expect = ANYTHING) -> Container:
    """``uuid`` in Error saying ``reason`` (what went wrong, what to do)."""
    return write(db, uuid, Status.ERROR, was=was, by="mark_error",
                 columns={"status_reason": reason, **(columns or {})}, expect=expect)


def mark_deleted(db: Database, uuid: str, *, was: str | None,
                 expect: Expect = ANYTHING) -> Container:
    """``uuid`` Deleted: the engine removed its container itself (auto_remove)."""
    return write(db, uuid, Status.DELETED, was=was, by="mark_deleted",
                 columns={"status_detail": None}, expect=expect)


def mark_deleting(db: Database, uuid: str, *, was: str | None,
                  columns: Mapping[str, Any] | None = None,
                  expect: Expect = ANYTHING) -> Container:
    """``uuid`` Deleting: a delete is on its way or under way."""
    return write(db, uuid, Status.DELETING, was=was, by="mark_deleting",
                 columns=columns, expect=expect)


def mark_rebuilding(db: Database, uuid: str, *, was: str | None,
                    columns: Mapping[str, Any] | None = None,
                    expect: Expect = ANYTHING) -> Container:
    return write(db, uuid, Status.REBUILDING, was=was, by="mark_rebuilding",
                 columns=columns, expect=expect)


def mark_paused(db: Database, uuid: str, *, was: str | None,
                expect: Expect = ANYTHING) -> Container:
    """``uuid`` Paused, as a commit leaves a container it had to pause."""
    return write(db, uuid, Status.PAUSED, was=was, by="mark_paused", expect=expect)


def mark_derived(db: Database, uuid: str, to: Status, reason: str | None, *,
                 was: str | None, expect: Expect = ANYTHING) -> Container:
    """A capsule's status derived again from its sandbox and members."""
    return write(db, uuid, to, was=was, by="mark_derived",
                 columns={"status_reason": reason}, expect=expect)


def members_in_error(db: Database, capsule: Container, reason: str,
                     columns: Mapping[str, Any] | None = None) -> None:
    """Every member of ``capsule`` in Error saying ``reason`` (one write; whatever their
    status, as a failed capsule's members all are: Error is reached from any)."""
    capsules.update_members(db, capsule.id, {"status": Status.ERROR.value,
                                             "status_reason": reason, **(columns or {})})


def engine_state(row: Container, changed: Mapping[str, Any]) -> None:
    """Check the status the engine's state maps to (``status_mapping``), which the
    writer (``flows.common.apply_runtime_state``) writes with its other columns."""
    if "status" in changed:
        check(row.uuid, row.status, changed["status"], "the engine's state")
