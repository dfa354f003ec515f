"""Helpers for the lifecycle-action functional tests: containers made through
python-zunclient and removed afterwards, and a look at berth's database (the action
log and the rows as stored, without the refresh a GET does)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import docker
import docker.errors

from berth.db import actions, containers
from berth.db.engine import Database, default_url
from berth.db.models import ContainerAction
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

SLEEPER = ["sleep", "300"]


@contextlib.contextmanager
def database_of(proc: BerthProcess) -> Iterator[Database]:
    """berth's own SQLite database (the process keeps running; WAL allows a reader)."""
    db = Database(default_url(str(proc.dir / "state")))
    try:
        yield db
    finally:
        db.dispose()


def row_of(proc: BerthProcess, uuid: str) -> Any:
    """The container's row in ``proc``'s database, or None."""
    with database_of(proc) as db:
        return containers.find_by_uuid(db, uuid)


def settled_row(proc: BerthProcess, uuid: str, status: str) -> Any:
    """The row once it is ``status`` with no task (or None while it is not)."""
    row = row_of(proc, uuid)
    return row if row is not None and row.status == status and not row.task_state else None


class Made:
    """Containers a test created; ``cleanup`` removes them from berth and Docker."""

    def __init__(self, zun: Any, docker_client: docker.DockerClient) -> None:
        self.zun = zun
        self.docker = docker_client
        self.uuids: list[str] = []

    def create(self, command: list[str] | None = None, run: bool = True,
               **kwargs: Any) -> str:
        fn = self.zun.containers.run if run else self.zun.containers.create
        c = fn(image=TEST_IMAGE, command=command or SLEEPER,
               image_pull_policy="ifnotpresent", **kwargs)
        self.uuids.append(c.uuid)
        wait_for(lambda: settled(self.zun, c.uuid, "Running" if run else "Created"), 60,
                 what=f"container {c.uuid} to be {'Running' if run else 'Created'}")
        return str(c.uuid)

    def inspect(self, uuid: str) -> dict[str, Any]:
        return self.docker.api.inspect_container(f"zun-{uuid}")

    def cleanup(self) -> None:
        for uuid in self.uuids:
            with contextlib.suppress(docker.errors.NotFound):
                self.docker.api.remove_container(f"zun-{uuid}", force=True)
            with contextlib.suppress(Exception):
                self.zun.containers.delete(uuid, force=True)


def settled(zun: Any, uuid: str, status: str) -> bool:
    """The container shows ``status`` and no task is running on it."""
    c = zun.containers.get(uuid)
    return bool(c.status == status and c.task_state is None)


def last_action(db: Database, uuid: str, name: str) -> ContainerAction | None:
    for action in actions.list_actions(db, uuid):
        if action.action == name:
            return action
    return None


def wait_action(db: Database, uuid: str, name: str, count: int = 1,
                timeout: float = 60) -> tuple[ContainerAction, dict[str, str | None]]:
    """Wait until the ``count``-th ``name`` action of ``uuid`` is finished; return it
    and its events (event name -> result)."""
    def done() -> ContainerAction | None:
        found = [a for a in actions.list_actions(db, uuid) if a.action == name]
        if len(found) >= count and found[0].finish_time is not None:
            return found[0]
        return None

    action = wait_for(done, timeout, what=f"action {name} #{count} of {uuid} to finish")
    assert isinstance(action, ContainerAction)
    _, events = actions.get_action(db, uuid, action.request_id)
    return action, {e.event: e.result for e in events}


ROW_KEYS = ("status", "task_state", "memory", "cpu", "name", "image", "image_driver",
            "security_groups", "container_id", "auto_heal", "host")


def row_snapshot(db: Database, uuid: str) -> dict[str, Any]:
    row = containers.get_by_uuid(db, uuid)
    out = {k: getattr(row, k) for k in ROW_KEYS}
    out["actions"] = [(a.action, a.request_id) for a in actions.list_actions(db, uuid)]
    return out


def docker_snapshot(made: Made, uuid: str) -> dict[str, Any]:
    d = made.inspect(uuid)
    state, hc = d["State"], d["HostConfig"]
    return {"id": d["Id"], "status": state["Status"], "pid": state["Pid"],
            "started": state["StartedAt"], "paused": state["Paused"],
            "memory": hc["Memory"], "cpu_shares": hc["CpuShares"], "image": d["Config"]["Image"]}
