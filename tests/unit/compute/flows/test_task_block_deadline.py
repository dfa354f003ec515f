"""flows.common.task(): the task_state it sets carries a deadline, cleared with it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_runtime import FakeRuntime
from support.migrated_sqlite import migrated_url

from berth.common import exceptions as exc
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.flows import common
from berth.compute.states import TaskState
from berth.db import containers
from berth.db.base import utcnow
from berth.db.engine import Database


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    url = migrated_url(tmp_path)
    database = Database(url)
    yield database
    database.dispose()


def deps_with(db: Database, **settings: int) -> AgentDeps:
    return AgentDeps(db=db, runtime=FakeRuntime(), tracker=ResourceTracker(db, "n1"),
                     settings=AgentSettings(host="n1", **settings), capsules=DockerCapsules())


def seconds_left(deadline: dt.datetime | None) -> float:
    assert deadline is not None
    return (deadline - utcnow()).total_seconds()


def test_task_sets_a_deadline_and_clears_it_with_the_task(db: Database) -> None:
    deps = deps_with(db, task_state_timeout=600)
    uuid = containers.create(db, {"status": "Running"}).uuid
    with common.task(deps, uuid, TaskState.CONTAINER_STOPPING) as row:
        inside = containers.get_by_uuid(db, uuid)
        assert inside.task_state == TaskState.CONTAINER_STOPPING
        assert 590 < seconds_left(inside.task_deadline) <= 600
        assert row.task_deadline == inside.task_deadline
    after = containers.get_by_uuid(db, uuid)
    assert (after.task_state, after.task_deadline) == (None, None)


def test_create_like_tasks_get_the_create_timeout(db: Database) -> None:
    deps = deps_with(db, task_state_timeout=600, create_task_timeout=1800)
    uuid = containers.create(db, {"status": "Creating"}).uuid
    with common.task(deps, uuid, TaskState.CONTAINER_CREATING):
        assert 1790 < seconds_left(containers.get_by_uuid(db, uuid).task_deadline) <= 1800


def test_a_zero_timeout_means_no_deadline(db: Database) -> None:
    deps = deps_with(db, task_state_timeout=0)
    uuid = containers.create(db, {"status": "Running"}).uuid
    with common.task(deps, uuid, TaskState.CONTAINER_STOPPING):
        assert containers.get_by_uuid(db, uuid).task_deadline is None


def test_deadline_is_cleared_even_when_the_block_fails(db: Database) -> None:
    deps = deps_with(db)
    uuid = containers.create(db, {"status": "Running"}).uuid
    with pytest.raises(ValueError), common.task(deps, uuid, TaskState.CONTAINER_STOPPING):
        raise ValueError("boom")
    after = containers.get_by_uuid(db, uuid)
    assert (after.task_state, after.task_deadline) == (None, None)


def test_a_busy_container_keeps_the_other_tasks_deadline(db: Database) -> None:
    deps = deps_with(db)
    uuid = containers.create(db, {"status": "Running"}).uuid
    with common.task(deps, uuid, TaskState.CONTAINER_STOPPING):
        first = containers.get_by_uuid(db, uuid).task_deadline
        with pytest.raises(exc.TaskInProgress), \
                common.task(deps, uuid, TaskState.CONTAINER_STARTING):
            pass
        assert containers.get_by_uuid(db, uuid).task_deadline == first
