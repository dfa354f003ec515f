"""A real berth API over a real SQLite database, with a stand-in agent: the world the
OpenAPI fuzz and conformance tests (``tests/unit/api/test_openapi_*.py``) send their
cases to. The stand-in agent answers every RPC method (it never pulls, creates or runs
anything); the scheduler places everything on ``node1``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from berth.api.app import create_app
from berth.api.state import ApiSettings, ApiState
from berth.compute.manager import ComputeManager
from berth.db import capsules, containers, migrate, nodes
from berth.db.engine import Database
from berth.db.models import Base
from berth.rpc.client import ComputeAPI
from berth.rpc.inproc import InProcessTransport
from berth.scheduler.base import Selection

NODE = "node1"
HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"}
EXAMPLES = int(os.environ.get("BERTH_FUZZ_EXAMPLES", "25"))

#: What the stand-in agent answers to the calls whose answer the API reads.
ANSWERS: dict[str, Any] = {
    "container_logs": "", "container_top": {"Titles": [], "Processes": []},
    "container_stats": {}, "container_get_archive": ["", {}],
    "container_exec": {"output": "", "exit_code": 0, "exec_id": None},
    "container_commit": {"uuid": "0" * 32}, "image_search": [],
}


class Agent:
    RPC_METHODS = ComputeManager.RPC_METHODS

    def __getattr__(self, method: str) -> Any:
        if method not in self.RPC_METHODS:
            raise AttributeError(method)
        return lambda context, **kwargs: ANSWERS.get(method, kwargs.get("container"))


class Scheduler:
    def select_destination(self, spec: Any, exclude: frozenset[str] = frozenset()
                           ) -> Selection:
        return Selection(host=NODE)

    def room_check(self, selection: Any, spec: Any, *, best: bool = True,
                   lock: Any = None) -> Any:
        return lambda conn: None

    def holding(self, selection: Any, spec: Any) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def placed(self, selection: Any, spec: Any) -> None:
        return None


class World:
    def __init__(self, root: Path, settings: ApiSettings | None = None) -> None:
        migrate.upgrade(f"sqlite:///{root / 'berth.sqlite'}")
        self.db = Database(f"sqlite:///{root / 'berth.sqlite'}")
        self.transport = InProcessTransport(call_workers=2)
        self.server = self.transport.serve(NODE, Agent())
        self.server.start()
        nodes.report_service_up(self.db, NODE, nodes.COMPUTE_BINARY, "nova")
        compute = ComputeAPI(self.transport, lambda h: h == NODE, call_timeout=5)
        self.state = ApiState(db=self.db, compute=compute, scheduler=Scheduler(),  # type: ignore[arg-type]
                              settings=settings or ApiSettings())
        self.app = create_app(self.state)

    def container(self) -> str:
        """A fresh Running container on node1, so that no case depends on another."""
        row = containers.create(self.db, {
            "project_id": "admin", "user_id": "admin", "status": "Running",
            "host": NODE, "container_id": "f" * 64, "image": "busybox",
            "interactive": True})
        return str(row.uuid)

    def capsule(self) -> str:
        """A fresh Running capsule (with one member) on node1."""
        common = {"project_id": "admin", "user_id": "admin", "status": "Running",
                  "host": NODE, "image": "busybox"}
        row = capsules.create(self.db, {**common, "name": "fuzzed", "container_id": "e" * 64},
                              [{**common, "name": "a", "container_type": capsules.MEMBER,
                                "container_id": "d" * 64}])
        return str(row.uuid)

    def reset(self) -> None:
        """Every row a request may have made, removed (the node and its service
        kept): each stateful sequence starts from the same database, as Hypothesis
        expects when it replays one (an answer that changed with what an earlier
        sequence left, a 409 for a taken name, say, changes the steps it can take:
        FlakyStrategyDefinition)."""
        keep = {"zun_service", "compute_node", "alembic_version"}
        with self.db.writer() as s:
            for table in reversed(Base.metadata.sorted_tables):
                if table.name not in keep:
                    s.execute(table.delete())

    def close(self) -> None:
        self.server.stop()
        self.transport.cleanup()
        self.db.dispose()
