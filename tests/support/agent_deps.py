"""An agent over a real database, for the unit tests of its flows and periodic tasks: a
migrated SQLite file holding one compute node (4 CPUs, 8192 MiB), and the ``AgentDeps``
of that node, whose tracker has the same capacity."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from berth.compute.agent import AgentConfig, ComputeAgent
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import Capacity, ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.periodic.inventory import InventorySettings
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import Placement
from berth.rpc.inproc import InProcessTransport
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


def unstarted_agent(db: Database, runtime: Runtime, host: str) -> Iterator[ComputeAgent]:
    """For a fixture to ``yield from``: the whole ``ComputeAgent`` of node ``host`` over
    the in-process transport, not started (no RPC server, PLEG or periodic tasks), its
    pools shut down afterwards."""
    transport = InProcessTransport(call_workers=1)
    config = AgentConfig(settings=AgentSettings(host=host),
                         inventory=InventorySettings(host=host))
    agent = ComputeAgent(config, db, runtime, transport)
    yield agent
    agent.workers.stop(wait=True)
    agent.sync_workers.stop(wait=True)
    agent.deps.overlap.shutdown(wait=True)
    transport.cleanup()
