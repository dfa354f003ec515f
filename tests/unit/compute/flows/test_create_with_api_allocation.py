"""A create whose allocation the API wrote with the row (embedded Placement,
``berth.api.operations.placing.NodeAllocation``): the agent finds it and leaves it as it is
(no second allocation, no claim: the provider's generation does not move), and a
create that fails on the node (the engine refuses it) releases it. A real SQLite database and the
in-memory engine of tests/support/fake_runtime.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.agent_deps import agent_deps
from support.fake_runtime import FakeRuntime, ImageRuntime

from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import create
from berth.db import actions, containers, nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import container_resources
from berth.runtime import base as rt

HOST = "n1"
WANTS = container_resources(0.5, "64", None)


class RefusingRuntime(ImageRuntime):
    """An engine that refuses every create."""

    def create(self, spec: rt.ContainerSpec) -> str:
        raise rt.RuntimeDriverError("no space left on device")


def agent(db: Database, engine: FakeRuntime) -> AgentDeps:
    return agent_deps(db, engine, HOST, placement=EmbeddedPlacement(db))


@pytest.fixture
def provider(db: Database) -> str:
    node = nodes.upsert_compute_node(db, HOST, {"cpus": 4, "mem_total": 8192})
    ledger = EmbeddedPlacement(db)
    ledger.ensure_provider(node.uuid, HOST)
    ledger.set_inventory(node.uuid, {VCPU: Inventory(total=4), MEMORY_MB: Inventory(total=8192)})
    return node.uuid


def placed_by_the_api(db: Database, ctx: RequestContext, provider: str) -> str:
    """The row and its allocation, as the API's placement writes them."""
    uuid = containers.create(db, {"status": "Creating", "host": HOST, "project_id": "p1",
                                  "cpu": 0.5, "memory": "64", "image": "busybox",
                                  "image_pull_policy": "ifnotpresent"},
                             along=lambda u: [actions.new_action(ctx, u, "create")]).uuid
    EmbeddedPlacement(db).allocate(uuid, provider, WANTS, "p1", None)
    return uuid


@pytest.fixture
def roomy(db: Database) -> Iterator[AgentDeps]:
    d = agent(db, ImageRuntime())
    yield d
    d.overlap.shutdown(wait=True)


@pytest.fixture
def refusing(db: Database) -> Iterator[AgentDeps]:
    d = agent(db, RefusingRuntime())
    yield d
    d.overlap.shutdown(wait=True)


def test_the_agent_keeps_the_allocation_the_api_made(roomy: AgentDeps, provider: str) -> None:
    ctx = RequestContext.admin()
    uuid = placed_by_the_api(roomy.db, ctx, provider)
    ledger = EmbeddedPlacement(roomy.db)
    generation = ledger.get_provider(provider).generation    # type: ignore[union-attr]
    create.create_container(roomy, ctx, uuid, run=True)
    assert containers.get_by_uuid(roomy.db, uuid).status == "Running"
    assert ledger.get_allocation(uuid) == {provider: WANTS}
    assert ledger.get_provider(provider).generation == generation   # type: ignore[union-attr]


def test_a_create_the_engine_refuses_releases_the_api_allocation(
        refusing: AgentDeps, provider: str) -> None:
    ctx = RequestContext.admin()
    uuid = placed_by_the_api(refusing.db, ctx, provider)
    create.create_container(refusing, ctx, uuid, run=True)
    row = containers.get_by_uuid(refusing.db, uuid)
    assert row.status == "Error"
    assert "no space left on device" in (row.status_reason or "")
    assert EmbeddedPlacement(refusing.db).get_allocation(uuid) == {}
