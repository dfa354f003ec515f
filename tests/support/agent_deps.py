"""An agent over a real database, for the unit tests of its flows and periodic tasks: a
migrated SQLite file holding one compute node (4 CPUs, 8192 MiB), and the ``AgentDeps``
of that node, whose tracker has the same capacity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import Capacity, ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import Placement
from berth.runtime.base import Runtime
from support.migrated_sqlite import migrated_url

HOST = "node1"


def add_node(db: Database, host: str = HOST) -> None:
    """Record the compute node ``host``: 4 CPUs, 8192 MiB."""
    nodes.upsert_compute_node(db, host, {"cpus": 4, "mem_total": 8192})


def node_database(tmp_path: Path, host: str = HOST) -> Iterator[Database]:
    """For a fixture to ``yield from``: a database on a fresh migrated SQLite file in
    ``tmp_path`` with the node ``host`` in it, disposed of afterwards."""
    database = Database(migrated_url(tmp_path))
    add_node(database, host)
    yield database
    database.dispose()


def agent_deps(db: Database, runtime: Runtime, host: str = HOST, *,
               placement: Placement | None = None, **settings: Any) -> AgentDeps:
    """The agent of node ``host``: a tracker with the node's capacity (4 CPUs, 8192 MiB)
    and ``AgentSettings(host=host, **settings)``."""
    tracker = ResourceTracker(db, host)
    tracker.set_capacity(Capacity(cpus=4.0, memory_mib=8192))
    return AgentDeps(db=db, runtime=runtime, tracker=tracker,
                     settings=AgentSettings(host=host, **settings), placement=placement,
                     capsules=DockerCapsules())
