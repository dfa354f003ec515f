"""A ``delete --stop`` is two casts, container_stop then container_delete; the agent's
RPC server may hand them to the container's worker in either order (seen over
RabbitMQ under load: the delete first, refused by Docker, the row in Error). A delete
that finds the container running stops it first. A real SQLite database and the
in-memory engine of tests/support/fake_runtime.py, refusing as Docker does to remove a
running container without force."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.agent_deps import add_node, agent_deps
from support.fake_runtime import FakeRuntime

from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import delete, lifecycle
from berth.db import containers
from berth.db.engine import Database
from berth.runtime import base as rt

HOST = "n1"


class DockerRules(FakeRuntime):
    """Docker's 409: a running container is removed only with force."""

    def delete(self, container_id: str, force: bool = False) -> None:
        try:
            found = self._find(container_id)
        except rt.RuntimeNotFound:
            return
        if not force and found.state is not None and found.state.running:
            self.calls.append(("delete refused", container_id))
            raise rt.RuntimeConflict(reason="You cannot remove a running container")
        super().delete(container_id, force)


@pytest.fixture
def engine() -> DockerRules:
    return DockerRules()


@pytest.fixture
def deps(db: Database, engine: DockerRules) -> Iterator[AgentDeps]:
    add_node(db, HOST)
    d = agent_deps(db, engine, HOST)
    yield d
    d.overlap.shutdown(wait=True)


def test_a_delete_that_comes_before_its_stop_stops_the_container_then_removes_it(
        deps: AgentDeps, engine: DockerRules) -> None:
    ctx = RequestContext.admin()
    row = containers.create(deps.db, {"status": "Deleting", "host": HOST,
                                      "project_id": "p1"})
    cid = engine.add(row.uuid, HOST, rt.RunState.RUNNING)
    containers.update_(deps.db, row.uuid, {"container_id": cid})
    delete.delete_container(deps, ctx, row.uuid, force=False)
    assert containers.find_by_uuid(deps.db, row.uuid) is None
    assert engine.calls == [("delete refused", cid), ("stop", cid), ("delete", cid)]
    lifecycle.stop_container(deps, ctx, row.uuid, 10)      # the stop, late: nothing to do
    assert engine.calls[-1] == ("delete", cid)
