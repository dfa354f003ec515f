"""Fixtures for the unit tests of the agent's state sync (``flows/sync.py``,
``periodic/sync_state.py``, ``periodic/cleanup.py``): a real SQLite database migrated
with Alembic, the in-memory engine of tests/support/fake_runtime.py counting its
inspects and listings, and a row factory. Prefixed ``sync_`` so that they never
shadow the ``db``/``deps`` fixtures other test modules define for themselves."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.agent_deps import agent_deps, node_database
from support.fake_runtime import FakeRuntime

from berth.compute.deps import AgentDeps
from berth.db import containers
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.base import RunState

SYNC_HOST = "node1"


class CountingRuntime(FakeRuntime):
    """FakeRuntime that records inspects and listings, and can set any state word."""

    def __init__(self) -> None:
        super().__init__()
        self.inspected: list[str] = []
        self.listed: list[str | None] = []

    def inspect(self, container_id: str) -> rt.RuntimeContainer:
        self.inspected.append(container_id)
        return super().inspect(container_id)

    def list(self, host: str | None = None) -> list[rt.RuntimeContainer]:
        self.listed.append(host)
        return super().list(host)

    def set_state(self, cid: str, status: RunState, **changes: Any) -> None:
        c = self.containers[cid]
        assert c.state is not None
        self.containers[cid] = replace(c, state=replace(c.state, status=status, **changes))


@pytest.fixture
def sync_db(tmp_path: Path) -> Iterator[Database]:
    yield from node_database(tmp_path, SYNC_HOST)


@pytest.fixture
def sync_engine() -> CountingRuntime:
    return CountingRuntime()


@pytest.fixture
def sync_deps(sync_db: Database, sync_engine: CountingRuntime) -> AgentDeps:
    return agent_deps(sync_db, sync_engine, SYNC_HOST)


RowFactory = Callable[..., Container]


@pytest.fixture
def sync_row(sync_db: Database, sync_engine: CountingRuntime) -> RowFactory:
    """``sync_row(status, run_state=None, host=SYNC_HOST, **columns)``: a row; with
    ``run_state``, also its container in the engine (labelled for ``host``)."""

    def make(status: str, run_state: RunState | None = None, host: str | None = SYNC_HOST,
             **extra: Any) -> Container:
        values: dict[str, Any] = dict(project_id="p1", status=status, host=host, cpu=0.5,
                                      memory="64", **extra)
        r = containers.create(sync_db, values)
        if run_state is not None:
            cid = sync_engine.add(r.uuid, host or SYNC_HOST, run_state)
            r = containers.update_(sync_db, r.uuid, {"container_id": cid})
        return r

    return make
