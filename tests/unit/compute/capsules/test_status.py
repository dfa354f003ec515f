"""A capsule's status derived from its sandbox and members (berth.compute.capsules.status)."""

from __future__ import annotations

import pytest

from berth.compute.capsules.status import derive
from berth.compute.states import Status
from berth.db.models import Container


def member(name: str, status: Status, reason: str | None = None) -> Container:
    return Container(uuid=f"uuid-{name}", name=name, status=status.value,
                     status_reason=reason)


RUNNING = member("web", Status.RUNNING)
DONE = member("job", Status.STOPPED)
CODES = {"uuid-job": 0, "uuid-other": 0, "uuid-db": 137}


@pytest.mark.parametrize("members,status,words", [
    ([RUNNING, member("db", Status.RUNNING)], Status.RUNNING, None),
    ([RUNNING, DONE], Status.RUNNING, None),
    ([DONE, member("other", Status.STOPPED)], Status.STOPPED, None),
    ([RUNNING, member("db", Status.STOPPED)], Status.ERROR, "db exited (137)"),
    ([RUNNING, member("db", Status.ERROR, reason="No such container")], Status.ERROR,
     "db is Error: No such container"),
    ([RUNNING, member("db", Status.RESTARTING)], Status.RESTARTING, None),
])
def test_members_decide_while_the_sandbox_runs(members: list[Container], status: Status,
                                               words: str | None) -> None:
    derived = derive(True, members, CODES)
    assert derived.status == status
    assert (derived.reason is None) if words is None else (words in (derived.reason or ""))


def test_a_stopped_sandbox_is_an_error_whatever_the_members_say() -> None:
    derived = derive(False, [RUNNING], {})
    assert derived.status == Status.ERROR and "sandbox stopped" in (derived.reason or "")
