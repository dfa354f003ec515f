"""The engine-container step (``berth.compute.steps.engine_container``) over a real
SQLite database and the in-memory engine of tests/support/fake_runtime.py: docker
create of the row's spec, removed by a release that is idempotent and safe without
acquire, nothing left by an engine failure (a clear refusal, or an unclear one after
which the engine made the container all the same), and the values recorded on the
row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.agent_deps import HOST, agent_deps, node_database
from support.fake_runtime import ImageRuntime

from berth.compute.deps import AgentDeps
from berth.compute.image_puller import pull_image
from berth.compute.steps.engine_container import EngineContainer, made_values
from berth.db import containers
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime import base as rt


class RefusingRuntime(ImageRuntime):
    """Refuses every create clearly: nothing made."""

    def create(self, spec: rt.ContainerSpec) -> str:
        raise rt.RuntimeInvalid("bad spec")


class TimingOutRuntime(ImageRuntime):
    """Makes the container, then fails unclearly (a time-out)."""

    def create(self, spec: rt.ContainerSpec) -> str:
        super().create(spec)
        raise rt.RuntimeDriverError("read timed out")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    yield from node_database(tmp_path)


def deps_with(db: Database, engine: ImageRuntime) -> AgentDeps:
    return agent_deps(db, engine)


def creating(deps: AgentDeps, **columns: object) -> Container:
    return containers.create(deps.db, {"status": "Creating", "project_id": "p1",
                                       "host": HOST, "image": "busybox",
                                       "image_pull_policy": "ifnotpresent", **columns})


def engine_of(deps: AgentDeps) -> ImageRuntime:
    assert isinstance(deps.runtime, ImageRuntime)
    return deps.runtime


def test_acquire_makes_the_container_and_release_removes_it_once(db: Database) -> None:
    deps = deps_with(db, ImageRuntime())
    row = creating(deps)
    step = EngineContainer(deps, row, pull_image(deps, row))
    step.release()                                   # without acquire: nothing
    step.acquire()
    assert step.container_id is not None
    made = deps.runtime.inspect(step.container_id)
    assert made.name == f"{rt.NAME_PREFIX}{row.uuid}"
    step.release()
    step.release()
    assert engine_of(deps).containers == {}


@pytest.mark.parametrize("engine", [RefusingRuntime(), TimingOutRuntime()],
                         ids=["clear refusal", "unclear failure"])
def test_a_failed_create_leaves_nothing_in_the_engine(db: Database, engine: ImageRuntime
                                                      ) -> None:
    deps = deps_with(db, engine)
    row = creating(deps)
    step = EngineContainer(deps, row, pull_image(deps, row))
    with pytest.raises(rt.RuntimeDriverError):
        step.acquire()
    assert engine.containers == {}
    assert step.container_id is None
    step.release()


def test_the_image_defaults_are_recorded_only_when_the_row_has_none(db: Database) -> None:
    deps = deps_with(db, ImageRuntime())
    row = creating(deps)
    image = pull_image(deps, row)                   # cmd ("sh",), no entrypoint
    assert made_values(row, image, "c1") == {"container_id": "c1", "image_driver": "docker",
                                             "command": ["sh"]}
    own = creating(deps, command=["sleep", "1"], image_driver="glance")
    assert made_values(own, image, "c2") == {"container_id": "c2", "image_driver": "glance"}
